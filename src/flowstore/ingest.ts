/**
 * Flow ingest of a batch: each record checked on its own (ingest-rows.ts, and its time against
 * what the table keeps), the valid ones stored exactly once through the insert queue
 * (insert-queue.ts), which joins the batches of concurrent requests into large inserts.
 *
 * A record's id derives from (customer, node, batch, position), so a batch sent again repeats its
 * ids: the queue leaves out what the table already holds, and ReplacingMergeTree would collapse
 * any repeat at merge (docs/flowstore.md "Duplicate batches").
 */
import type { FlowEngine } from './engine.js';
import { FlowIngestError } from './errors.js';
import { FlowInsertQueue, type KeptRecord } from './insert-queue.js';
import { type RowStamp, flowToRow, insertFlowRows, rowTime } from './ingest-rows.js';
import { currentRetentionDays } from './schema.js';

export interface FlowBatch extends RowStamp {
  flows: readonly Record<string, unknown>[];
}

export function dedupTokenFor(batch: Pick<FlowBatch, 'customerId' | 'nodeId' | 'batchId'>): string {
  if (/\s/.test(batch.batchId)) throw new Error('dedupTokenFor: a batch id must not hold white space (part tokens rely on it)');
  return `${batch.customerId}:${batch.nodeId}:${batch.batchId}`;
}

/**
 * Inserts a batch as one block with its dedup token: inserting the same batch again stores
 * nothing new. For data planted by tests and tools; collectors' batches go through ingestFlowBatch.
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
  rejected: Array<{ index: number; error: string }>;
}

/** The queue of an engine that ingests without one of its own (tests, tools). */
const defaultQueues = new WeakMap<FlowEngine, FlowInsertQueue>();
const defaultQueue = (engine: FlowEngine) => {
  let queue = defaultQueues.get(engine);
  if (!queue) defaultQueues.set(engine, (queue = new FlowInsertQueue(engine)));
  return queue;
};

/**
 * Records checked between two turns of the event loop: a 10,000-record batch is checked in
 * slices, so that other requests are answered meanwhile.
 */
const RECORDS_PER_TURN = 500;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Validates each record on its own and stores the valid ones: a bad record never holds back the
 * others, and a retried batch (same id, same records) stores nothing twice. Records keep their
 * index in the batch, so their ids are stable across retries.
 */
export async function ingestFlowBatch(
  engine: FlowEngine,
  batch: RowStamp & { flows: readonly unknown[] },
  opts: { queue?: FlowInsertQueue } = {},
): Promise<IngestOutcome> {
  const stamp: RowStamp = { customerId: batch.customerId, nodeId: batch.nodeId, batchId: batch.batchId, ingestTimeMs: batch.ingestTimeMs ?? Date.now() };
  const token = dedupTokenFor(stamp);
  const valid: KeptRecord[] = [];
  const rejected: IngestOutcome['rejected'] = [];
  for (let index = 0; index < batch.flows.length; index++) {
    if (index % RECORDS_PER_TURN === RECORDS_PER_TURN - 1) await nextTurn();
    const flow = batch.flows[index];
    if (typeof flow !== 'object' || flow === null || Array.isArray(flow)) {
      rejected.push({ index, error: 'a flow record must be a JSON object' });
      continue;
    }
    try {
      valid.push({ row: flowToRow(stamp, flow as Record<string, unknown>, index), index });
    } catch (error) {
      if (!(error instanceof FlowIngestError)) throw error;
      rejected.push({ index, error: error.message });
    }
  }
  const kept: KeptRecord[] = [];
  if (valid.length) {
    const outOfTime = await timeWindowCheck(engine);
    for (const record of valid) {
      const error = outOfTime(rowTime(record.row));
      if (error) rejected.push({ index: record.index, error: new FlowIngestError(record.index, '@timestamp', error).message });
      else kept.push(record);
    }
  }
  const refused = kept.length ? await (opts.queue ?? defaultQueue(engine)).submit({ ...stamp, token, records: kept }) : [];
  rejected.push(...refused);
  rejected.sort((a, b) => a.index - b.index);
  return { accepted: kept.length - refused.length, rejected };
}

const DAY_MS = 86_400_000;

/**
 * How far ahead of the server's clock a record may be timestamped: a collector whose clock is off
 * by hours (a local time sent as UTC is at most 14 h) is still taken. Later records are refused:
 * they would sit outside every search window until that time came, outlive the retention, and
 * (past 2106 and 2149) overflow the TTL's DateTime and the partition's Date.
 */
export const FUTURE_TOLERANCE_MS = DAY_MS;

/** How long the table's retention, read from its TTL, is trusted before it is read again. */
const RETENTION_READ_MS = 60_000;
const retentionRead = new WeakMap<FlowEngine, { days: number | undefined; atMs: number }>();

async function retentionDaysOf(engine: FlowEngine): Promise<number | undefined> {
  const cached = retentionRead.get(engine);
  if (cached && Date.now() - cached.atMs < RETENTION_READ_MS) return cached.days;
  const days = await currentRetentionDays(engine);
  retentionRead.set(engine, { days, atMs: Date.now() });
  return days;
}

/**
 * The check of a record's timestamp against what the table keeps: a record older than the
 * retention (the TTL, `timestamp + N days`) is deleted by ClickHouse as it is inserted, so it is
 * refused rather than acknowledged and lost; one too far ahead is refused (FUTURE_TOLERANCE_MS).
 * Returns the reason, or undefined when the record is in the window.
 */
async function timeWindowCheck(engine: FlowEngine): Promise<(timestampMs: number) => string | undefined> {
  const days = await retentionDaysOf(engine);
  const now = Date.now();
  return (ts) => {
    if (days !== undefined && ts + days * DAY_MS <= now) {
      return `${new Date(ts).toISOString()} is older than the flow store's retention of ${days} days, so it would be deleted at once`;
    }
    if (ts > now + FUTURE_TOLERANCE_MS) return `${new Date(ts).toISOString()} is more than ${FUTURE_TOLERANCE_MS / 3_600_000} hours ahead of the server's clock`;
    return undefined;
  };
}

