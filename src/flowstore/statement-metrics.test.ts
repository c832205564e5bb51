import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseStatementDuration } from '../infra/metrics.js';
import { ChdbThreadEngine } from './chdb-thread.js';
import { named } from './sql.js';

/** Statements counted so far under `statement` and `outcome`. */
async function counted(statement: string, outcome: string): Promise<number> {
  const { values } = await clickhouseStatementDuration.get();
  return (
    values.find((v) => v.metricName === 'clickhouse_statement_duration_seconds_count' && v.labels.statement === statement && v.labels.outcome === outcome)
      ?.value ?? 0
  );
}

const HEAVY = 'SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) = 0';

// The server's engine: statements run on the chDB thread and are counted on the main thread.
describe('ClickHouse statement metrics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-metrics-'));
  let engine: ChdbThreadEngine;
  beforeAll(async () => {
    engine = await ChdbThreadEngine.open(dir);
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts each statement under its name and outcome: ok, error, timeout, aborted', async () => {
    await engine.query(named('flowstore:test.metrics_ok', 'SELECT 1 AS one'), {});
    await expect(engine.query(named('flowstore:test.metrics_error', 'SELECT no_such_column'), {})).rejects.toThrow();
    await expect(engine.query(named('flowstore:test.metrics_timeout', HEAVY), {}, { timeoutMs: 100 })).rejects.toMatchObject({ name: 'FlowQueryTimeoutError' });
    const controller = new AbortController();
    const aborted = engine.query(named('flowstore:test.metrics_aborted', HEAVY), {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(aborted).rejects.toMatchObject({ name: 'FlowQueryAbortedError' });

    expect(await counted('flowstore:test.metrics_ok', 'ok')).toBe(1);
    expect(await counted('flowstore:test.metrics_error', 'error')).toBe(1);
    expect(await counted('flowstore:test.metrics_timeout', 'timeout')).toBe(1);
    expect(await counted('flowstore:test.metrics_aborted', 'aborted')).toBe(1);
  });
});
