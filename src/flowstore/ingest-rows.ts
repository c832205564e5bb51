/**
 * A flow record as a row of the flows table: each known leaf checked and stored in its column,
 * unknown keys kept as extras, the record as search returns it kept as `source`.
 *
 * What a record may be (docs/collector-protocol.md section 4): at most MAX_RECORD_DEPTH levels deep,
 * finite numbers only; anything else is refused on its own (FlowIngestError), never by failing its
 * batch.
 */
import { createHash } from 'node:crypto';
import { COLUMNS, EXTRAS_COLUMN, SOURCE_COLUMN, type ColumnDef } from './columns.js';
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine, InsertOptions } from './engine.js';
import { FlowIngestError } from './errors.js';
import { encodeNativeBlock, encodeNativeBlockInTurns, nativeLayout } from './native-block.js';

/** What ingest stamps on every row of a batch. */
export interface RowStamp {
  customerId: string;
  nodeId: string;
  batchId: string;
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
export function flowToRow(batch: RowStamp, flow: Record<string, unknown>, index: number): FlowRow {
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
export const rowTime = (row: FlowRow) => row[SLOT.timestamp] as number;

/** Rows made by flowToRow as one Native block of FLOW_ROW_COLUMNS (in a worker thread). */
export const flowRowsBlock = (rows: readonly FlowRow[]): Buffer => encodeNativeBlock(INSERT_LAYOUT, rows);

/** The same, over turns of the event loop (on the API thread). */
export const flowRowsBlockInTurns = (rows: readonly FlowRow[]): Promise<Buffer> => encodeNativeBlockInTurns(INSERT_LAYOUT, rows);

/** Inserts rows made by flowToRow into the flows table (or a table like it), as one Native block. */
export async function insertFlowRows(engine: FlowEngine, rows: readonly FlowRow[], opts: InsertOptions & { table?: string } = {}): Promise<void> {
  const { table = FLOWS_TABLE, ...insert } = opts;
  await engine.insertNative(table, FLOW_ROW_COLUMNS, [await flowRowsBlockInTurns(rows)], insert);
}
