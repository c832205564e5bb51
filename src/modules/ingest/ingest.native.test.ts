/**
 * Batches sent as one ClickHouse Native block (docs/collector-protocol.md 4.1), through HTTP into
 * the store: the same records as their JSON batch, stored once per batch id, and every refusal in
 * the documented shape.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NATIVE_BATCH_CONTENT_TYPE } from '../../flowstore/native-batch.js';
import { encodeNativeBlock, nativeLayout } from '../../flowstore/native-block.js';
import { sampleFlows } from '../../flowstore/testkit/sample-flows.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { countFlows, enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { seedTree } from '../../../test/kit/seed.js';
import { encodeNativeBatch } from '../../../tools/collector/native-batch.js';
import { MAX_FLOWS_PER_BATCH } from './ingest-limits.js';

const PATH = '/collector/ingest/1.0/flows';
/** Records as the reference collector sends them in a Native batch. */
const nativeBatchOf = (records: readonly unknown[]) => encodeNativeBatch(records)!;

describe('Native ingest batches', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  const postNative = (token: string, body: Buffer, headers: Record<string, string>) =>
    call(t.url, 'POST', PATH, { token, rawBody: body, headers: { 'content-type': NATIVE_BATCH_CONTENT_TYPE, ...headers } });

  /** A node's stored records, oldest first, without the ingest time each batch stamps. */
  async function storedRecords(nodeId: string) {
    const rows = await t.app.flows.query<{ source: string }>(
      '/* test_sources */ SELECT source FROM flows FINAL WHERE node_id = {n:String} ORDER BY timestamp, source',
      { n: nodeId },
    );
    return rows.map((row) => {
      const record = JSON.parse(row.source);
      delete record.meta['@ingest_time'];
      return record;
    });
  }

  it('stores the records of a gzipped Native batch as their JSON batch does, once per batch id', async () => {
    const records = sampleFlows(300, 5, Date.now());
    const jsonNode = await enrolledCollector(t, tree, 'native-json');
    const nativeNode = await enrolledCollector(t, tree, 'native-native');
    const json = await call(t.url, 'POST', PATH, { token: jsonNode.token, body: { batch_id: 'j-1', flows: records } });
    expect(json.status).toBe(200);
    const body = gzipSync(nativeBatchOf(records));
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await postNative(nativeNode.token, body, { 'content-encoding': 'gzip', 'x-batch-id': 'n-1' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ batch_id: 'n-1', node_id: nativeNode.nodeId, accepted: json.body.accepted, rejected: json.body.rejected });
    }
    expect(await countFlows(t, nativeNode.nodeId)).toBe(json.body.accepted);
    expect(await storedRecords(nativeNode.nodeId)).toEqual(await storedRecords(jsonNode.nodeId));
  });

  it('answers each refused record by index, and stores the others', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'native-rejects');
    const records = [flow(1), flow(2, { dst: { port: 70_000 } }), flow(3, { '@timestamp': Date.now() + 3 * 86_400_000 })];
    const res = await postNative(token, nativeBatchOf(records), { 'x-batch-id': 'r-1' });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected.map((r: { index: number; error: string }) => r.error)).toEqual([
      'flow #1: dst.port: expected an integer in [0, 65535], got 70000',
      expect.stringMatching(/^flow #2: @timestamp: .* is more than 24 hours ahead of the server's clock$/),
    ]);
    expect(await countFlows(t, nodeId)).toBe(1);
  });

  it('refuses a batch without its id, a malformed block and too many records, in the documented shape', async () => {
    const { token } = await enrolledCollector(t, tree, 'native-refusals');
    const noId = await postNative(token, nativeBatchOf([flow(1)]), {});
    expect(noId.status).toBe(400);
    expect(noId.body).toMatchObject({ error: 'missing_required_fields', message: 'Missing required fields: X-Batch-Id' });

    const cut = nativeBatchOf([flow(1)]);
    const malformed = await postNative(token, cut.subarray(0, cut.length - 3), { 'x-batch-id': 'm-1' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/^Native batch: the block ends inside column /) });

    const timestamp = { name: '@timestamp', type: 'Int64' };
    const portAsText = encodeNativeBlock(nativeLayout([timestamp, { name: 'dst.port', type: 'String' }]), [[Date.now(), '443']]);
    const wrongType = await postNative(token, portAsText, { 'x-batch-id': 'm-2' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toBe('Native batch: column dst.port: int fields do not take String (docs/collector-protocol.md 4.1)');

    const badId = await postNative(token, nativeBatchOf([flow(1)]), { 'x-batch-id': 'has space' });
    expect(badId.status).toBe(400);
    expect(badId.body.message).toMatch(/batch_id must be 1-128 printable ASCII characters/);

    const many = Array.from({ length: MAX_FLOWS_PER_BATCH + 1 }, (_, i) => [Date.now() - i]);
    const tooMany = await postNative(token, encodeNativeBlock(nativeLayout([timestamp]), many), { 'x-batch-id': 'm-3' });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.error).toBe('batch_too_large');

    const notGzip = await postNative(token, nativeBatchOf([flow(1)]), { 'x-batch-id': 'm-4', 'content-encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    expect(notGzip.body.error).toBe('invalid_encoding');
  });
});
