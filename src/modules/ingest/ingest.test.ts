import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS } from '../../flowstore/columns.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { countFlows, enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { call } from '../../../test/kit/http.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';

const PATH = '/collector/ingest/1.0/flows';

const HOSTILE: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  -0,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
  '',
  'x'.repeat(70_000),
  '\u0000',
  '\ud800',
  'a\udc00b',
  '😀',
  'NaN',
  '1e400',
  '999.1.1.1',
  '::ffff:1.2.3.4',
  '10.0.0.0/8',
  '2025-13-45T00:00:00Z',
  [],
  [null],
  ['x', '\ud800'],
  [1, 'a'],
  {},
  { a: 1, '\ud800': '\ud800' },
];

function setPath(record: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = record;
  for (const key of keys.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null || Array.isArray(at[key])) at[key] = {};
    at = at[key];
  }
  at[keys.at(-1)!] = value;
}

describe('telemetry ingest', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it("stores a batch stamped with the node's tenant, once, and marks ingest up", async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-1');
    const flows = [flow(1), flow(2, { meta: { customer_id: 'cus_someone_else', tags: ['x'] } })];
    const res = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'b-1', flows } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ batch_id: 'b-1', node_id: nodeId, accepted: 2, rejected: [] });
    const again = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'b-1', flows } });
    expect(again.body.accepted).toBe(2);
    expect(await countFlows(t, nodeId)).toBe(2);
    const stored = await t.app.flows.query<{ customer_id: string }>('/* test_rows */ SELECT DISTINCT customer_id FROM flows WHERE node_id = {n:String}', {
      n: nodeId,
    });
    expect(stored).toEqual([{ customer_id: tree.childA.id }]);
    const node = await call(t.url, 'GET', `/rest/nodes/1.0/${nodeId}`, { token: tree.mspCaller.token });
    expect(node.body.connection.ingest).toBe(true);
  });

  it('rejects bad records one by one and stores the rest', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-bad');
    const res = await call(t.url, 'POST', PATH, {
      token,
      body: { batch_id: 'b-bad', flows: [flow(1), 42, flow(3, { src: { port: 'not-a-port' } }), { no: 'timestamp' }, flow(5)] },
    });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect(res.body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2, 3]);
    expect(res.body.rejected[1].error).toContain('src.port');
    expect(await countFlows(t, nodeId)).toBe(2);
  });

  it('accepts gzip bodies', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-gzip');
    const body = gzipSync(JSON.stringify({ batch_id: 'gz', flows: [flow(1), flow(2), flow(3)] }));
    const res = await call(t.url, 'POST', PATH, { token, rawBody: body, headers: { 'content-encoding': 'gzip' } });
    expect(res.body.accepted).toBe(3);
    expect(await countFlows(t, nodeId)).toBe(3);
    const broken = await call(t.url, 'POST', PATH, { token, rawBody: Buffer.from('not gzip'), headers: { 'content-encoding': 'gzip' } });
    expect(broken.status).toBe(400);
  });

  it.each([
    ['no batch_id', { flows: [] }, 400, 'missing_required_fields'],
    ['no flows', { batch_id: 'x' }, 400, 'missing_required_fields'],
    ['flows not an array', { batch_id: 'x', flows: {} }, 400, 'invalid_request'],
    ['empty batch_id', { batch_id: '', flows: [] }, 400, 'invalid_request'],
    ['batch_id with spaces', { batch_id: 'id with spaces', flows: [] }, 400, 'invalid_request'],
    ['10,001 flows', { batch_id: 'x', flows: Array.from({ length: 10_001 }, () => ({})) }, 413, 'batch_too_large'],
  ])('answers %s with %i', async (name, body, status, code) => {
    const { token } = await enrolledCollector(t, tree, `ingest-v-${name.replace(/\W/g, '')}`);
    const res = await call(t.url, 'POST', PATH, { token, body });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  it('checks the token, the scope, and that the credential has a node', async () => {
    expect((await call(t.url, 'POST', PATH, { body: { batch_id: 'x', flows: [] } })).status).toBe(401);
    const nodeApiOnly = await seedCaller(t.app, tree.childA.id, ['p.token.scope.node_api']);
    const noScope = await call(t.url, 'POST', PATH, { token: nodeApiOnly.token, body: { batch_id: 'x', flows: [] } });
    expect(noScope.status).toBe(403);
    const ingestOnly = await seedCaller(t.app, tree.childA.id, ['p.token.scope.ingest']);
    const noNode = await call(t.url, 'POST', PATH, { token: ingestOnly.token, body: { batch_id: 'x', flows: [flow(1)] } });
    expect(noNode.status).toBe(403);
    const { nodeId } = await enrolledCollector(t, tree, 'ingest-owned');
    const foreign = await seedCaller(t.app, tree.childB.id, ['p.token.scope.ingest']);
    const elsewhere = await call(t.url, 'POST', PATH, { token: foreign.token, body: { batch_id: 'x', node_id: nodeId, flows: [flow(1)] } });
    expect(elsewhere.status).toBe(403);
  });

  // Records that failed their whole batch with a 503 for ever, each now refused on its own.
  describe('refuses on its own, and stores the rest of the batch', () => {
    const rejectedOf = (body: { rejected: { index: number; error: string }[] }) => Object.fromEntries(body.rejected.map((r) => [r.index, r.error]));

    it('a record nested deeper than 64 levels (JSON.stringify threw a RangeError at 5,000)', async () => {
      const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-deep');
      const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const at = (i: number) => JSON.stringify(flow(i)).slice(0, -1);
      // Sent as text: the test's own JSON.stringify cannot write 5,000 levels either.
      const flows = [
        JSON.stringify(flow(0)),
        `{"@timestamp":${Date.now()},"x":${nested(5_000)}}`,
        `${at(2)},"src":{"ip":${nested(5_000)}}}`,
        `${at(3)},"y":${nested(63)}}`, // 64 levels with the record: the limit
        `${at(4)},"y":${nested(64)}}`,
      ];
      const res = await call(t.url, 'POST', PATH, { token, rawBody: `{"batch_id":"deep","flows":[${flows.join(',')}]}` });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body.accepted).toBe(2);
      expect(rejectedOf(res.body)).toEqual({
        1: expect.stringMatching(/^flow #1: x(\[0\])+…: nests deeper than 64 levels$/),
        2: expect.stringMatching(/^flow #2: src\.ip(\[0\])+…: nests deeper than 64 levels$/),
        4: expect.stringMatching(/^flow #4: y(\[0\])+…: nests deeper than 64 levels$/),
      });
      expect(await countFlows(t, nodeId)).toBe(2);
    });

    it('a record outside the retention (or a day ahead), in a batch over more than 100 days', async () => {
      const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-days');
      const now = Date.now();
      // 101 days made one insert over 101 day partitions, which ClickHouse refused whole (code 252).
      const flows = Array.from({ length: 101 }, (_, i) => flow(i, { '@timestamp': now - i * 86_400_000 }));
      flows.push(flow(101, { '@timestamp': now + 2 * 86_400_000 }), flow(102, { '@timestamp': now + 3_600_000 }));
      const res = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'days', flows } });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      // The test app keeps 30 days: a record 30 days old is deleted as it is inserted.
      expect(res.body.accepted).toBe(31);
      expect(res.body.rejected.map((r: { index: number }) => r.index)).toEqual([...Array.from({ length: 71 }, (_, i) => 30 + i), 101]);
      expect(rejectedOf(res.body)[30]).toMatch(/^flow #30: @timestamp: \S+ is older than the flow store's retention of 30 days/);
      expect(rejectedOf(res.body)[101]).toMatch(/^flow #101: @timestamp: \S+ is more than 24 hours ahead of the server's clock$/);
      expect(await countFlows(t, nodeId)).toBe(31);
    });

    it('a number beyond ±1.8e308, which JSON.parse reads as Infinity (stored as 0)', async () => {
      const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-infinite');
      const at = (i: number) => JSON.stringify(flow(i)).slice(0, -1);
      const flows = [
        JSON.stringify(flow(0)),
        `${at(1)},"src":{"ip":"10.0.0.1","ctx":{"vector":[0.5,1e400]}}}`,
        `${at(2)},"extra":{"score":-1e400}}`,
        `${at(3)},"src":{"ip":"10.0.0.3","ctx":{"vector":[0.5,1e308]}}}`,
      ];
      const res = await call(t.url, 'POST', PATH, { token, rawBody: `{"batch_id":"infinite","flows":[${flows.join(',')}]}` });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body.accepted).toBe(2);
      expect(rejectedOf(res.body)).toEqual({
        1: 'flow #1: src.ctx.vector[1]: expected a finite number, got a number beyond ±1.8e308',
        2: 'flow #2: extra.score: expected a finite number, got a number beyond ±1.8e308',
      });
      expect(await countFlows(t, nodeId)).toBe(2);
    });
  });

  // Collectors retry a batch the store could not take (503) until it is taken, so a record the
  // engine refused after ingest accepted it would poison its batch for ever.
  it('takes or refuses each record on its own, and never fails a batch', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-hostile');
    const paths = COLUMNS.filter((c) => c.role === 'leaf').map((c) => c.path);
    let batches = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...HOSTILE)), { maxLength: 4 }), { minLength: 1, maxLength: 20 }),
        async (records) => {
          const flows = records.map((sets, i) => {
            const record: Record<string, any> = flow(i);
            for (const [path, value] of sets) setPath(record, path, value);
            return record;
          });
          const res = await call(t.url, 'POST', PATH, { token, body: { batch_id: `hostile-${batches++}`, flows } });
          expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
          expect(res.body.accepted + res.body.rejected.length).toBe(flows.length);
          accepted += res.body.accepted;
        },
      ),
      { numRuns: 150, seed: 7 },
    );
    expect(accepted).toBeGreaterThan(0);
    expect(await countFlows(t, nodeId)).toBe(accepted);
  }, 180_000);
});
