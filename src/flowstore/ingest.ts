/**
 * Turns flow records into rows of the flows table and inserts a batch exactly once.
 *
 * Deduplication, in two layers (docs/flowstore.md "Duplicate batches"):
 * 1. the insert carries insert_deduplication_token = customer:node:batch, and the table remembers
 *    the last DEDUP_WINDOW_BLOCKS tokens, so a re-sent batch is dropped by the server at insert;
 * 2. record ids are derived from (customer, node, batch, position), so a batch re-sent after the
 *    window has passed produces rows with the same sorting key, which ReplacingMergeTree
 *    collapses when it merges.
 *
 * What a record may be (docs/collector-protocol.md section 4): at most MAX_RECORD_DEPTH levels deep,
 * finite numbers only, and timestamped within the table's retention and at most FUTURE_TOLERANCE_MS
 * ahead; anything else is refused on its own, never by failing its batch.
 */
import { createHash } from 'node:crypto';
import { COLUMNS, EXTRAS_COLUMN, SOURCE_COLUMN, type ColumnDef } from './columns.js';
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine, InsertOptions } from './engine.js';
import { FlowEngineError, FlowIngestError } from './errors.js';
import { encodeNativeBlock, nativeLayout } from './native-block.js';
import { currentRetentionDays } from './schema.js';

export interface FlowBatch {
  customerId: string;
  nodeId: string;
  /** Unique per node; the same id means the same batch (a retry). */
  batchId: string;
  flows: readonly Record<string, unknown>[];
  /** Stamped as `meta.@ingest_time` on flows that do not carry one; default now. */
  ingestTimeMs?: number;
}

/** Paths the ingest sets itself; values sent for them in a record are ignored. */
const OWN_PATHS = new Set(['id', 'node_id', 'batch_id', 'meta.customer_id']);

/**
 * Every column ingest writes (all but those ClickHouse materializes), in the order of a FlowRow's
 * values, and their layout as one Native block (native-block.ts).
 */
const INSERT_LAYOUT = nativeLayout([
  ...COLUMNS.filter((c) => !c.materialized).map((c) => ({ name: c.column, type: c.type })),
  { name: EXTRAS_COLUMN, type: 'String' },
  { name: SOURCE_COLUMN, type: 'String' },
]);
export const FLOW_ROW_COLUMNS: readonly string[] = INSERT_LAYOUT.columns.map((c) => c.name);

/** A flows-table row: one value per FLOW_ROW_COLUMNS entry, at the same position (undefined when absent). */
export type FlowRow = unknown[];

/** Where a column's value sits in a FlowRow. */
export function flowRowSlot(column: string): number {
  const slot = FLOW_ROW_COLUMNS.indexOf(column);
  if (slot < 0) throw new Error(`flowRowSlot: ingest writes no column ${column}`);
  return slot;
}

const SLOT = {
  customerId: flowRowSlot('customer_id'),
  nodeId: flowRowSlot('node_id'),
  batchId: flowRowSlot('batch_id'),
  id: flowRowSlot('id'),
  timestamp: flowRowSlot('timestamp'),
  ingestTime: flowRowSlot('meta_ingest_time'),
  extras: flowRowSlot(EXTRAS_COLUMN),
  source: flowRowSlot(SOURCE_COLUMN),
};

/** The registry as a tree of record keys, so a record is converted in one walk over its own keys. */
interface KeyNode {
  col?: ColumnDef;
  slot?: number;
  children?: Map<string, KeyNode>;
}
const ROOT: KeyNode = { children: new Map() };
for (const col of COLUMNS) {
  if (col.role === 'derived') continue;
  let node = ROOT;
  for (const key of col.path.split('.')) {
    node.children ??= new Map();
    let next = node.children.get(key);
    if (!next) node.children.set(key, (next = {}));
    node = next;
  }
  node.col = col;
  node.slot = flowRowSlot(col.column);
}

/** The record id: stable for a given (customer, node, batch, position), so a retried batch repeats it. */
export function recordId(customerId: string, nodeId: string, batchId: string, index: number): string {
  return createHash('sha256').update(`${customerId}\u0000${nodeId}\u0000${batchId}\u0000${index}`).digest('base64url').slice(0, 22);
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  // Lax like the SDK's readers: a numeric string is a number.
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** The last instant a `DateTime64` column holds (ClickHouse: up to 2299-12-31); later ones are refused. */
const LATEST_STORED_MS = Date.UTC(2299, 11, 31, 23, 59, 59, 999);

/**
 * A lone UTF-16 surrogate (text cut in the middle of a character) becomes U+FFFD, as any UTF-8
 * encoder makes it: ClickHouse refuses the JSON escape of one, which failed the whole batch.
 */
const wellFormed = (s: string) => (s.isWellFormed() ? s : s.toWellFormed());

/** Refuses a leaf's value, naming the path and what it should have been. */
function refuse(col: ColumnDef, v: unknown, index: number, what: string): never {
  throw new FlowIngestError(index, col.path, `expected ${what}, got ${JSON.stringify(v)?.slice(0, 80)}`);
}

// No closures in here: it runs for every leaf of every record, and under tsx each closure made
// costs a property definition (its name), which was a quarter of the ingest's own CPU.
function storedValue(col: ColumnDef, v: unknown, index: number): unknown {
  switch (col.kind) {
    case 'string':
    case 'ip':
      return typeof v === 'string' ? wellFormed(v) : refuse(col, v, index, 'a string');
    case 'int': {
      const n = toNumber(v);
      if (n === undefined || !Number.isInteger(n)) return refuse(col, v, index, 'an integer');
      const [lo, hi] = col.intRange!;
      return n >= lo && n <= hi ? n : refuse(col, v, index, `an integer in [${lo}, ${hi}]`);
    }
    case 'float': {
      const n = toNumber(v);
      return n === undefined ? refuse(col, v, index, 'a number') : n;
    }
    case 'bool':
      return typeof v === 'boolean' ? v : refuse(col, v, index, 'true or false');
    case 'timestamp': {
      const n = toNumber(v);
      return n !== undefined && Number.isInteger(n) && n >= 0 && n <= LATEST_STORED_MS ? n : refuse(col, v, index, 'epoch milliseconds up to 2299-12-31');
    }
    case 'string[]':
      return isStringArray(v) ? v.map(wellFormed) : refuse(col, v, index, 'an array of strings');
    case 'float[]':
      return isFiniteArray(v) ? v : refuse(col, v, index, 'an array of finite numbers');
    case 'json':
      return Array.isArray(v) ? JSON.stringify(v) : refuse(col, v, index, 'an array');
  }
}

function isStringArray(v: unknown): v is string[] {
  if (!Array.isArray(v)) return false;
  for (const e of v) if (typeof e !== 'string') return false;
  return true;
}

function isFiniteArray(v: unknown): v is number[] {
  if (!Array.isArray(v)) return false;
  for (const e of v) if (typeof e !== 'number' || !Number.isFinite(e)) return false;
  return true;
}

const isEmptyArray = (v: unknown) => Array.isArray(v) && v.length === 0;

/**
 * How deep a record may nest, the record itself being level 1 (the registry's deepest leaf is at
 * level 4). Generous for any real record, and far below what JSON.stringify can walk: a record
 * 5,000 levels deep made it throw a RangeError, which failed its whole batch with a 503 that a
 * collector retried for ever.
 */
export const MAX_RECORD_DEPTH = 64;

/** `a.b[0].c`, cut after about 100 characters at a key's end. */
function pathText(keys: readonly (string | number)[]): string {
  let text = '';
  for (const [i, k] of keys.entries()) {
    if (text.length >= 100) return `${text}…`;
    text += typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k;
  }
  return text;
}

/**
 * Refuses (FlowIngestError) a record nested deeper than MAX_RECORD_DEPTH, or holding a number that
 * is not finite (JSON.parse reads a literal beyond ±1.8e308, such as 1e400, as Infinity, which would
 * be stored as 0 or null). Runs before anything serialises the record, and recursion stops at the
 * limit, so no record can exhaust the stack. Every record goes through it: the walk builds nothing
 * until it finds a problem, and then only the path to it.
 */
function checkShape(record: object, index: number): void {
  const problem = shapeProblem(record, 1);
  if (problem) throw new FlowIngestError(index, pathText(problem.keys), problem.reason);
}

interface ShapeProblem {
  /** Where, from the record down: filled in on the way back up. */
  keys: (string | number)[];
  reason: string;
}

function shapeProblem(value: object, depth: number): ShapeProblem | undefined {
  if (depth > MAX_RECORD_DEPTH) return { keys: [], reason: `nests deeper than ${MAX_RECORD_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = childProblem(value[i], depth);
      if (problem) {
        problem.keys.unshift(i);
        return problem;
      }
    }
  } else {
    for (const key in value) {
      const problem = childProblem((value as Record<string, unknown>)[key], depth);
      if (problem) {
        problem.keys.unshift(key);
        return problem;
      }
    }
  }
  return undefined;
}

function childProblem(child: unknown, depth: number): ShapeProblem | undefined {
  if (typeof child === 'number') return Number.isFinite(child) ? undefined : { keys: [], reason: 'expected a finite number, got a number beyond ±1.8e308' };
  return child !== null && typeof child === 'object' ? shapeProblem(child, depth + 1) : undefined;
}

/**
 * Copies the known leaves of `obj` into `row` and returns the unknown keys (nesting kept), or
 * undefined when there are none. A known object sent as something else is kept as unknown.
 * `record` receives the record as search returns it: known leaves as stored, unknown keys as
 * sent, no nulls of known leaves, no empty arrays, no empty objects.
 */
function walk(
  obj: Record<string, unknown>,
  node: KeyNode,
  row: FlowRow,
  record: Record<string, unknown>,
  index: number,
): Record<string, unknown> | undefined {
  let extras: Record<string, unknown> | undefined;
  for (const key in obj) {
    const v = obj[key];
    if (v === undefined) continue;
    const child = node.children?.get(key);
    if (child?.col) {
      if (v === null || OWN_PATHS.has(child.col.path)) continue;
      const stored = storedValue(child.col, v, index);
      row[child.slot!] = stored;
      if (!isEmptyArray(v)) record[key] = child.col.kind === 'json' ? v : stored;
    } else if (child && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const inner: Record<string, unknown> = {};
      const innerExtras = walk(v as Record<string, unknown>, child, row, inner, index);
      if (innerExtras) (extras ??= {})[key] = innerExtras;
      for (const _ in inner) {
        record[key] = inner;
        break;
      }
    } else if (!child || v !== null) {
      (extras ??= {})[key] = v;
      record[key] = v;
    }
  }
  return extras;
}

/** One flows-table row for a record. Throws FlowIngestError on a bad leaf or shape. */
export function flowToRow(batch: Omit<FlowBatch, 'flows'>, flow: Record<string, unknown>, index: number): FlowRow {
  const row: FlowRow = new Array(FLOW_ROW_COLUMNS.length);
  row[SLOT.customerId] = batch.customerId;
  row[SLOT.nodeId] = batch.nodeId;
  row[SLOT.batchId] = batch.batchId;
  row[SLOT.id] = recordId(batch.customerId, batch.nodeId, batch.batchId, index);
  checkShape(flow, index);
  const record: Record<string, unknown> = {};
  const extras = walk(flow, ROOT, row, record, index);
  if (row[SLOT.timestamp] === undefined) throw new FlowIngestError(index, '@timestamp', 'is required');
  row[SLOT.ingestTime] ??= batch.ingestTimeMs ?? Date.now();
  row[SLOT.extras] = extras ? JSON.stringify(extras) : '';
  // The known `meta` leaves win over whatever else was sent as `meta`.
  const meta = record.meta !== null && typeof record.meta === 'object' && !Array.isArray(record.meta) ? (record.meta as Record<string, unknown>) : {};
  record.meta = { ...meta, customer_id: batch.customerId, '@ingest_time': row[SLOT.ingestTime] };
  row[SLOT.source] = JSON.stringify(record);
  return row;
}

/** A row's timestamp (epoch ms). */
const rowTime = (row: FlowRow) => row[SLOT.timestamp] as number;

export function dedupTokenFor(batch: Pick<FlowBatch, 'customerId' | 'nodeId' | 'batchId'>): string {
  if (/\s/.test(batch.batchId)) throw new Error('dedupTokenFor: a batch id must not hold white space (part tokens rely on it)');
  return `${batch.customerId}:${batch.nodeId}:${batch.batchId}`;
}

/**
 * The dedup token of a part of a batch's insert (some of its days, half of its records). The part
 * follows a space, which no batch id holds (ingest.service.ts), so no batch's own token equals a
 * part's: with `:` a batch `b1:0-3` was dropped as a repeat of half of batch `b1`.
 */
const partToken = (token: string, part: string) => `${token} ${part}`;

/** Inserts rows made by flowToRow into the flows table (or a table like it), as one Native block. */
export function insertFlowRows(engine: FlowEngine, rows: readonly FlowRow[], opts: InsertOptions & { table?: string } = {}): Promise<void> {
  const { table = FLOWS_TABLE, ...insert } = opts;
  return engine.insertNative(table, FLOW_ROW_COLUMNS, encodeNativeBlock(INSERT_LAYOUT, rows), insert);
}

/** Inserts a batch; inserting the same batch again stores nothing new. */
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

/**
 * Validates each record on its own and stores the valid ones with deduplicated inserts: a bad
 * record never holds back the others, and a retried batch (same id, same records) stores nothing
 * twice. Records keep their index in the batch, so their ids are stable across retries.
 */
export async function ingestFlowBatch(
  engine: FlowEngine,
  batch: Omit<FlowBatch, 'flows'> & { flows: readonly unknown[] },
  opts: { signal?: AbortSignal } = {},
): Promise<IngestOutcome> {
  const ingestTimeMs = batch.ingestTimeMs ?? Date.now();
  const valid: Kept[] = [];
  const rejected: IngestOutcome['rejected'] = [];
  batch.flows.forEach((flow, index) => {
    if (typeof flow !== 'object' || flow === null || Array.isArray(flow)) {
      rejected.push({ index, error: 'a flow record must be a JSON object' });
      return;
    }
    try {
      valid.push({ row: flowToRow({ ...batch, ingestTimeMs }, flow as Record<string, unknown>, index), index });
    } catch (error) {
      if (!(error instanceof FlowIngestError)) throw error;
      rejected.push({ index, error: error.message });
    }
  });
  const kept: Kept[] = [];
  if (valid.length) {
    const outOfTime = await timeWindowCheck(engine);
    for (const record of valid) {
      const error = outOfTime(rowTime(record.row));
      if (error) rejected.push({ index: record.index, error: new FlowIngestError(record.index, '@timestamp', error).message });
      else kept.push(record);
    }
  }
  const refused = kept.length ? await insertByDays(engine, kept, dedupTokenFor(batch), opts.signal) : [];
  rejected.push(...refused);
  rejected.sort((a, b) => a.index - b.index);
  return { accepted: kept.length - refused.length, rejected };
}

/** A record's row, ready to insert, and the record's place in its batch. */
interface Kept {
  row: FlowRow;
  index: number;
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

/**
 * ClickHouse's default `max_partitions_per_insert_block`: an insert whose rows fall on more day
 * partitions is refused whole (code 252, the same code as "too many parts", a real overload).
 */
export const MAX_DAYS_PER_INSERT = 100;

/**
 * Inserts the rows as one block when they fall on at most MAX_DAYS_PER_INSERT days (the table is
 * partitioned by UTC day), else as one block per MAX_DAYS_PER_INSERT consecutive days, each with
 * a dedup token of its own derived from the batch's. The grouping depends only on the records,
 * so a retried batch groups the same way and stores nothing twice. Grouping, rather than raising
 * the setting on the insert, keeps every insert within the default on chDB and on any server, and
 * keeps one insert from writing hundreds of parts.
 */
async function insertByDays(engine: FlowEngine, records: Kept[], dedupToken: string, signal: AbortSignal | undefined): Promise<IngestOutcome['rejected']> {
  const dayOf = (record: Kept) => Math.floor(rowTime(record.row) / DAY_MS);
  const days = [...new Set(records.map(dayOf))].sort((a, b) => a - b);
  if (days.length <= MAX_DAYS_PER_INSERT) return insertOrSplit(engine, records, dedupToken, signal);
  const refused: IngestOutcome['rejected'] = [];
  for (let i = 0; i < days.length; i += MAX_DAYS_PER_INSERT) {
    const [first, last] = [days[i]!, days[Math.min(i + MAX_DAYS_PER_INSERT, days.length) - 1]!];
    const part = records.filter((record) => dayOf(record) >= first && dayOf(record) <= last);
    refused.push(...(await insertOrSplit(engine, part, partToken(dedupToken, `days ${first}-${last}`), signal)));
  }
  return refused;
}

/**
 * ClickHouse codes for values it cannot read into the table (parse and type errors): a batch
 * refused for one of these would be refused again however often a collector retried it.
 */
const REFUSED_DATA_CODES = new Set([6, 25, 26, 27, 32, 38, 41, 53, 69, 70, 72, 117, 131]);

const refusedData = (error: unknown): error is FlowEngineError =>
  error instanceof FlowEngineError && error.clickhouseCode !== undefined && REFUSED_DATA_CODES.has(error.clickhouseCode);

/**
 * Inserts the records as one block; if the engine refuses their data, inserts each half the same
 * way, down to the single records it refuses, which are returned as rejected. Validation above
 * should leave nothing for the engine to refuse: this keeps a value it missed from poisoning its
 * batch. The halves have dedup tokens of their own, derived from the batch's, so a retried batch
 * splits the same way and stores nothing twice.
 */
async function insertOrSplit(engine: FlowEngine, records: Kept[], dedupToken: string, signal: AbortSignal | undefined): Promise<IngestOutcome['rejected']> {
  try {
    await insertFlowRows(engine, records.map((record) => record.row), { dedupToken, ...(signal ? { signal } : {}) });
    return [];
  } catch (error) {
    if (!refusedData(error)) throw error;
    if (records.length === 1) return [{ index: records[0]!.index, error: `the flow store refused this record: ${error.message.split('\n')[0]!.slice(0, 300)}` }];
    const refused: IngestOutcome['rejected'] = [];
    for (const half of [records.slice(0, records.length >> 1), records.slice(records.length >> 1)]) {
      const span = `${half[0]!.index}-${half.at(-1)!.index}`;
      refused.push(...(await insertOrSplit(engine, half, partToken(dedupToken, span), signal)));
    }
    return refused;
  }
}
