/**
 * Flow ingest of a batch: each record checked on its own (ingest-convert.ts), the valid ones
 * stored exactly once through the insert queue (insert-queue.ts), which joins the batches of
 * concurrent requests into large inserts. Collectors' batches are checked and encoded in an ingest
 * worker (src/modules/ingest); ingestFlowBatch does the same on this thread, for tests and tools.
 *
 * A record's id derives from (customer, node, batch, position), so a batch sent again repeats its
 * ids: the queue leaves out what the table already holds, and ReplacingMergeTree would collapse
 * any repeat at merge (docs/flowstore.md "Duplicate batches and group commit").
 */
import type { FlowEngine } from './engine.js';
import { type Rejection, type TimeWindow, convertFlows } from './ingest-convert.js';
import { type RowStamp, flowRowsBlockInTurns, flowToRow, insertFlowRows } from './ingest-rows.js';
import { FlowInsertQueue, type PreparedBatch } from './insert-queue.js';
import { currentRetentionDays } from './schema.js';
import { inTurns } from './turns.js';

export interface FlowBatch extends RowStamp {
  flows: readonly Record<string, unknown>[];
}

export function dedupTokenFor(batch: Pick<FlowBatch, 'customerId' | 'nodeId' | 'batchId'>): string {
  if (/\s/.test(batch.batchId)) throw new Error('dedupTokenFor: a batch id must not hold white space (part tokens rely on it)');
  return `${batch.customerId}:${batch.nodeId}:${batch.batchId}`;
}

/**
 * Inserts a batch as one block with its dedup token: inserting the same batch again stores
 * nothing new. For data planted by tests and tools; collectors' batches go through the queue.
 */
export async function insertFlowBatch(engine: FlowEngine, batch: FlowBatch, opts: { signal?: AbortSignal } = {}): Promise<{ rows: number }> {
  if (!batch.customerId || !batch.nodeId || !batch.batchId) throw new Error('insertFlowBatch: customerId, nodeId and batchId are required');
  const ingestTimeMs = batch.ingestTimeMs ?? Date.now();
  const rows = batch.flows.map((f, i) => flowToRow({ ...batch, ingestTimeMs }, f, i));
  await insertFlowRows(engine, rows, { dedupToken: dedupTokenFor(batch), ...(opts.signal ? { signal: opts.signal } : {}) });
  return { rows: rows.length };
}

export interface IngestOutcome {
  accepted: number;
  rejected: Rejection[];
}

/** How long the table's retention, read from its TTL, is trusted before it is read again. */
const RETENTION_READ_MS = 60_000;
const retentionRead = new WeakMap<FlowEngine, { days: number | undefined; atMs: number }>();

/** The window of timestamps the table keeps now (ingest-convert.ts outsideWindow). */
export async function currentTimeWindow(engine: FlowEngine): Promise<TimeWindow> {
  let cached = retentionRead.get(engine);
  if (!cached || Date.now() - cached.atMs >= RETENTION_READ_MS) {
    cached = { days: await currentRetentionDays(engine), atMs: Date.now() };
    retentionRead.set(engine, cached);
  }
  return { retentionDays: cached.days, nowMs: Date.now() };
}

/** The queue of an engine that ingests without one of its own (tests, tools). */
const defaultQueues = new WeakMap<FlowEngine, FlowInsertQueue>();
const defaultQueue = (engine: FlowEngine) => {
  let queue = defaultQueues.get(engine);
  if (!queue) defaultQueues.set(engine, (queue = new FlowInsertQueue(engine)));
  return queue;
};

/** Sums what the queue refused into the outcome of a batch's checks. */
export function ingestOutcome(kept: number, rejected: Rejection[], refused: Rejection[]): IngestOutcome {
  return { accepted: kept - refused.length, rejected: [...rejected, ...refused].sort((a, b) => a.index - b.index) };
}

/**
 * Validates each record on its own and stores the valid ones, on this thread (over turns of the
 * event loop): a bad record never holds back the others, and a retried batch (same id, same
 * records) stores nothing twice.
 */
export async function ingestFlowBatch(
  engine: FlowEngine,
  batch: RowStamp & { flows: readonly unknown[] },
  opts: { queue?: FlowInsertQueue } = {},
): Promise<IngestOutcome> {
  const stamp: RowStamp = { customerId: batch.customerId, nodeId: batch.nodeId, batchId: batch.batchId, ingestTimeMs: batch.ingestTimeMs ?? Date.now() };
  const { rows, rejected, days } = await inTurns(convertFlows(stamp, batch.flows, await currentTimeWindow(engine)));
  const encode = (indexes: readonly number[]) => flowRowsBlockInTurns(indexes.map((i) => rows[i]!));
  const prepared: PreparedBatch = {
    customerId: stamp.customerId,
    nodeId: stamp.nodeId,
    batchId: stamp.batchId,
    token: dedupTokenFor(stamp),
    slices: await Promise.all(days.map(async (slice) => ({ ...slice, block: await encode(slice.indexes) }))),
    encode,
  };
  const kept = days.reduce((n, d) => n + d.indexes.length, 0);
  return ingestOutcome(kept, rejected, await (opts.queue ?? defaultQueue(engine)).submit(prepared));
}
