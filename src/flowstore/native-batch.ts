/**
 * A collector's batch sent as one ClickHouse Native block (docs/collector-protocol.md 4.1), its
 * columns named by the record's paths: read into typed columns (native-batch-read.ts), checked
 * column by column, and written out as the flows table's insert block, `source` included, with
 * no object per record. The JSON batch's parse and per-record walk are most of the ingest
 * worker's CPU (docs/flowstore.md "Throughput").
 *
 * A record kept from a Native batch is stored as the same record sent as JSON would be: the same
 * columns, extras and `source` (keys in the batch's column order), the same refusals.
 */
import { type ColumnDef, COLUMNS, EXTRAS_COLUMN, SOURCE_COLUMN } from './columns.js';
import { FlowIngestError } from './errors.js';
import { DaySlicer, type DaySlice, type Rejection, type TimeWindow, outsideWindow } from './ingest-convert.js';
import { FLOW_ROW_COLUMNS, INSERT_LAYOUT, OWN_PATHS, type RowStamp, flowRowSlot, recordId } from './ingest-rows.js';
import { BlockWriter, FIXED_WIDTH } from './native-block.js';
import { NativeBatchError, type ReadColumn, readNativeBlock } from './native-batch-read.js';
import { LATEST_STORED_MS, expectedText } from './record-leaves.js';
import { MAX_RECORD_DEPTH, isOutOfShape } from './record-shape.js';

export { NativeBatchError } from './native-batch-read.js';

/** The content type that selects this format on the ingest endpoint. */
export const NATIVE_BATCH_CONTENT_TYPE = 'application/x-clickhouse-native';

const INGEST_TIME_PATH = 'meta.@ingest_time';

/** Registry columns a batch may fill, by path. */
const KNOWN = new Map(COLUMNS.filter((c) => c.role !== 'derived' && !OWN_PATHS.has(c.path)).map((c) => [c.path, c]));
/** Every registry leaf's path: a sent path may not run through one (`src.ip.x`). */
const LEAF_PATHS = new Set(COLUMNS.filter((c) => c.role !== 'derived').map((c) => c.path));

/** The types each kind of registry column takes (docs/collector-protocol.md 4.1). */
const INTEGERS = ['UInt8', 'UInt16', 'UInt32', 'UInt64', 'Int8', 'Int16', 'Int32', 'Int64'];
const TAKES: Record<ColumnDef['kind'], readonly string[]> = {
  string: ['String'],
  ip: ['String'],
  json: ['String'],
  int: [...INTEGERS, 'Float64'],
  float: [...INTEGERS, 'Float64'],
  bool: ['Bool', 'UInt8'],
  timestamp: ['Int64', 'UInt64', 'DateTime64'],
  'string[]': ['String'],
  'float[]': ['Float64'],
};

/** A sent column the record keeps. */
interface Field {
  readonly column: ReadColumn;
  readonly path: string;
  /** The registry column it fills; none for an extra. */
  readonly def: ColumnDef | undefined;
  /** `json` columns: each row's array as JSON text, once checked. */
  json: (string | undefined)[] | undefined;
}

/** A key of the record as JSON text is built: a leaf (a field, or the row's ingest time) or an object. */
interface JsonNode {
  /** `"key":` as UTF-8. */
  readonly key: Buffer;
  field: Field | undefined;
  ingestTime: boolean;
  children: JsonNode[] | undefined;
}

export class NativeBatch {
  private readonly bySlot = new Map<number, Field>();
  private readonly source: JsonNode[];
  private readonly extras: JsonNode[];
  /** Each row's `meta.@ingest_time`, set by convert(). */
  private ingestTimes: Float64Array | undefined;

  private constructor(
    readonly rows: number,
    private readonly body: Buffer,
    private readonly fields: readonly Field[],
  ) {
    for (const field of fields) if (field.def) this.bySlot.set(flowRowSlot(field.def.column), field);
    const kept = fields.filter((f) => f.path !== INGEST_TIME_PATH);
    this.source = jsonTree(kept, true);
    this.extras = jsonTree(
      kept.filter((f) => !f.def),
      false,
    );
  }

  /**
   * Reads a batch's body. Throws NativeBatchError when the batch is refused as a whole, and calls
   * `onTooManyRows` before reading the columns of one with more than `maxRows` records.
   */
  static read(body: Buffer, maxRows: number, onTooManyRows: (rows: number) => never): NativeBatch {
    const block = readNativeBlock(body, maxRows, onTooManyRows);
    const paths = new Set<string>();
    for (const column of block.columns) {
      if (paths.has(column.name)) throw new NativeBatchError(`column ${column.name} is sent twice`);
      paths.add(column.name);
    }
    const fields: Field[] = [];
    for (const column of block.columns) {
      const path = column.name;
      if (OWN_PATHS.has(path)) continue;
      checkPath(path, paths);
      const def = KNOWN.get(path);
      if (def && !(TAKES[def.kind].includes(column.scalar) && column.array === def.kind.endsWith('[]'))) {
        throw new NativeBatchError(`column ${path}: ${def.kind} fields do not take ${column.type} (docs/collector-protocol.md 4.1)`);
      }
      fields.push({ column, path, def, json: undefined });
    }
    return new NativeBatch(block.rows, body, fields);
  }

  /** Checks every record: the refused ones with the JSON batch's reasons, the kept ones by UTC day. */
  convert(stamp: RowStamp, window: TimeWindow): { rejected: Rejection[]; days: DaySlice[] } {
    const reasons: (string | undefined)[] = new Array(this.rows);
    const refuse = (r: number, path: string, reason: string) => {
      reasons[r] ??= new FlowIngestError(r, path, reason).message;
    };
    for (const field of this.fields) checkField(field, this.rows, this.body, refuse);
    const ingestTimes = new Float64Array(this.rows).fill(stamp.ingestTimeMs ?? Date.now());
    const sentIngestTime = this.fields.find((f) => f.path === INGEST_TIME_PATH);
    if (sentIngestTime) for (let r = 0; r < this.rows; r++) if (present(sentIngestTime.column, r)) ingestTimes[r] = sentIngestTime.column.numbers![r]!;
    this.ingestTimes = ingestTimes;

    const timestamp = this.fields.find((f) => f.path === '@timestamp')?.column;
    const rejected: Rejection[] = [];
    const days = new DaySlicer();
    for (let r = 0; r < this.rows; r++) {
      if (!timestamp || !present(timestamp, r)) refuse(r, '@timestamp', 'is required');
      const outside = reasons[r] === undefined ? outsideWindow(timestamp!.numbers![r]!, window) : undefined;
      if (outside) refuse(r, '@timestamp', outside);
      if (reasons[r] !== undefined) rejected.push({ index: r, error: reasons[r]! });
      else days.add(r, timestamp!.numbers![r]!);
    }
    return { rejected, days: days.slices() };
  }

  /** The insert block of the records at `indexes` (kept by convert()), in the flows table's insert layout. */
  block(stamp: RowStamp, indexes: readonly number[]): Buffer {
    const ingestTimes = this.ingestTimes;
    if (!ingestTimes) throw new Error('NativeBatch.block: convert() first');
    const n = indexes.length;
    // A row takes about 3.6 times its bytes in the batch (its columns, `source` and the stamps):
    // sized so, the block is written without growing, which copied up to 40 MB for 5,000 rows.
    const out = new BlockWriter(64 * 1024 + n * (512 + Math.ceil((4 * this.body.length) / Math.max(1, this.rows))));
    out.varUInt(FLOW_ROW_COLUMNS.length);
    out.varUInt(n);
    const each = <T>(value: (r: number) => T) => indexes.map(value);
    const json = new BlockWriter(4096);
    for (const [c, name] of FLOW_ROW_COLUMNS.entries()) {
      const declared = INSERT_LAYOUT.declared[c]!;
      out.string(name);
      out.string(declared);
      const field = this.bySlot.get(c);
      const encode = (values: readonly unknown[]) => INSERT_LAYOUT.encoders[c]!(out, values);
      if (name === 'customer_id') encode(each(() => stamp.customerId));
      else if (name === 'node_id') encode(each(() => stamp.nodeId));
      else if (name === 'batch_id') encode(each(() => stamp.batchId));
      else if (name === 'id') encode(each((r) => recordId(stamp.customerId, stamp.nodeId, stamp.batchId, r)));
      else if (name === 'meta_ingest_time') encode(each((r) => ingestTimes[r]));
      else if (name === SOURCE_COLUMN) for (const r of indexes) this.writeJson(out, json, this.source, r, stamp);
      else if (name === EXTRAS_COLUMN) for (const r of indexes) this.writeJson(out, json, this.extras, r, stamp);
      else if (field) writeField(out, declared, field, indexes, this.body);
      else writeAbsent(out, declared, n);
    }
    return out.buf.subarray(0, out.pos);
  }

  /** One row's object of `nodes` as a String value: its JSON text, or '' when it has no key. */
  private writeJson(out: BlockWriter, json: BlockWriter, nodes: readonly JsonNode[], r: number, stamp: RowStamp): void {
    json.pos = 0;
    const wrote = writeObject(json, nodes, r, { body: this.body, customerId: stamp.customerId, ingestTime: this.ingestTimes![r]! });
    const length = wrote ? json.pos : 0;
    out.varUInt(length);
    copyBytes(out, json.buf, 0, length);
  }
}

/** Refuses (the batch) a path that is empty in part, too deep, or runs through another field's leaf. */
function checkPath(path: string, sent: ReadonlySet<string>): void {
  const keys = path.split('.');
  if (keys.some((k) => k === '')) throw new NativeBatchError(`column ${JSON.stringify(path)}: a path is keys joined by '.', none of them empty`);
  if (keys.length > MAX_RECORD_DEPTH) throw new NativeBatchError(`column ${path.slice(0, 100)}…: nests deeper than ${MAX_RECORD_DEPTH} levels`);
  for (let i = 1; i < keys.length; i++) {
    const prefix = keys.slice(0, i).join('.');
    if (sent.has(prefix) || LEAF_PATHS.has(prefix)) throw new NativeBatchError(`column ${path}: ${prefix} is a field, not an object`);
  }
  if (path === 'meta') throw new NativeBatchError(`column meta: meta is an object (the service fills meta.customer_id)`);
}

/** Whether row `r` has a value: not NULL, and for an array not empty. */
function present(column: ReadColumn, r: number): boolean {
  if (column.nulls?.[r]) return false;
  const ends = column.elementEnds;
  return !ends || ends[r]! > (r ? ends[r - 1]! : 0);
}

/** Refuses each record whose value of `field` its kind does not take (the JSON batch's reasons). */
function checkField(field: Field, rows: number, body: Buffer, refuse: (r: number, path: string, reason: string) => void): void {
  const { column, def, path } = field;
  const numbers = column.numbers;
  const kind = def?.kind;
  if (kind === 'json') {
    field.json = new Array(rows);
    for (let r = 0; r < rows; r++) {
      if (!present(column, r)) continue;
      const text = column.mended?.get(r) ?? body.toString('utf8', column.starts![r], column.ends![r]);
      const value = parseJson(text);
      if (!Array.isArray(value)) refuse(r, path, `expected an array, got ${excerptOf(text)}`);
      else if (isOutOfShape(value, path.split('.').length + 1)) refuse(r, path, `is out of shape (deeper than ${MAX_RECORD_DEPTH} levels)`);
      else field.json[r] = JSON.stringify(value);
    }
    return;
  }
  if (!numbers) return;
  const each = (ok: (v: number) => boolean, what: string) => {
    if (column.array) {
      const ends = column.elementEnds!;
      for (let r = 0; r < rows; r++) {
        for (let e = r ? ends[r - 1]! : 0; e < ends[r]!; e++) {
          if (!ok(numbers[e]!)) {
            refuse(r, path, expectedText(what, numbers[e]));
            break;
          }
        }
      }
    } else {
      for (let r = 0; r < rows; r++) if (!column.nulls?.[r] && !ok(numbers[r]!)) refuse(r, path, expectedText(what, numbers[r]));
    }
  };
  switch (kind) {
    case 'int': {
      const [lo, hi] = def!.intRange!;
      each(Number.isInteger, 'an integer');
      return each((v) => !Number.isInteger(v) || (v >= lo && v <= hi), `an integer in [${lo}, ${hi}]`);
    }
    case 'bool':
      return each((v) => v === 0 || v === 1, 'true or false');
    case 'timestamp':
      return each((v) => Number.isInteger(v) && v >= 0 && v <= LATEST_STORED_MS, 'epoch milliseconds up to 2299-12-31');
    default:
      // Floats, known or extra: only finite numbers, as a JSON record may hold.
      return each(Number.isFinite, 'a finite number');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const excerptOf = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text);

/** The JSON tree of `fields` in their order, and for `source` the `meta` the service stamps. */
function jsonTree(fields: readonly Field[], stamped: boolean): JsonNode[] {
  const root: JsonNode[] = [];
  const place = (keys: string[]): JsonNode => {
    let level = root;
    let node: JsonNode | undefined;
    for (const [i, key] of keys.entries()) {
      const keyBytes = Buffer.from(`${JSON.stringify(key)}:`);
      node = level.find((n) => n.key.equals(keyBytes));
      if (!node) level.push((node = { key: keyBytes, field: undefined, ingestTime: false, children: i < keys.length - 1 ? [] : undefined }));
      level = node.children ?? [];
    }
    return node!;
  };
  for (const field of fields) place(field.path.split('.')).field = field;
  if (stamped) {
    place(['meta', 'customer_id']);
    place(['meta', '@ingest_time']).ingestTime = true;
  }
  return root;
}

interface RowContext {
  body: Buffer;
  customerId: string;
  ingestTime: number;
}

const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const COMMA = 0x2c;

/** Writes row `r`'s object of `nodes`; false (and nothing written) when it has no key. */
function writeObject(w: BlockWriter, nodes: readonly JsonNode[], r: number, row: RowContext): boolean {
  const open = w.pos;
  w.ensure(1);
  w.buf[w.pos++] = BRACE_OPEN;
  let empty = true;
  for (const node of nodes) {
    const field = node.field;
    if (field && !present(field.column, r)) continue;
    const mark = w.pos;
    if (!empty) {
      w.ensure(1);
      w.buf[w.pos++] = COMMA;
    }
    copyBytes(w, node.key, 0, node.key.length);
    if (node.children ? writeObject(w, node.children, r, row) : writeLeaf(w, node, r, row)) empty = false;
    else w.pos = mark;
  }
  if (empty) {
    w.pos = open;
    return false;
  }
  w.ensure(1);
  w.buf[w.pos++] = BRACE_CLOSE;
  return true;
}

/** A present leaf's value (writeObject checked it is present). */
function writeLeaf(w: BlockWriter, node: JsonNode, r: number, row: RowContext): boolean {
  if (node.ingestTime) return writeAscii(w, String(row.ingestTime));
  const field = node.field;
  if (!field) return writeAscii(w, JSON.stringify(row.customerId));
  const column = field.column;
  // An empty array is stored, but left out of the record (as in a JSON batch).
  if (field.json) return field.json[r] !== '[]' && writeUtf8(w, field.json[r]!);
  if (!column.array) return writeValue(w, field, r, row.body);
  const ends = column.elementEnds!;
  const first = r ? ends[r - 1]! : 0;
  w.ensure(1);
  w.buf[w.pos++] = 0x5b; // [
  for (let e = first; e < ends[r]!; e++) {
    if (e !== first) {
      w.ensure(1);
      w.buf[w.pos++] = COMMA;
    }
    writeValue(w, field, e, row.body);
  }
  w.ensure(1);
  w.buf[w.pos++] = 0x5d; // ]
  return true;
}

/** Value (or element) `i` of a field as JSON. */
function writeValue(w: BlockWriter, field: Field, i: number, body: Buffer): boolean {
  const column = field.column;
  if (column.scalar !== 'String') {
    const v = column.numbers![i]!;
    if (column.scalar === 'Bool' || field.def?.kind === 'bool') return writeAscii(w, v ? 'true' : 'false');
    if (Number.isSafeInteger(v) && !Object.is(v, -0)) writeInteger(w, v);
    else writeAscii(w, String(v));
    return true;
  }
  const mended = column.mended?.get(i);
  if (mended !== undefined) return writeUtf8(w, JSON.stringify(mended));
  const start = column.starts![i]!;
  const end = column.ends![i]!;
  // Most text needs no escape: its bytes go between quotes as they are.
  for (let p = start; p < end; p++) {
    const byte = body[p]!;
    if (byte < 0x20 || byte === 0x22 || byte === 0x5c) return writeUtf8(w, JSON.stringify(body.toString('utf8', start, end)));
  }
  w.ensure(end - start + 2);
  w.buf[w.pos++] = 0x22;
  copyBytes(w, body, start, end);
  w.buf[w.pos++] = 0x22;
  return true;
}

/** Copies body bytes [start, end) to the writer: a loop for short text, where Buffer.copy's call costs more than the copy. */
function copyBytes(w: BlockWriter, body: Buffer, start: number, end: number): void {
  w.ensure(end - start);
  if (end - start > 32) {
    body.copy(w.buf, w.pos, start, end);
    w.pos += end - start;
    return;
  }
  const buf = w.buf;
  let pos = w.pos;
  for (let p = start; p < end; p++) buf[pos++] = body[p]!;
  w.pos = pos;
}

/** An integer's decimal digits, written without making a string. */
function writeInteger(w: BlockWriter, v: number): void {
  w.ensure(21);
  const buf = w.buf;
  if (v < 0) {
    buf[w.pos++] = 0x2d;
    v = -v;
  }
  let digits = 1;
  for (let rest = v; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let p = w.pos + digits - 1; p >= w.pos; p--) {
    buf[p] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  }
  w.pos += digits;
}

/** ASCII text (numbers' text, `true`): a loop, cheaper than a call into the encoder for a few bytes. */
function writeAscii(w: BlockWriter, text: string): true {
  w.ensure(text.length);
  const buf = w.buf;
  let pos = w.pos;
  for (let i = 0; i < text.length; i++) buf[pos++] = text.charCodeAt(i);
  w.pos = pos;
  return true;
}

function writeUtf8(w: BlockWriter, text: string): true {
  w.ensure(text.length * 3);
  w.pos += w.buf.write(text, w.pos, 'utf8');
  return true;
}

/** A sent column's values at `indexes`, as the table's `declared` type for it. */
function writeField(out: BlockWriter, declared: string, field: Field, indexes: readonly number[], body: Buffer): void {
  const column = field.column;
  let type = declared;
  if (type.startsWith('Nullable(')) {
    out.ensure(indexes.length);
    for (const r of indexes) out.buf[out.pos++] = present(column, r) ? 0 : 1;
    type = type.slice('Nullable('.length, -1);
  }
  if (type.startsWith('Array(')) {
    const ends = column.elementEnds!;
    const elements: number[] = [];
    out.ensure(indexes.length * 8);
    for (const r of indexes) {
      for (let e = r ? ends[r - 1]! : 0; e < ends[r]!; e++) elements.push(e);
      out.int64(elements.length);
    }
    return writeScalars(out, type.slice('Array('.length, -1), column, elements, body);
  }
  if (field.json) {
    for (const r of indexes) out.string(field.json[r] ?? '');
    return;
  }
  writeScalars(out, type, column, indexes, body, true);
}

/** A column no record of the batch has: every value NULL, or its type's zero (an empty string or array). */
function writeAbsent(out: BlockWriter, declared: string, n: number): void {
  let type = declared;
  if (type.startsWith('Nullable(')) {
    out.ensure(n);
    out.buf.fill(1, out.pos, (out.pos += n));
    type = type.slice('Nullable('.length, -1);
  }
  // A zero of any of these types is all zero bytes: a String's is its length, 0; an Array's its end offset.
  const width = type === 'String' ? 1 : type === 'Int64' || type.startsWith('Array(') || type.startsWith('DateTime64(') ? 8 : FIXED_WIDTH[type]?.width;
  if (width === undefined) throw new Error(`native batch: no zero for the type ${type}`);
  out.ensure(n * width);
  out.buf.fill(0, out.pos, (out.pos += n * width));
}

/** Values `at` of a column as `type`; with `rows`, a NULL row is written as the type's zero. */
function writeScalars(out: BlockWriter, type: string, column: ReadColumn, at: readonly number[], body: Buffer, rows = false): void {
  const isNull = (i: number) => rows && column.nulls?.[i] === 1;
  if (type === 'String') {
    for (const i of at) {
      const mended = column.mended?.get(i);
      if (isNull(i)) out.varUInt(0);
      else if (mended !== undefined) out.string(mended);
      else copyBytes(out, body, column.heads![i]!, column.ends![i]!);
    }
    return;
  }
  const numbers = column.numbers!;
  const value = (i: number) => (isNull(i) ? 0 : numbers[i]!);
  const fixed = FIXED_WIDTH[type];
  if (fixed) {
    out.ensure(at.length * fixed.width);
    for (const i of at) {
      fixed.write(out.buf, value(i), out.pos);
      out.pos += fixed.width;
    }
    return;
  }
  // Int64 and DateTime64(3): safe integers, checked by convert().
  out.ensure(at.length * 8);
  for (const i of at) out.int64(value(i));
}
