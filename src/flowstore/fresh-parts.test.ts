import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { FLOWS_TABLE, WIDE_PART_MIN_ROWS } from './ddl.js';
import { insertFlowBatch } from './ingest.js';
import { migrateFlowStore } from './schema.js';
import { named } from './sql.js';

describe('parts of the flows table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fresh-parts-'));
  const engine = new ChdbEngine(dir);
  // The row count alone decides here: these test flows are small, where a real 5,000-row insert
  // passes the default byte threshold (10 MB) and was Wide.
  beforeAll(async () => {
    await migrateFlowStore(engine);
    await engine.command(named('flowstore:test.no_byte_threshold', `ALTER TABLE ${FLOWS_TABLE} MODIFY SETTING min_bytes_for_wide_part = 0`));
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const flows = (n: number, start: number) =>
    Array.from({ length: n }, (_, i) => ({ '@timestamp': start + i, src: { ip: `10.0.${(i >> 8) & 255}.${i & 255}` }, dst: { ip: '192.0.2.1', port: 443 } }));
  const partTypes = async (day: string) =>
    (
      await engine.query<{ part_type: string; rows: number }>(
        named(
          'flowstore:test.part_types',
          `SELECT part_type, sum(rows) AS rows FROM system.parts WHERE table = '${FLOWS_TABLE}' AND active AND partition_id = {day:String} GROUP BY part_type ORDER BY part_type`,
        ),
        { day },
      )
    ).map((p) => ({ ...p, rows: Number(p.rows) }));
  const dayId = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

  it('are Compact as inserted and Wide once merged past the threshold', async () => {
    const day = Date.UTC(2026, 10, 2);
    await insertFlowBatch(engine, { customerId: 't1', nodeId: 'n1', batchId: 'small', flows: flows(500, day) });
    expect(await partTypes(dayId(day))).toEqual([{ part_type: 'Compact', rows: 500 }]);

    const half = WIDE_PART_MIN_ROWS / 2;
    await insertFlowBatch(engine, { customerId: 't1', nodeId: 'n1', batchId: 'a', flows: flows(half, day + 1_000_000) });
    await insertFlowBatch(engine, { customerId: 't1', nodeId: 'n1', batchId: 'b', flows: flows(half, day + 2_000_000) });
    await engine.command(named('flowstore:test.optimize', `OPTIMIZE TABLE ${FLOWS_TABLE} PARTITION ID '${dayId(day)}' FINAL`));
    expect(await partTypes(dayId(day))).toEqual([{ part_type: 'Wide', rows: 500 + WIDE_PART_MIN_ROWS }]);
  }, 120_000);

  it('of a table made before the setting become Compact after migration 7', async () => {
    await engine.command(named('flowstore:test.wide_parts', `ALTER TABLE ${FLOWS_TABLE} MODIFY SETTING min_rows_for_wide_part = 0`));
    await engine.command(named('flowstore:test.forget_migration', 'DELETE FROM schema_migrations WHERE version = 7'));
    const day = Date.UTC(2026, 10, 3);
    await insertFlowBatch(engine, { customerId: 't1', nodeId: 'n1', batchId: 'before', flows: flows(500, day) });
    expect(await partTypes(dayId(day))).toEqual([{ part_type: 'Wide', rows: 500 }]);

    expect((await migrateFlowStore(engine)).applied).toEqual([7]);
    const later = Date.UTC(2026, 10, 4);
    await insertFlowBatch(engine, { customerId: 't1', nodeId: 'n1', batchId: 'after', flows: flows(500, later) });
    expect(await partTypes(dayId(later))).toEqual([{ part_type: 'Compact', rows: 500 }]);
  }, 120_000);
});
