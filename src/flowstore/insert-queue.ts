/**
 * Group commit for flow ingest: the batches of concurrent requests go into the flows table as a
 * few large inserts. An insert's cost is mostly fixed (a part per day with ~200 columns, their
 * skip indexes and projections): one 200-row insert cost as much CPU as ~3,000 rows of a
 * 40,000-row one (docs/flowstore.md "Group commit"). While one insert runs, the batches that
 * arrive wait and go together in the next; an idle queue inserts a batch at once.
 *
 * Exactly once per batch, although a group carries no per-batch dedup token:
 * - in this process, one flight per batch: a retry arriving while its batch is queued or being
 *   inserted waits for that outcome instead of being queued again;
 * - across server processes, a claim per batch (BatchClaims): a batch claimed by another live
 *   process is refused with FlowIngestBusyError (retry later) rather than inserted twice;
 * - before each insert, the table is asked which of the group's slices (a batch's rows of one
 *   UTC day) it already holds, and those are left out. A slice falls in one partition, and one
 *   block writes one part per partition, so an insert stores a slice whole or not at all; a slice
 *   found partly stored (the per-batch fallback below splits inserts) gets its missing rows only.
 */
import { createHash } from 'node:crypto';
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine } from './engine.js';
import { FlowEngineError, FlowStoreError } from './errors.js';
import { type FlowRow, flowRowSlot, insertFlowRows } from './ingest-rows.js';
import { ParamBag, named } from './sql.js';

/** A record ready to insert and its place in its batch. */
export interface KeptRecord {
  row: FlowRow;
  index: number;
}

export interface QueuedBatch {
  customerId: string;
  nodeId: string;
  batchId: string;
  /** The batch's dedup token (dedupTokenFor): its identity in flights, claims and part tokens. */
  token: string;
  records: readonly KeptRecord[];
}

/** Records the engine refused for their data, by index in their batch. */
export type RefusedRecords = Array<{ index: number; error: string }>;

/**
 * Which batches this process may insert now. A claim held by a process that died lapses, so its
 * batches can be taken over when their collectors retry them.
 */
export interface BatchClaims {
  /** Claims what it can of the batches for this process; returns the tokens of those it got. */
  claim(batches: readonly ClaimedBatch[]): Promise<ReadonlySet<string>>;
  release(batches: readonly ClaimedBatch[]): Promise<void>;
}

export type ClaimedBatch = Pick<QueuedBatch, 'customerId' | 'token'>;

/** For a flow store only this process writes to (tests, tools): the single flight is enough. */
export const PROCESS_CLAIMS: BatchClaims = {
  claim: async (batches) => new Set(batches.map((b) => b.token)),
  release: async () => {},
};

/** The queue is full, or another process is inserting the batch: send it again later. */
export class FlowIngestBusyError extends FlowStoreError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('ingest_busy', message);
  }
}

export interface InsertQueueOptions {
  claims?: BatchClaims;
  /** An insert takes batches until it holds this many rows (a larger batch goes alone). */
  maxGroupRows?: number;
  /** Rows queued or being inserted beyond which a batch is refused (FlowIngestBusyError). */
  maxQueuedRows?: number;
}

export const DEFAULT_MAX_GROUP_ROWS = 30_000;
export const DEFAULT_MAX_QUEUED_ROWS = 90_000;

interface Flight {
  batch: QueuedBatch;
  promise: Promise<RefusedRecords>;
  resolve(refused: RefusedRecords): void;
  reject(error: unknown): void;
}

const DAY_MS = 86_400_000;

/**
 * ClickHouse's default `max_partitions_per_insert_block`: an insert whose rows fall on more day
 * partitions is refused whole (code 252, the same code as "too many parts", a real overload). An
 * insert over more days is made as several, of at most this many days each.
 */
export const MAX_DAYS_PER_INSERT = 100;

const SLOT_TIMESTAMP = flowRowSlot('timestamp');
const SLOT_ID = flowRowSlot('id');
const dayOf = (row: FlowRow) => Math.floor((row[SLOT_TIMESTAMP] as number) / DAY_MS);

/**
 * ClickHouse codes for values it cannot read into the table (parse and type errors): a batch
 * refused for one of these would be refused again however often a collector retried it.
 */
const REFUSED_DATA_CODES = new Set([6, 25, 26, 27, 32, 38, 41, 53, 69, 70, 72, 117, 131]);
const refusedData = (error: unknown): error is FlowEngineError =>
  error instanceof FlowEngineError && error.clickhouseCode !== undefined && REFUSED_DATA_CODES.has(error.clickhouseCode);

/**
 * The dedup token of a part of a batch's insert. The part follows a space, which no batch id
 * holds (ingest.service.ts), so no batch's own token equals a part's.
 */
export const partToken = (token: string, part: string) => `${token} ${part}`;

export class FlowInsertQueue {
  private readonly claims: BatchClaims;
  private readonly maxGroupRows: number;
  private readonly maxQueuedRows: number;
  private readonly waiting: Flight[] = [];
  private readonly flights = new Map<string, Flight>();
  private queuedRows = 0;
  private inserting = false;
  /** Rows per second the last inserts stored: how soon a refused collector should come back. */
  private drainRate = 10_000;

  constructor(
    private readonly engine: FlowEngine,
    opts: InsertQueueOptions = {},
  ) {
    this.claims = opts.claims ?? PROCESS_CLAIMS;
    this.maxGroupRows = opts.maxGroupRows ?? DEFAULT_MAX_GROUP_ROWS;
    this.maxQueuedRows = opts.maxQueuedRows ?? DEFAULT_MAX_QUEUED_ROWS;
  }

  /** Rows queued or being inserted. */
  get depth(): number {
    return this.queuedRows;
  }

  /** Throws FlowIngestBusyError when the queue is full: checked before a request's body is read. */
  assertRoom(): void {
    if (this.queuedRows >= this.maxQueuedRows) throw this.busy();
  }

  /**
   * Inserts the batch's records with those of other batches; resolves, once they are stored, to
   * those the engine refused for their data. The same batch submitted while it is in flight
   * shares that flight.
   */
  submit(batch: QueuedBatch): Promise<RefusedRecords> {
    const inFlight = this.flights.get(batch.token);
    if (inFlight) return inFlight.promise;
    if (batch.records.length === 0) return Promise.resolve([]);
    // A batch larger than the whole queue is still taken when the queue is empty.
    if (this.queuedRows > 0 && this.queuedRows + batch.records.length > this.maxQueuedRows) return Promise.reject(this.busy());
    let settle!: Pick<Flight, 'resolve' | 'reject'>;
    const promise = new Promise<RefusedRecords>((resolve, reject) => (settle = { resolve, reject }));
    const flight: Flight = { batch, promise, ...settle };
    this.flights.set(batch.token, flight);
    this.waiting.push(flight);
    this.queuedRows += batch.records.length;
    void this.drain();
    return promise;
  }

  private busy(): FlowIngestBusyError {
    const seconds = Math.min(30, Math.max(1, Math.ceil(this.queuedRows / this.drainRate)));
    return new FlowIngestBusyError(`Ingest is ${this.queuedRows} flows behind; send the batch again in ${seconds} s`, seconds);
  }

  /** Inserts groups one after the other while batches wait. */
  private async drain(): Promise<void> {
    if (this.inserting) return;
    this.inserting = true;
    try {
      while (this.waiting.length) {
        const group = this.takeGroup();
        const started = performance.now();
        const rows = group.reduce((n, f) => n + f.batch.records.length, 0);
        await this.insertGroup(group);
        this.drainRate = Math.max(1_000, rows / ((performance.now() - started) / 1000));
      }
    } finally {
      this.inserting = false;
    }
  }

  private takeGroup(): Flight[] {
    const group = [this.waiting.shift()!];
    let rows = group[0]!.batch.records.length;
    while (this.waiting.length && rows + this.waiting[0]!.batch.records.length <= this.maxGroupRows) {
      const next = this.waiting.shift()!;
      rows += next.batch.records.length;
      group.push(next);
    }
    return group;
  }

  /** Settles every flight of the group: stored (with what the engine refused) or failed. */
  private async insertGroup(group: Flight[]): Promise<void> {
    let claimed: ReadonlySet<string>;
    try {
      claimed = await this.claims.claim(group.map((f) => f.batch));
    } catch (error) {
      for (const flight of group) this.land(flight, { error });
      return;
    }
    const mine = group.filter((f) => claimed.has(f.batch.token));
    for (const flight of group) {
      if (!claimed.has(flight.batch.token)) this.land(flight, { error: new FlowIngestBusyError('Another server process is storing this batch; send it again later', 5) });
    }
    try {
      const refused = await this.store(mine.map((f) => f.batch));
      for (const flight of mine) this.land(flight, { refused: refused.get(flight.batch.token) ?? [] });
    } catch (error) {
      for (const flight of mine) this.land(flight, { error });
    } finally {
      await this.claims.release(mine.map((f) => f.batch)).catch(() => {
        // A claim left behind lapses by itself (BatchClaims).
      });
    }
  }

  /** Ends a flight: a batch sent again from now on is a new flight. */
  private land(flight: Flight, outcome: { refused: RefusedRecords } | { error: unknown }): void {
    this.flights.delete(flight.batch.token);
    this.queuedRows -= flight.batch.records.length;
    if ('error' in outcome) flight.reject(outcome.error);
    else flight.resolve(outcome.refused);
  }

  /** Stores what the table lacks of the batches; returns the records the engine refused, by batch token. */
  private async store(batches: QueuedBatch[]): Promise<Map<string, RefusedRecords>> {
    const missing = await missingRecords(this.engine, batches);
    const refused = new Map<string, RefusedRecords>();
    const days = [...new Set(missing.flatMap((m) => m.records.map((r) => dayOf(r.row))))].sort((a, b) => a - b);
    for (let i = 0; i < days.length; i += MAX_DAYS_PER_INSERT) {
      const [first, last] = [days[i]!, days[Math.min(i + MAX_DAYS_PER_INSERT, days.length) - 1]!];
      const inRange = (r: KeptRecord) => dayOf(r.row) >= first && dayOf(r.row) <= last;
      const part = missing.map((m) => ({ ...m, records: m.records.filter(inRange) })).filter((m) => m.records.length);
      try {
        await insertFlowRows(this.engine, part.flatMap((m) => m.records.map((r) => r.row)), { dedupToken: groupToken(part) });
      } catch (error) {
        if (!refusedData(error)) throw error;
        // A value validation missed: each batch on its own, halved down to the records refused.
        for (const m of part) {
          const token = days.length > MAX_DAYS_PER_INSERT ? partToken(m.token, `days ${first}-${last}`) : m.token;
          refused.set(m.token, [...(refused.get(m.token) ?? []), ...(await insertOrSplit(this.engine, [...m.records], token))]);
        }
      }
    }
    return refused;
  }
}

/**
 * The token of a group's insert: the same slices (batch, day, rows) give the same token, so an
 * insert repeated whole stores nothing. It holds no `:`, so it is never a batch's token.
 */
function groupToken(batches: QueuedBatch[]): string {
  const slices = batches.flatMap((b) => {
    const perDay = new Map<number, number>();
    for (const r of b.records) perDay.set(dayOf(r.row), (perDay.get(dayOf(r.row)) ?? 0) + 1);
    return [...perDay].map(([day, n]) => `${b.token}\u0000${day}\u0000${n}`);
  });
  return `group ${createHash('sha256').update(slices.sort().join('\u0001')).digest('base64url')}`;
}

const sliceKey = (b: Pick<QueuedBatch, 'customerId' | 'nodeId' | 'batchId'>, day: number) => `${b.customerId}\u0000${b.nodeId}\u0000${b.batchId}\u0000${day}`;

/** The batches with only the records the flows table does not hold yet (see the head comment). */
async function missingRecords(engine: FlowEngine, batches: QueuedBatch[]): Promise<QueuedBatch[]> {
  const stored = await storedSlices(engine, batches);
  if (!stored.size) return batches;
  const missing: QueuedBatch[] = [];
  for (const batch of batches) {
    const byDay = new Map<number, KeptRecord[]>();
    for (const r of batch.records) {
      const day = dayOf(r.row);
      byDay.set(day, [...(byDay.get(day) ?? []), r]);
    }
    const records: KeptRecord[] = [];
    for (const [day, slice] of byDay) {
      const held = stored.get(sliceKey(batch, day)) ?? 0;
      if (held === 0) records.push(...slice);
      else if (held < slice.length) {
        const ids = await storedIds(engine, batch, day);
        records.push(...slice.filter((r) => !ids.has(r.row[SLOT_ID] as string)));
      }
    }
    if (records.length) missing.push({ ...batch, records });
  }
  return missing;
}

/** How many distinct records of each (batch, day) the table holds, for the batches given. */
async function storedSlices(engine: FlowEngine, batches: QueuedBatch[]): Promise<Map<string, number>> {
  let [from, to] = [Infinity, -Infinity];
  for (const b of batches) {
    for (const r of b.records) {
      const ts = r.row[SLOT_TIMESTAMP] as number;
      if (ts < from) from = ts;
      if (ts > to) to = ts;
    }
  }
  const p = new ParamBag();
  const sql = named(
    'flowstore:ingest.stored_slices',
    `SELECT customer_id, node_id, batch_id, toUInt32(toDate(timestamp)) AS day, uniqExact(id) AS stored FROM ${FLOWS_TABLE} ` +
      `WHERE customer_id IN ${p.add([...new Set(batches.map((b) => b.customerId))], 'Array(String)')} ` +
      `AND timestamp >= fromUnixTimestamp64Milli(${p.add(from, 'Int64')}, 'UTC') AND timestamp <= fromUnixTimestamp64Milli(${p.add(to, 'Int64')}, 'UTC') ` +
      `AND batch_id IN ${p.add([...new Set(batches.map((b) => b.batchId))], 'Array(String)')} ` +
      'GROUP BY customer_id, node_id, batch_id, day',
  );
  const rows = await engine.query<{ customer_id: string; node_id: string; batch_id: string; day: number | string; stored: number | string }>(sql, p.values);
  return new Map(rows.map((r) => [sliceKey({ customerId: r.customer_id, nodeId: r.node_id, batchId: r.batch_id }, Number(r.day)), Number(r.stored)]));
}

/** The ids of a batch's records of one day that the table holds (a partly stored slice). */
async function storedIds(engine: FlowEngine, batch: QueuedBatch, day: number): Promise<Set<string>> {
  const p = new ParamBag();
  const sql = named(
    'flowstore:ingest.stored_ids',
    `SELECT DISTINCT id FROM ${FLOWS_TABLE} WHERE customer_id = ${p.add(batch.customerId, 'String')} ` +
      `AND timestamp >= fromUnixTimestamp64Milli(${p.add(day * DAY_MS, 'Int64')}, 'UTC') AND timestamp < fromUnixTimestamp64Milli(${p.add((day + 1) * DAY_MS, 'Int64')}, 'UTC') ` +
      `AND node_id = ${p.add(batch.nodeId, 'String')} AND batch_id = ${p.add(batch.batchId, 'String')}`,
  );
  return new Set((await engine.query<{ id: string }>(sql, p.values)).map((r) => r.id));
}

/**
 * Inserts the records as one block; if the engine refuses their data, inserts each half the same
 * way, down to the single records it refuses, which are returned. Validation should leave
 * nothing for the engine to refuse: this keeps a value it missed from poisoning its batch, which a
 * collector would retry for ever. The halves have tokens of their own, derived from the batch's,
 * so a retried batch splits the same way.
 */
async function insertOrSplit(engine: FlowEngine, records: KeptRecord[], dedupToken: string): Promise<RefusedRecords> {
  try {
    await insertFlowRows(engine, records.map((record) => record.row), { dedupToken });
    return [];
  } catch (error) {
    if (!refusedData(error)) throw error;
    if (records.length === 1) return [{ index: records[0]!.index, error: `the flow store refused this record: ${error.message.split('\n')[0]!.slice(0, 300)}` }];
    const refused: RefusedRecords = [];
    for (const half of [records.slice(0, records.length >> 1), records.slice(records.length >> 1)]) {
      refused.push(...(await insertOrSplit(engine, half, partToken(dedupToken, `${half[0]!.index}-${half.at(-1)!.index}`))));
    }
    return refused;
  }
}
