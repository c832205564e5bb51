/**
 * Collectors retry a batch the store could not take (503) until it is taken, so a record the
 * engine refuses after ingest accepted it would poison its batch for ever. Batches of records
 * with hostile values at every known path: each is answered 200, every record accepted or
 * rejected on its own, and every accepted one is found by search.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS } from '../../flowstore/columns.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { seedTree } from '../../../test/kit/seed.js';

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

describe('ingest of hostile records', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it('takes or refuses each record on its own, and never fails a batch', async () => {
    const { token } = await enrolledCollector(t, tree, 'ingest-hostile');
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
        const res = await call(t.url, 'POST', '/collector/ingest/1.0/flows', { token, body: { batch_id: `hostile-${batches++}`, flows } });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
        expect(res.body.accepted + res.body.rejected.length).toBe(flows.length);
        accepted += res.body.accepted;
      }),
      { numRuns: 150, seed: 7 },
    );
    expect(accepted).toBeGreaterThan(0);
    // What was accepted is stored and searchable, wherever in storable time its @timestamp lies.
    const search = await call(t.url, 'POST', '/search/records/1.0', {
      token: tree.childACaller.token,
      body: { instance_ids: [tree.childA.id], module: 'flows', size: 1, start: { absolute: { date: '1970-01-01T00:00:00Z' } }, end: { absolute: { date: '2299-12-31T23:59:59Z' } } },
    });
    expect(search.status).toBe(200);
    expect(search.body[tree.childA.id].found).toBe(accepted);
  });
});
