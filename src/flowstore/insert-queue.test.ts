import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import type { FlowEngine } from './engine.js';
import { dedupTokenFor } from './ingest.js';
import { type FlowRow, flowRowsBlockInTurns, flowToRow, insertFlowRows } from './ingest-rows.js';
import { type BatchClaims, FlowIngestBusyError, FlowInsertQueue, type PreparedBatch } from './insert-queue.js';
import { migrateFlowStore } from './schema.js';

const dir = mkdtempSync(join(tmpdir(), 'flowstore-queue-'));
const engine = new ChdbEngine(dir);
beforeAll(() => migrateFlowStore(engine, { retentionDays: 3650 }));
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY_MS = 86_400_000;
const NOW = Date.now();

/** The rows of `n` valid records of one node, over `days` UTC days. */
function rowsOf(nodeId: string, batchId: string, n: number, days = 1): FlowRow[] {
  const stamp = { customerId: 'c1', nodeId, batchId, ingestTimeMs: NOW };
  return Array.from({ length: n }, (_, index) => flowToRow(stamp, { '@timestamp': NOW - (index % days) * DAY_MS, app_name: 'dns' }, index));
}

/** Those records as a batch ready for the queue, a slice per day. */
async function batch(nodeId: string, batchId: string, n: number, days = 1): Promise<PreparedBatch> {
  const rows = rowsOf(nodeId, batchId, n, days);
  const encode = (indexes: readonly number[]) => flowRowsBlockInTurns(indexes.map((i) => rows[i]!));
  const byDay = new Map<number, number[]>();
  rows.forEach((row, i) => {
    const day = Math.floor((NOW - (i % days) * DAY_MS) / DAY_MS);
    byDay.set(day, [...(byDay.get(day) ?? []), i]);
  });
  const span = (indexes: number[]) => indexes.map((i) => NOW - (i % days) * DAY_MS);
  const slices = await Promise.all(
    [...byDay].map(async ([day, indexes]) => ({
      day,
      indexes,
      fromMs: Math.min(...span(indexes)),
      toMs: Math.max(...span(indexes)),
      block: await encode(indexes),
    })),
  );
  return { customerId: 'c1', nodeId, batchId, token: dedupTokenFor({ customerId: 'c1', nodeId, batchId }), slices, encode };
}

/** The real engine, counting the inserts it is asked for and the rows in them. */
function countingEngine() {
  const inserts: number[] = [];
  const counting: FlowEngine = Object.assign(Object.create(engine), {
    insertNative: (table: string, columns: readonly string[], blocks: readonly Buffer[], opts: object) => {
      inserts.push(blocks.length);
      return engine.insertNative(table, columns, blocks, opts);
    },
  });
  return { counting, inserts };
}

const stored = async (nodeId: string) =>
  (
    await engine.query<{ n: string; ids: string }>('/* test:count */ SELECT count() AS n, uniqExact(id) AS ids FROM flows WHERE node_id = {n:String}', {
      n: nodeId,
    })
  ).map((r) => ({
    rows: Number(r.n),
    ids: Number(r.ids),
  }))[0]!;

describe('the insert queue', () => {
  it('joins the batches that arrive during an insert into one insert, and stores each once', async () => {
    const { counting, inserts } = countingEngine();
    const queue = new FlowInsertQueue(counting);
    const batches = await Promise.all(Array.from({ length: 12 }, (_, i) => batch('group', `b${i}`, 50)));
    expect(await Promise.all(batches.map((b) => queue.submit(b)))).toEqual(batches.map(() => []));
    // The first goes alone (the queue was idle); the eleven that came meanwhile go together.
    expect(inserts).toHaveLength(2);
    expect(await stored('group')).toEqual({ rows: 600, ids: 600 });
    expect(queue.depth).toBe(0);
  });

  it('stores a batch sent again, while in flight or after, once', async () => {
    const { counting, inserts } = countingEngine();
    const queue = new FlowInsertQueue(counting);
    const [first, again] = [await batch('again', 'b1', 40, 3), await batch('again', 'b1', 40, 3)];
    await Promise.all([queue.submit(first), queue.submit(again)]);
    expect(inserts).toHaveLength(1);
    await queue.submit(await batch('again', 'b1', 40, 3));
    // A fresh queue, as after a restart: it asks the table, not its memory.
    await new FlowInsertQueue(counting).submit(await batch('again', 'b1', 40, 3));
    expect(inserts).toHaveLength(1);
    expect(await stored('again')).toEqual({ rows: 40, ids: 40 });
  });

  it('adds only the missing records of a batch the table holds part of', async () => {
    // Some of one day's records, as a per-batch insert split in halves could have left them.
    await insertFlowRows(
      engine,
      rowsOf('partial', 'b1', 30, 2).filter((_, i) => i % 2 === 0 && i < 10),
      { dedupToken: 'test partial' },
    );
    expect(await stored('partial')).toEqual({ rows: 5, ids: 5 });
    await new FlowInsertQueue(engine).submit(await batch('partial', 'b1', 30, 2));
    expect(await stored('partial')).toEqual({ rows: 30, ids: 30 });
  });

  it('refuses a batch when the queue is full, saying when to come back', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: FlowEngine = Object.assign(Object.create(engine), {
      insertNative: async (table: string, columns: readonly string[], blocks: readonly Buffer[], opts: object) => {
        await held;
        return engine.insertNative(table, columns, blocks, opts);
      },
    });
    const queue = new FlowInsertQueue(slow, { maxQueuedRows: 100 });
    const first = queue.submit(await batch('full', 'b1', 60));
    queue.assertRoom();
    const second = queue.submit(await batch('full', 'b2', 40));
    expect(() => queue.assertRoom()).toThrow(FlowIngestBusyError);
    const refused = await queue.submit(await batch('full', 'b3', 1)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FlowIngestBusyError);
    expect((refused as FlowIngestBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    release();
    await Promise.all([first, second]);
    expect(queue.depth).toBe(0);
    await queue.submit(await batch('full', 'b3', 1));
    expect(await stored('full')).toEqual({ rows: 101, ids: 101 });
  });

  it('leaves a batch another process has claimed to that process', async () => {
    const elsewhere = new Set([dedupTokenFor({ customerId: 'c1', nodeId: 'claimed', batchId: 'theirs' })]);
    const released: string[] = [];
    const claims: BatchClaims = {
      claim: async (batches) => new Set(batches.map((b) => b.token).filter((t) => !elsewhere.has(t))),
      release: async (batches) => void released.push(...batches.map((b) => b.token)),
    };
    const queue = new FlowInsertQueue(engine, { claims });
    const [mine, theirs] = await Promise.allSettled([queue.submit(await batch('claimed', 'mine', 5)), queue.submit(await batch('claimed', 'theirs', 5))]);
    expect(mine.status).toBe('fulfilled');
    expect(theirs.status === 'rejected' && theirs.reason).toBeInstanceOf(FlowIngestBusyError);
    expect(released).toEqual([dedupTokenFor({ customerId: 'c1', nodeId: 'claimed', batchId: 'mine' })]);
    expect(await stored('claimed')).toEqual({ rows: 5, ids: 5 });
  });

  it('fails every batch of a group the engine could not store, and stores them when sent again', async () => {
    let down = true;
    const flaky: FlowEngine = Object.assign(Object.create(engine), {
      insertNative: (table: string, columns: readonly string[], blocks: readonly Buffer[], opts: object) =>
        down ? Promise.reject(new Error('engine down')) : engine.insertNative(table, columns, blocks, opts),
    });
    const queue = new FlowInsertQueue(flaky);
    const batches = await Promise.all([1, 2, 3].map((i) => batch('down', `b${i}`, 10)));
    const outcomes = await Promise.allSettled(batches.map((b) => queue.submit(b)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(queue.depth).toBe(0);
    down = false;
    await Promise.all((await Promise.all([1, 2, 3].map((i) => batch('down', `b${i}`, 10)))).map((b) => queue.submit(b)));
    expect(await stored('down')).toEqual({ rows: 30, ids: 30 });
  });
});
