import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { FLOWS_SORTING_KEY, createFlowsTableSql } from './ddl.js';
import { EGRESS_ROLLUPS, egressRollupDdl } from './egress-rollups.js';
import { TERMS_ROLLUP_PROJECTIONS } from './terms-rollups.js';
import type { FlowEngine } from './engine.js';
import { insertFlowBatch } from './ingest.js';
import { migrateFlowStore } from './schema.js';
import { searchRecords } from './search.js';
import { named, queryNameOf } from './sql.js';
import { sampleFlows } from './testkit/sample-flows.js';

const DAY_MS = 86_400_000;
const OLD_KEY = 'PRIMARY KEY (`customer_id`, `node_id`, `timestamp`)\nORDER BY (`customer_id`, `node_id`, `timestamp`, `id`)';

describe('flow store migration 4: tables sorted by node move to the time-first key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-rekey-'));
  const chdb = new ChdbEngine(dir);
  const now = Date.now();
  /** Runs once before the next statement of that name: an insert "during" the copy, a failure. */
  let hook: { name: string; run: () => Promise<void> } | undefined;
  const engine: FlowEngine = Object.create(chdb, {
    command: {
      value: async (sql: string, params?: Record<string, unknown>, opts?: object) => {
        if (hook && queryNameOf(sql) === hook.name) {
          const { run } = hook;
          hook = undefined;
          await run();
        }
        return chdb.command(sql, params, opts);
      },
    },
  });
  const tables = () =>
    query<{ name: string; sorting_key: string }>(
      "SELECT name, sorting_key FROM system.tables WHERE database = currentDatabase() AND name LIKE 'flows%' ORDER BY name",
    );
  const query = <T>(sql: string) => engine.query<T>(named('flowstore:test.rekey', sql), {});
  const everything = () => query<{ customer_id: string; id: string; source: string }>('SELECT customer_id, id, source FROM flows ORDER BY customer_id, id');

  beforeAll(async () => {
    // The table as the versions before migration 4 created it, with rows in two day partitions.
    const ddl = createFlowsTableSql(30);
    await engine.command(ddl.replace('PRIMARY KEY (`customer_id`, `timestamp`)\nORDER BY (`customer_id`, `timestamp`, `id`)', OLD_KEY));
    for (const sql of egressRollupDdl('flows')) await engine.command(sql);
    for (const [i, customerId] of ['c-one', 'c-two'].entries()) {
      for (const day of [0, 1]) {
        await insertFlowBatch(engine, { customerId, nodeId: `n${day}`, batchId: `b${day}`, flows: sampleFlows(40, 7 + i * 2 + day, now - day * DAY_MS) });
      }
    }
  });
  afterAll(async () => {
    await chdb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies every record, keeps the rollups, and takes the old name; keeps inserts that land during the copy; a failed copy changes nothing', async () => {
    const before = await everything();
    const [{ key }] = await query<{ key: string }>("SELECT sorting_key AS key FROM system.tables WHERE database = currentDatabase() AND name = 'flows'");
    expect(key).toBe('customer_id, node_id, timestamp, id');

    // A copy that fails leaves the table as it was, and no copy behind.
    hook = { name: 'flowstore:rekey.copy', run: () => Promise.reject(new Error('disk full')) };
    await expect(migrateFlowStore(engine)).rejects.toThrow('disk full');
    expect(await tables()).toEqual([{ name: 'flows', sorting_key: key }]);
    expect(await everything()).toEqual(before);

    const late = sampleFlows(3, 99, now);
    hook = {
      name: 'flowstore:rekey.exchange',
      run: async () => {
        await insertFlowBatch(engine, { customerId: 'c-one', nodeId: 'n9', batchId: 'late', flows: late });
      },
    };
    const report = await migrateFlowStore(engine);
    expect(report.applied).toContain(4);
    expect(hook).toBeUndefined();
    expect(await tables()).toEqual([{ name: 'flows', sorting_key: FLOWS_SORTING_KEY }]);
    const after = await everything();
    expect(after.length).toBe(before.length + late.length);
    expect(after.filter((r) => !before.some((b) => b.id === r.id))).toHaveLength(late.length);
    expect(after.filter((r) => before.some((b) => b.id === r.id))).toEqual(before);

    const projections = await query<{ name: string }>(
      "SELECT name FROM system.projections WHERE database = currentDatabase() AND table = 'flows' ORDER BY name",
    );
    const egress = Object.values(EGRESS_ROLLUPS).map((r) => r.name);
    // The terms rollups come with a later migration (6), which builds them in the background.
    expect(projections.map((p) => p.name)).toEqual([...egress, ...TERMS_ROLLUP_PROJECTIONS].sort());
    // Built as the rows were copied, not left to a later mutation.
    const built = await query<{ name: string }>(
      "SELECT DISTINCT name FROM system.projection_parts WHERE database = currentDatabase() AND table = 'flows' AND active ORDER BY name",
    );
    expect(built.filter((p) => egress.includes(p.name)).map((p) => p.name)).toEqual(egress.sort());
  });

  it('serves searches in time order from the new key, read from its end, and a second start changes nothing', async () => {
    let statement: { sql: string; params: Record<string, unknown> } | undefined;
    const spy: FlowEngine = Object.create(engine, {
      queryLines: { value: (...args: Parameters<FlowEngine['queryLines']>) => ((statement = { sql: args[0], params: args[1] }), engine.queryLines(...args)) },
    });
    const res = await searchRecords(spy, {
      customerIds: ['c-two'],
      sentence: 'dst.port gt 0',
      start: { relative: { value: 2, unit: 'days' } },
      size: 100,
      fields: ['@timestamp'],
    });
    const times = res['c-two']!.flows.map((f) => f['@timestamp'] as number);
    expect(times.length).toBeGreaterThan(0);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // The page is the table's own order read backwards, not a sort of the window.
    const plan = await engine.queryLines(statement!.sql.replace('*/', '*/ EXPLAIN actions = 1'), statement!.params);
    expect(plan.toString()).toMatch(/Read type: InReverseOrder/);
    expect(await migrateFlowStore(engine)).toMatchObject({ applied: [] });
  });
});
