import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../errors.js';
import { convertFlows } from '../../flowstore/ingest-convert.js';
import { flowRowsBlock } from '../../flowstore/ingest-rows.js';
import { atOnce } from '../../flowstore/turns.js';
import { IngestWorkers } from './ingest-workers.js';
import { MAX_JSON_BYTES } from './ingest-limits.js';

const workers = new IngestWorkers(2);
afterAll(() => workers.close());

const NOW = Date.now();
const stamp = { customerId: 'c1', nodeId: 'n1', batchId: 'b1', ingestTimeMs: NOW };
const window = { retentionDays: 30, nowMs: NOW };
const flows = [
  { '@timestamp': NOW - 1000, app_name: 'dns', src: { ip: '10.0.0.1', port: 5353 } },
  { '@timestamp': NOW - 86_400_000, app_name: 'tls' },
  { '@timestamp': 'yesterday' },
  42,
  { '@timestamp': NOW - 40 * 86_400_000 },
];
const body = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('the ingest workers', () => {
  it('check and encode a batch as this thread would, a block per day', async () => {
    const parsed = await workers.parse(gzipSync(body({ batch_id: 'b1', node_id: 'n9', flows })), { gzip: true, format: 'json' });
    expect(parsed.envelope).toEqual({ batch_id: 'b1', node_id: 'n9', flows: 5 });
    const { rejected, batch } = await parsed.prepare(stamp, window, 'c1:n1:b1');
    const here = atOnce(convertFlows(stamp, flows, window));
    expect(rejected).toEqual(here.rejected);
    expect(rejected.map((r) => r.index)).toEqual([2, 3, 4]);
    expect(batch.slices.map(({ block: _block, ...slice }) => slice)).toEqual(here.days);
    for (const slice of batch.slices) expect(slice.block.equals(flowRowsBlock(slice.indexes.map((i) => here.rows[i]!)))).toBe(true);
    // Some of the records again, from the text the worker kept.
    expect((await batch.encode([1])).equals(flowRowsBlock([here.rows[1]!]))).toBe(true);
    parsed.release();
    parsed.release();
    await expect(batch.encode([1])).rejects.toThrow(/no batch/);
  });

  it('tell the kinds of the envelope fields as sent', async () => {
    const parsed = await workers.parse(body({ batch_id: 7, node_id: { id: 'x' }, flows: 'none' }), { gzip: false, format: 'json' });
    expect(parsed.envelope).toEqual({ batch_id: false, node_id: false, flows: 'not_array' });
    parsed.release();
    expect((await workers.parse(body({}), { gzip: false, format: 'json' })).envelope).toEqual({ batch_id: undefined, node_id: undefined, flows: 'absent' });
  });

  it('refuse a body that is not a batch, as the HTTP layer would', async () => {
    const refusal = (b: Buffer, gzip: boolean) =>
      workers.parse(b, { gzip, format: 'json' }).then(
        () => undefined,
        (e: unknown) => e as DomainError,
      );
    expect(await refusal(Buffer.from('not gzip'), true)).toMatchObject({ status: 400, code: 'invalid_encoding' });
    expect(await refusal(Buffer.from('{"flows": ['), false)).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(await refusal(Buffer.from('[1, 2]'), false)).toMatchObject({ status: 400, code: 'invalid_json' });
    // A gzip bomb: a few hundred kilobytes that would be more than the limit once decompressed.
    const bomb = gzipSync(Buffer.alloc(MAX_JSON_BYTES + 1, 32));
    const refused = await refusal(bomb, true);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ status: 413 });
  });

  it('start again after they were closed', async () => {
    await workers.close();
    const parsed = await workers.parse(body({ batch_id: 'again', flows: [] }), { gzip: false, format: 'json' });
    expect(parsed.envelope.flows).toBe(0);
    parsed.release();
  });
});
