import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlowGenerator } from '../../tools/collector/flowgen/index.js';
import { ChdbEngine } from './chdb-engine.js';
import { EGRESS_ROLLUPS, egressRows, type Rollup } from './egress-rollups.js';
import { insertFlowBatch } from './ingest.js';
import { flowToRow, insertFlowRows } from './ingest-rows.js';
import { migrateFlowStore, waitForMutations } from './schema.js';
import { named, ParamBag } from './sql.js';
import { startFlowsRemoval } from './tenant-data.js';

const HOUR = 3_600_000;

describe('egress rollups', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egress-rollups-'));
  const engine = new ChdbEngine(dir);
  beforeAll(() => migrateFlowStore(engine));
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** 300 egress flows a minute apart from `start`, to four organizations the collector names and to addresses it names none for. */
  async function insertOrgFlows(customerId: string, start: number) {
    const flows = Array.from({ length: 300 }, (_, i) => ({
      '@timestamp': start + i * 60_000,
      src: { ip: `10.0.0.${i % 7}`, address_type: 'private' },
      dst: { ip: `203.0.113.${i % 11}`, address_type: 'public', ...(i % 3 ? { ctx: { organization: `Org ${i % 4}` } } : {}) },
    }));
    await insertFlowBatch(engine, { customerId, nodeId: 'n1', batchId: 'b', flows });
  }

  const perOrg = (settings: string) =>
    engine.query<{ org: string | null; n: number }>(
      named(
        'flowstore:test.per_org',
        `SELECT collector_org AS org, count() AS n FROM flows WHERE customer_id IN ('t1', 't2') AND is_egress = 1 GROUP BY org ORDER BY org SETTINGS ${settings}`,
      ),
      {},
    );

  it('are built by the migration for the parts written before them, which are read row by row meanwhile', async () => {
    await migrateFlowStore(engine);
    for (const r of Object.values(EGRESS_ROLLUPS)) await engine.command(named('flowstore:test.drop_projection', `ALTER TABLE flows DROP PROJECTION ${r.name}`));
    await engine.command(named('flowstore:test.forget_migration', 'DELETE FROM schema_migrations WHERE version = 3'));
    for (const c of ['t1', 't2']) await insertOrgFlows(c, Date.now() - 6 * HOUR);
    const rows = await perOrg('optimize_use_projections = 0');
    expect(rows.map((r) => r.org)).toEqual(['Org 0', 'Org 1', 'Org 2', 'Org 3', null]);

    expect((await migrateFlowStore(engine)).applied).toEqual([3]);
    // Until the background build reaches a part, that part is read row by row.
    expect(await perOrg('optimize_use_projections = 1')).toEqual(rows);
    for (let i = 0; i < 600; i++) {
      const [pending] = await engine.query<{ n: number }>(
        named('flowstore:test.mutations', "SELECT count() AS n FROM system.mutations WHERE table = 'flows' AND NOT is_done"),
        {},
      );
      if (Number(pending!.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await perOrg("force_optimize_projection_name = 'egress_sources'")).toEqual(rows);
    const built = await engine.query<{ name: string; parts: number }>(
      named(
        'flowstore:test.projection_parts',
        "SELECT name, count() AS parts FROM system.projection_parts WHERE table = 'flows' AND active GROUP BY name ORDER BY name",
      ),
      {},
    );
    const parts = await engine.query<{ n: number }>(
      named('flowstore:test.parts', "SELECT count() AS n FROM system.parts WHERE table = 'flows' AND active"),
      {},
    );
    const egress = Object.values(EGRESS_ROLLUPS).map((r) => r.name);
    expect(built.filter((b) => egress.includes(b.name))).toEqual(
      egress.map((name) => ({ name, parts: parts[0]!.n })).sort((a, b) => a.name.localeCompare(b.name)),
    );
  }, 120_000);

  it('reads exactly the window: whole hours from the rollup, the ends from the rows', async () => {
    const lo = Date.now() - 6 * HOUR;
    const hi = lo + 299 * 60_000;
    await insertOrgFlows('w1', lo);
    const hour = Math.floor(lo / HOUR) * HOUR;
    // Aligned, ragged at both ends, inside one hour, one millisecond, and a filter with an OR in it.
    const windows = [
      [hour, hour + 2 * HOUR - 1],
      [lo + 12_345, hi - 6_789],
      [hour + 600_000, hour + 1_200_000],
      [lo + 7_000, lo + 7_000],
    ] as const;
    for (const [startMs, endMs] of windows) {
      for (const where of [undefined, "(collector_org = 'Org 1' OR collector_org IS NULL)"]) {
        const p = new ParamBag();
        const rows = egressRows(EGRESS_ROLLUPS.sources, { customerIds: ['w1'], startMs, endMs }, p, { keys: [], values: ['n'], ...(where ? { where } : {}) });
        const [rolled] = await engine.query<{ n: number }>(named('flowstore:test.rolled', `SELECT sum(n) AS n FROM ${rows}`), p.values);
        const [counted] = await engine.query<{ n: number }>(
          named(
            'flowstore:test.counted',
            `SELECT count() AS n FROM flows WHERE customer_id = 'w1' AND is_egress = 1 AND toUnixTimestamp64Milli(timestamp) BETWEEN {s:Int64} AND {e:Int64}${where ? ` AND ${where}` : ''}`,
          ),
          { s: startMs, e: endMs },
        );
        expect([startMs, endMs, where, Number(rolled!.n)]).toEqual([startMs, endMs, where, Number(counted!.n)]);
      }
    }
  });

  /**
   * A rollup's stored rows (read from the projection itself, merged per key) next to the same
   * GROUP BY over the rows, projections off; both sorted, lists of flow times sorted, and floats
   * rounded (sums taken in another order differ in the last bits).
   */
  async function storedAndSummed(r: Rollup): Promise<[unknown[], unknown[]]> {
    const described = await engine.query<{ name: string; type: string }>(
      named('flowstore:test.describe_projection', 'DESCRIBE mergeTreeProjection(currentDatabase(), {table:String}, {name:String})'),
      { table: 'flows', name: r.name },
    );
    const keys = Object.values(r.keys);
    const values = Object.values(r.values);
    const ordered = (sql: string) => (/^groupArray(Merge)?\(/.test(sql) ? `arraySort(${sql})` : sql);
    const stored = described.map((c, i) => {
      const column = `\`${c.name.replace(/`/g, '\\`')}\``;
      return i < keys.length ? `${column} AS k${i}` : `${ordered(`${/^AggregateFunction\((\w+)/.exec(c.type)![1]}Merge(${column})`)} AS v${i - keys.length}`;
    });
    const summed = [...keys.map((k, i) => `${k} AS k${i}`), ...values.map((v, i) => `${ordered(v)} AS v${i}`)];
    const groupBy = keys.map((_, i) => `k${i}`).join(', ');
    const read = (columns: string[], from: string, settings: string) =>
      engine.query<Record<string, unknown>>(
        named('flowstore:test.rollup_rows', `SELECT ${columns.join(', ')} FROM ${from} GROUP BY ${groupBy} ORDER BY ${groupBy} SETTINGS ${settings}`),
        {
          table: 'flows',
          name: r.name,
        },
      );
    const tidy = (v: unknown): unknown => (Array.isArray(v) ? v.map(tidy) : typeof v === 'number' ? Number(v.toPrecision(12)) : v);
    const normalize = (rows: Record<string, unknown>[]) => rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, tidy(v)])));
    return [
      normalize(await read(stored, 'mergeTreeProjection(currentDatabase(), {table:String}, {name:String})', 'output_format_json_quote_64bit_integers = 0')),
      normalize(await read(summed, 'flows WHERE is_egress = 1', 'optimize_use_projections = 0')),
    ];
  }

  async function expectRollupsMatchRows() {
    for (const r of Object.values(EGRESS_ROLLUPS)) {
      const [stored, summed] = await storedAndSummed(r);
      expect(stored.length, r.name).toBeGreaterThan(0);
      expect(stored, r.name).toEqual(summed);
    }
  }

  it('hold what the rows hold, after late, repeated and re-sent batches, merges and a tenant deletion', async () => {
    const start = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
    const gen = createFlowGenerator({
      seed: 3,
      customerId: 'g1',
      startMs: start,
      endMs: start + 2 * HOUR,
      flowsPerSecond: 0.5,
      scenarios: [{ kind: 'beacon', intervalSecs: 60 }],
    });
    // One flow in four without the organization the collector named: the dataset's to name.
    const flows = (gen.take(100_000) as unknown as Record<string, unknown>[]).map((f, i) =>
      i % 4 ? f : { ...f, dst: { ...(f.dst as object), ctx: undefined, geo: undefined } },
    );
    for (const c of ['g1', 'g2']) {
      for (let b = 0; b * 1_000 < flows.length; b++)
        await insertFlowBatch(engine, { customerId: c, nodeId: 'n1', batchId: `b${b}`, flows: flows.slice(b * 1_000, (b + 1) * 1_000) });
    }
    await expectRollupsMatchRows();

    // Late: flows of an hour already rolled up. Repeated: the same batch again, dropped by its token.
    const late = flows.slice(0, 50).map((f) => ({ ...f, '@timestamp': (f['@timestamp'] as number) + 1_000 }));
    await insertFlowBatch(engine, { customerId: 'g1', nodeId: 'n1', batchId: 'late', flows: late });
    await insertFlowBatch(engine, { customerId: 'g1', nodeId: 'n1', batchId: 'late', flows: late });
    await expectRollupsMatchRows();

    // Re-sent after the dedup window: counted twice by the rows until a merge collapses it, and so by the rollups.
    const count = async () =>
      Number(
        (
          await engine.query<{ n: number }>(
            named('flowstore:test.count', "SELECT count() AS n FROM flows WHERE customer_id = 'g1' SETTINGS optimize_use_projections = 0"),
            {},
          )
        )[0]!.n,
      );
    const before = await count();
    // Held until OPTIMIZE: a background merge between reading the rollup and the rows would
    // collapse the copies in one read and not the other.
    await engine.command(named('flowstore:test.stop_merges', 'SYSTEM STOP MERGES flows'), {});
    const rows = late.map((f, i) => flowToRow({ customerId: 'g1', nodeId: 'n1', batchId: 'late', ingestTimeMs: Date.now() }, f, i));
    await insertFlowRows(engine, rows, { dedupToken: 'forgotten' });
    expect(await count()).toBe(before + late.length);
    await expectRollupsMatchRows();
    await engine.command(named('flowstore:test.start_merges', 'SYSTEM START MERGES flows'), {});
    await engine.command(named('flowstore:test.optimize', 'OPTIMIZE TABLE flows FINAL'), {}, { timeoutMs: 120_000 });
    expect(await count()).toBe(before);
    await expectRollupsMatchRows();

    await startFlowsRemoval(engine, 'g2');
    await waitForMutations(engine, 'flows');
    await expectRollupsMatchRows();
    const tenants = await engine.query<{ customer_id: string }>(
      named(
        'flowstore:test.rollup_tenants',
        "SELECT DISTINCT customer_id FROM mergeTreeProjection(currentDatabase(), 'flows', 'egress_sources') WHERE customer_id LIKE 'g%'",
      ),
      {},
    );
    expect(tenants).toEqual([{ customer_id: 'g1' }]);
  }, 300_000);
});
