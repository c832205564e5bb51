/**
 * Group commit for flow ingest: the batches of concurrent requests go into the flows table as a
 * few large inserts. An insert's cost is mostly fixed (a part per day with ~200 columns, their
 * skip indexes and projections): one 200-row insert cost as much CPU as ~3,000 rows of a
 * 40,000-row one (docs/flowstore.md "Duplicate batches and group commit"). While one insert runs, the batches that
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
import { DAY_MS, type Rejection } from './ingest-convert.js';
import { FLOW_ROW_COLUMNS, recordId } from './ingest-rows.js';
import { ParamBag, named } from './sql.js';

/** A batch's records of one UTC day, ready to insert. */
export interface PreparedSlice {
  day: number;
  /** The records' indexes in their batch. */
  indexes: readonly number[];
  /** The first and last of their timestamps (epoch ms): the span the table is asked about. */
  fromMs: number;
  toMs: number;
  /** Their rows as one Native block (ingest-rows.ts). */
  block: Buffer;
}

/** A batch checked and encoded (ingest.ts, or an ingest worker), waiting to be stored. */
export interface PreparedBatch {
  customerId: string;
  nodeId: string;
  batchId: string;
  /** The batch's dedup token (dedupTokenFor): its identity in flights, claims and part tokens. */
  token: string;
  slices: readonly PreparedSlice[];
  /** A block of some of the batch's kept records, by index: for a slice stored in part, or split. */
  encode(indexes: readonly number[]): Promise<Buffer>;
}

/** Records the engine refused for their data, by index in their batch. */
export type RefusedRecords = Rejection[];

/**
 * Which batches this process may insert now. A claim held by a process that died lapses, so its
 * batches can be taken over when their collectors retry them.
 */
export interface BatchClaims {
  /** Claims what it can of the batches for this process; returns the tokens of those it got. */
  claim(batches: readonly ClaimedBatch[]): Promise<ReadonlySet<string>>;
  release(batches: readonly ClaimedBatch[]): Promise<void>;
}

export type ClaimedBatch = Pick<PreparedBatch, 'customerId' | 'token'>;

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
const DEFAULT_MAX_QUEUED_ROWS = 90_000;

interface Flight {
  batch: PreparedBatch;
  rows: number;
  promise: Promise<RefusedRecords>;
  resolve(refused: RefusedRecords): void;
  reject(error: unknown): void;
}

/**
 * ClickHouse's default `max_partitions_per_insert_block`: an insert whose rows fall on more day
 * partitions is refused whole (code 252, the same code as "too many parts", a real overload). An
 * insert over more days is made as several, of at most this many days each.
 */
export const MAX_DAYS_PER_INSERT = 100;

const rowsOf = (batch: Pick<PreparedBatch, 'slices'>) => batch.slices.reduce((n, slice) => n + slice.indexes.length, 0);

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
const partToken = (token: string, part: string) => `${token} ${part}`;

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
  submit(batch: PreparedBatch): Promise<RefusedRecords> {
    const inFlight = this.flights.get(batch.token);
    if (inFlight) return inFlight.promise;
    const rows = rowsOf(batch);
    if (rows === 0) return Promise.resolve([]);
    // A batch larger than the whole queue is still taken when the queue is empty.
    if (this.queuedRows > 0 && this.queuedRows + rows > this.maxQueuedRows) return Promise.reject(this.busy());
    let settle!: Pick<Flight, 'resolve' | 'reject'>;
    const promise = new Promise<RefusedRecords>((resolve, reject) => (settle = { resolve, reject }));
    const flight: Flight = { batch, rows, promise, ...settle };
    this.flights.set(batch.token, flight);
    this.waiting.push(flight);
    this.queuedRows += rows;
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
        const rows = group.reduce((n, f) => n + f.rows, 0);
        await this.insertGroup(group);
        this.drainRate = Math.max(1_000, rows / ((performance.now() - started) / 1000));
      }
    } finally {
      this.inserting = false;
    }
  }

  private takeGroup(): Flight[] {
    const group = [this.waiting.shift()!];
    let rows = group[0]!.rows;
    while (this.waiting.length && rows + this.waiting[0]!.rows <= this.maxGroupRows) {
      const next = this.waiting.shift()!;
      rows += next.rows;
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
      if (!claimed.has(flight.batch.token))
        this.land(flight, { error: new FlowIngestBusyError('Another server process is storing this batch; send it again later', 5) });
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
    this.queuedRows -= flight.rows;
    if ('error' in outcome) flight.reject(outcome.error);
    else flight.resolve(outcome.refused);
  }

  /**
   * Stores what the table lacks of the batches, at most MAX_DAYS_PER_INSERT days per insert;
   * returns the records the engine refused, by batch token.
   */
  private async store(batches: PreparedBatch[]): Promise<Map<string, RefusedRecords>> {
    const missing = await missingSlices(this.engine, batches);
    const refused = new Map<string, RefusedRecords>();
    const days = [...new Set(missing.map((m) => m.slice.day))].sort((a, b) => a - b);
    for (let i = 0; i < days.length; i += MAX_DAYS_PER_INSERT) {
      const [first, last] = [days[i]!, days[Math.min(i + MAX_DAYS_PER_INSERT, days.length) - 1]!];
      const part = missing.filter((m) => m.slice.day >= first && m.slice.day <= last);
      try {
        await this.engine.insertNative(
          FLOWS_TABLE,
          FLOW_ROW_COLUMNS,
          part.map((m) => m.slice.block),
          { dedupToken: groupToken(part) },
        );
      } catch (error) {
        if (!refusedData(error)) throw error;
        // A value validation missed: each batch on its own, halved down to the records refused.
        for (const batch of new Set(part.map((m) => m.batch))) {
          const indexes = part.filter((m) => m.batch === batch).flatMap((m) => m.slice.indexes);
          const token = days.length > MAX_DAYS_PER_INSERT ? partToken(batch.token, `days ${first}-${last}`) : batch.token;
          refused.set(batch.token, [...(refused.get(batch.token) ?? []), ...(await insertOrSplit(this.engine, batch, indexes, token))]);
        }
      }
    }
    return refused;
  }
}

/** A slice to insert and its batch. */
interface MissingSlice {
  batch: PreparedBatch;
  slice: PreparedSlice;
}

/**
 * The token of a group's insert: the same slices (batch, day, rows) give the same token, so an
 * insert repeated whole stores nothing. It holds no `:`, so it is never a batch's token.
 */
function groupToken(slices: MissingSlice[]): string {
  const keys = slices.map(({ batch, slice }) => `${batch.token}\u0000${slice.day}\u0000${slice.indexes.length}`);
  return `group ${createHash('sha256').update(keys.sort().join('\u0001')).digest('base64url')}`;
}

const sliceKey = (b: Pick<PreparedBatch, 'customerId' | 'nodeId' | 'batchId'>, day: number) => `${b.customerId}\u0000${b.nodeId}\u0000${b.batchId}\u0000${day}`;

/** The slices the flows table does not hold yet, cut down to their missing records (see the head comment). */
async function missingSlices(engine: FlowEngine, batches: PreparedBatch[]): Promise<MissingSlice[]> {
  const stored = await storedSlices(engine, batches);
  const missing: MissingSlice[] = [];
  for (const batch of batches) {
    for (const slice of batch.slices) {
      const held = stored.get(sliceKey(batch, slice.day)) ?? 0;
      if (held === 0) missing.push({ batch, slice });
      else if (held < slice.indexes.length) {
        const ids = await storedIds(engine, batch, slice.day);
        const indexes = slice.indexes.filter((i) => !ids.has(recordId(batch.customerId, batch.nodeId, batch.batchId, i)));
        missing.push({ batch, slice: { ...slice, indexes, block: await batch.encode(indexes) } });
      }
    }
  }
  return missing;
}

/** How many distinct records of each (batch, day) the table holds, for the batches given. */
async function storedSlices(engine: FlowEngine, batches: PreparedBatch[]): Promise<Map<string, number>> {
  const slices = batches.flatMap((b) => b.slices);
  const p = new ParamBag();
  const sql = named(
    'flowstore:ingest.stored_slices',
    `SELECT customer_id, node_id, batch_id, toUInt32(toDate(timestamp)) AS day, uniqExact(id) AS stored FROM ${FLOWS_TABLE} ` +
      `WHERE customer_id IN ${p.add([...new Set(batches.map((b) => b.customerId))], 'Array(String)')} ` +
      `AND timestamp >= fromUnixTimestamp64Milli(${p.add(Math.min(...slices.map((s) => s.fromMs)), 'Int64')}, 'UTC') ` +
      `AND timestamp <= fromUnixTimestamp64Milli(${p.add(Math.max(...slices.map((s) => s.toMs)), 'Int64')}, 'UTC') ` +
      `AND batch_id IN ${p.add([...new Set(batches.map((b) => b.batchId))], 'Array(String)')} ` +
      'GROUP BY customer_id, node_id, batch_id, day',
  );
  const rows = await engine.query<{ customer_id: string; node_id: string; batch_id: string; day: number | string; stored: number | string }>(sql, p.values);
  return new Map(rows.map((r) => [sliceKey({ customerId: r.customer_id, nodeId: r.node_id, batchId: r.batch_id }, Number(r.day)), Number(r.stored)]));
}

/** The ids of a batch's records of one day that the table holds (a partly stored slice). */
async function storedIds(engine: FlowEngine, batch: PreparedBatch, day: number): Promise<Set<string>> {
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
 * Inserts the batch's records at `indexes` as one block; if the engine refuses their data,
 * inserts each half the same way, down to the single records it refuses, which are returned.
 * Validation should leave nothing for the engine to refuse: this keeps a value it missed from
 * poisoning its batch, which a collector would retry for ever. The halves have tokens of their
 * own, derived from the batch's, so a retried batch splits the same way.
 */
async function insertOrSplit(engine: FlowEngine, batch: PreparedBatch, indexes: readonly number[], dedupToken: string): Promise<RefusedRecords> {
  try {
    await engine.insertNative(FLOWS_TABLE, FLOW_ROW_COLUMNS, [await batch.encode(indexes)], { dedupToken });
    return [];
  } catch (error) {
    if (!refusedData(error)) throw error;
    if (indexes.length === 1) return [{ index: indexes[0]!, error: `the flow store refused this record: ${error.message.split('\n')[0]!.slice(0, 300)}` }];
    const refused: RefusedRecords = [];
    for (const half of [indexes.slice(0, indexes.length >> 1), indexes.slice(indexes.length >> 1)]) {
      refused.push(...(await insertOrSplit(engine, batch, half, partToken(dedupToken, `${half[0]}-${half.at(-1)}`))));
    }
    return refused;
  }
}
