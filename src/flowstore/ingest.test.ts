import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import type { FlowEngine } from './engine.js';
import { FlowEngineError } from './errors.js';
import { ingestFlowBatch } from './ingest.js';
import { MAX_DAYS_PER_INSERT } from './insert-queue.js';
import { migrateFlowStore } from './schema.js';

// chDB opens one data directory per process: one engine serves the file. It keeps ten years, so
// that a batch can span more days than one insert may write partitions.
const dir = mkdtempSync(join(tmpdir(), 'flowstore-ingest-'));
const engine = new ChdbEngine(dir);
beforeAll(() => migrateFlowStore(engine, { retentionDays: 3650 }));
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The row count of a Native block: the second varint of its header (the first counts its columns). */
function blockRows(block: Buffer): number {
  let pos = 0;
  const varUInt = () => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = block[pos++]!;
      n += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return n;
    }
  };
  varUInt();
  return varUInt();
}

describe('a batch the engine refuses part of', () => {
  /** The real engine, except that it refuses, as ClickHouse refuses a value it cannot parse, any block holding a `poison` record. */
  const refusing: FlowEngine = Object.assign(Object.create(engine), {
    insertNative: (table: string, columns: readonly string[], blocks: readonly Buffer[], opts: object) =>
      blocks.some((block) => block.includes('poison'))
        ? Promise.reject(new FlowEngineError('query flowstore:insert.flows failed: Code: 27. Cannot parse input', { clickhouseCode: 27 }))
        : engine.insertNative(table, columns, blocks, opts),
  });
  const stored = async (nodeId: string) =>
    Number((await engine.query<{ n: number }>('/* test:count */ SELECT count() AS n FROM flows WHERE node_id = {n:String}', { n: nodeId }))[0]!.n);
  const batch = (nodeId: string) => ({
    customerId: 'c1',
    nodeId,
    batchId: 'b1',
    flows: [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
      i === 6 ? 'not a record' : { '@timestamp': Date.now() - i * 1000, app_name: i === 2 || i === 5 ? 'poison' : 'ok' },
    ),
  });

  it('stores the rest and rejects those records alone, instead of failing the batch for ever', async () => {
    const outcome = await ingestFlowBatch(refusing, batch('n-split'));
    expect(outcome.accepted).toBe(5);
    expect(outcome.rejected.map((r) => r.index)).toEqual([2, 5, 6]);
    expect(outcome.rejected[0]!.error).toMatch(/^the flow store refused this record: .*Cannot parse input/);
    expect(await stored('n-split')).toBe(5);
    // A retry splits the same way, and the halves' own dedup tokens store nothing twice.
    expect(await ingestFlowBatch(refusing, batch('n-split'))).toEqual(outcome);
    expect(await stored('n-split')).toBe(5);
  });

  it("stores a later batch whose id reads like a part of a split one (the parts' tokens cannot be a batch's)", async () => {
    await ingestFlowBatch(refusing, batch('n-clash'));
    expect(await stored('n-clash')).toBe(5);
    // Records 3 and 4 were stored as one part of b1; ids may hold ':' and '-' but no space.
    const later = { customerId: 'c1', nodeId: 'n-clash', batchId: 'b1:3-7:3-4', flows: [{ '@timestamp': Date.now() }, { '@timestamp': Date.now() - 1 }] };
    expect(await ingestFlowBatch(engine, later)).toEqual({ accepted: 2, rejected: [] });
    expect(await stored('n-clash')).toBe(7);
  });

  it('still fails the batch (a 503 to retry) when the engine is down, not refusing data', async () => {
    const down: FlowEngine = Object.assign(Object.create(engine), {
      insertNative: () => Promise.reject(new FlowEngineError('connection refused')),
    });
    await expect(ingestFlowBatch(down, batch('n-down'))).rejects.toThrow('connection refused');
    expect(await stored('n-down')).toBe(0);
  });
});

describe('a batch over more days than one insert may write partitions', () => {
  const inserts: number[] = [];
  const counting: FlowEngine = Object.assign(Object.create(engine), {
    insertNative: (table: string, columns: readonly string[], blocks: readonly Buffer[], opts: object) => (
      inserts.push(blocks.reduce((rows, block) => rows + blockRows(block), 0)),
      engine.insertNative(table, columns, blocks, opts)
    ),
  });
  const now = Date.now();
  // 150 records, one a day, and two more today: past ClickHouse's 100 partitions per insert block.
  const flows = [...Array.from({ length: 150 }, (_, i) => ({ '@timestamp': now - i * 86_400_000 })), { '@timestamp': now }, { '@timestamp': now }];

  it('stores it in inserts of at most 100 days each, once however often it is retried', async () => {
    const batch = { customerId: 'c1', nodeId: 'n-days', batchId: 'b1', flows };
    expect(await ingestFlowBatch(counting, batch)).toEqual({ accepted: 152, rejected: [] });
    expect(MAX_DAYS_PER_INSERT).toBe(100);
    expect(inserts).toEqual([100, 52]);
    expect(await ingestFlowBatch(counting, batch)).toEqual({ accepted: 152, rejected: [] });
    const stored = await engine.query<{ n: number; days: number }>(
      '/* test:count_days */ SELECT count() AS n, uniqExact(toDate(timestamp)) AS days FROM flows FINAL WHERE node_id = {n:String}',
      { n: 'n-days' },
    );
    expect(stored.map((r) => ({ n: Number(r.n), days: Number(r.days) }))).toEqual([{ n: 152, days: 150 }]);
    const raw = await engine.query<{ n: number }>('/* test:count */ SELECT count() AS n FROM flows WHERE node_id = {n:String}', { n: 'n-days' });
    expect(Number(raw[0]!.n)).toBe(152);
    // ~30 s on an idle machine: 300 day partitions written, each with its rollup projections.
  }, 120_000);
});
