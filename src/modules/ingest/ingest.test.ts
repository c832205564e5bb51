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
  null, true, 0, -1, 1.5, -0, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308,
  '', 'x'.repeat(70_000), '\u0000', '\ud800', 'a\udc00b', '😀', 'NaN', '1e400', '999.1.1.1', '::ffff:1.2.3.4', '10.0.0.0/8', '2025-13-45T00:00:00Z',
  [], [null], ['x', '\ud800'], [1, 'a'], {}, { a: 1, '\ud800': '\ud800' },
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

  it('stores a batch stamped with the node\'s tenant, once, and marks ingest up', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-1');
    const flows = [flow(1), flow(2, { meta: { customer_id: 'cus_someone_else', tags: ['x'] } })];
    const res = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'b-1', flows } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ batch_id: 'b-1', node_id: nodeId, accepted: 2, rejected: [] });
    const again = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'b-1', flows } });
    expect(again.body.accepted).toBe(2);
    expect(await countFlows(t, nodeId)).toBe(2);
    const stored = await t.app.flows.query<{ customer_id: string }>('/* test_rows */ SELECT DISTINCT customer_id FROM flows WHERE node_id = {n:String}', { n: nodeId });
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

  // Collectors retry a batch the store could not take (503) until it is taken, so a record the
  // engine refused after ingest accepted it would poison its batch for ever.
  it('takes or refuses each record on its own, and never fails a batch', async () => {
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-hostile');
    const paths = COLUMNS.filter((c) => c.role === 'leaf').map((c) => c.path);
    let batches = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...HOSTILE)), { maxLength: 4 }), { minLength: 1, maxLength: 20 }), async (records) => {
        const flows = records.map((sets, i) => {
          const record: Record<string, any> = flow(i);
          for (const [path, value] of sets) setPath(record, path, value);
          return record;
        });
        const res = await call(t.url, 'POST', PATH, { token, body: { batch_id: `hostile-${batches++}`, flows } });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
        expect(res.body.accepted + res.body.rejected.length).toBe(flows.length);
        accepted += res.body.accepted;
      }),
      { numRuns: 150, seed: 7 },
    );
    expect(accepted).toBeGreaterThan(0);
    expect(await countFlows(t, nodeId)).toBe(accepted);
  });
});
