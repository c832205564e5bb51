// An ingest batch as one ClickHouse Native block (docs/reference-collector.md, "Native batches"):
// a column per dotted path, typed over the whole batch, so the service inserts it without parsing
// JSON text. encodeNativeBatch returns undefined for a batch the format cannot express; the caller
// sends that one as JSON, which carries anything. decodeNativeBatch reads back what it wrote: the
// queue needs the records again to halve a batch the service found too large.

export const NATIVE_CONTENT_TYPE = 'application/x-clickhouse-native';
/**
 * Native blocks compress well at gzip's fastest level, their columns already grouped: on the
 * generator's flows 273 bytes a flow against 246 at the default level 6, in a quarter of the time
 * (7.4 against 30.6 µs a flow). JSON keeps the default: at level 1 it grows by a third.
 */
export const NATIVE_GZIP_LEVEL = 1;
/** The service's bounds: rows of a block, and levels of a dotted path. */
export const MAX_NATIVE_ROWS = 10_000;
export const MAX_PATH_DEPTH = 64;
/**
 * Paths times rows: a column takes memory for every row, so a batch of many paths each in a few
 * records (sparse, unlike flows: 120 paths, nearly all in every record) would take far more as
 * columns than as JSON. Past this the batch goes as JSON.
 */
export const MAX_NATIVE_CELLS = 4_000_000;
/** The one path whose array of objects travels as its JSON text (its registry kind is json). */
const JSON_PATH = 'path';
/** Numbers are written as the host lays out typed arrays; a big-endian host sends JSON. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// What a path held over the batch, as bits: one type of value (arrays: empty ones fit either
// element type) makes a column, any other mix makes the batch JSON.
const STRING = 1;
const BOOL = 2;
const INT = 4;
const FLOAT = 8;
const STRING_ARRAY = 16;
const NUMBER_ARRAY = 32;
const EMPTY_ARRAY = 64;
const JSON_TEXT = 128;

/**
 * A key of the records' nested objects. A leaf keeps its values by row, numbers and booleans in a
 * Float64Array (safe integers are exact there, and a Float64 column is its bytes), the rest as
 * they are; `absent` marks the rows that lack it (a Nullable's null map).
 */
class PathNode {
  readonly children = new Map<string, PathNode>();
  /** Under the root: every path of the batch so far (leaves and objects). */
  paths = 0;
  /**
   * The children in the order the previous record listed them: records of a batch mostly share
   * their key order, and comparing a key with the one expected there (the same string object) is
   * cheaper than a map lookup.
   */
  readonly lastOrder: PathNode[] = [];
  absent: Uint8Array | undefined;
  numbers: Float64Array | undefined;
  items: unknown[] | undefined;
  seen = 0;
  present = 0;

  constructor(
    readonly key: string,
    readonly path: string,
    readonly depth: number,
  ) {}
}

/** Thrown inside the walk when the batch cannot be a block; encodeNativeBatch answers undefined. */
class Inexpressible extends Error {}

/** The records as one Native block, or undefined when the format cannot express them (send JSON). */
export function encodeNativeBatch(records: readonly unknown[]): Buffer | undefined {
  const rows = records.length;
  if (rows === 0 || rows > MAX_NATIVE_ROWS || !LITTLE_ENDIAN) return undefined;
  const root = new PathNode('', '', 0);
  try {
    for (let row = 0; row < rows; row++) {
      const record = records[row];
      if (!isPlainObject(record)) return undefined;
      walk(record, root, root, row, rows);
    }
    const columns: PathNode[] = [];
    collectLeaves(root, columns);
    return writeBlock(columns, rows);
  } catch (error) {
    if (error instanceof Inexpressible) return undefined;
    throw error;
  }
}

/**
 * The columns a writer of NativeColumns knows, named once: `column(path)` is the index of a new
 * column, `group(path, keys)` one per key under the path (`stats.rate.bps` → `.src`, `.dst`, …).
 */
export class ColumnSet {
  readonly paths: string[] = [];
  private readonly arrays = new ColumnArrays();

  column(path: string): number {
    return this.paths.push(path) - 1;
  }

  group<K extends string>(path: string, keys: readonly K[]): Record<K, number> {
    return Object.fromEntries(keys.map((key) => [key, this.column(`${path}.${key}`)])) as Record<K, number>;
  }

  /**
   * Columns for one block of `rows` rows, in the arrays the set's previous block used: its writer
   * writes the rows and calls block() before it asks for the next (a collector writes a block a
   * batch, each column an array of its rows: fresh arrays were most of what it allocated).
   */
  rows(rows: number): NativeColumns {
    return new NativeColumns(this.paths, rows, this.arrays);
  }
}

/** Column arrays kept from one block for the next, each as long as the longest block so far. */
class ColumnArrays {
  private readonly numbers: Float64Array[] = [];
  private readonly items: unknown[][] = [];
  private readonly absent: Uint8Array[] = [];

  /** `rows` NaNs: a row without a value. */
  numbersOf(column: number, rows: number): Float64Array {
    return lend(this.numbers, column, rows, (n) => new Float64Array(n)).fill(NaN);
  }

  itemsOf(column: number, rows: number): unknown[] {
    const kept = (this.items[column] ??= []);
    kept.length = rows;
    return kept.fill(undefined);
  }

  absentOf(column: number, rows: number): Uint8Array {
    return lend(this.absent, column, rows, (n) => new Uint8Array(n)).fill(0);
  }
}

/** The first `rows` elements of the typed array kept for `column`, made (longer) when it has too few. */
function lend<A extends Float64Array | Uint8Array>(kept: A[], column: number, rows: number, make: (length: number) => A): A {
  let array = kept[column];
  if (array === undefined || array.length < rows) array = kept[column] = make(rows);
  return (array.length === rows ? array : array.subarray(0, rows)) as A;
}

/**
 * A block written value by value, by a writer that knows its columns (the meter, from a flow's
 * counters): no record is built and walked. Columns are indexes into `paths`, each written with
 * one of the methods; a column no row wrote is left out, and a row that skips a column is its
 * NULL. A store is one array write: the columns are typed, and their NULLs found, once per block,
 * as encodeNativeBatch types a path, so the block reads back as the records the writer stands for
 * would.
 */
export class NativeColumns {
  /** Number and boolean columns; NaN marks a row without a value (a value is never NaN: JSON would write null). */
  private readonly numbers: (Float64Array | undefined)[];
  /** String, string-array and JSON-text columns; undefined marks a row without a value. */
  private readonly items: (unknown[] | undefined)[];
  /** The kinds of value each item column held, and BOOL for a boolean column. */
  private readonly kinds: Int32Array;

  constructor(
    private readonly paths: readonly string[],
    readonly rows: number,
    /** Where its columns' arrays come from: its own, unless a ColumnSet lends its (ColumnSet.rows). */
    private readonly arrays = new ColumnArrays(),
  ) {
    this.numbers = new Array<Float64Array | undefined>(paths.length).fill(undefined);
    this.items = new Array<unknown[] | undefined>(paths.length).fill(undefined);
    this.kinds = new Int32Array(paths.length);
  }

  number(column: number, row: number, value: number): void {
    (this.numbers[column] ?? this.numberColumn(column))[row] = value;
  }

  boolean(column: number, row: number, value: boolean): void {
    this.kinds[column] |= BOOL;
    (this.numbers[column] ?? this.numberColumn(column))[row] = value ? 1 : 0;
  }

  string(column: number, row: number, value: string): void {
    this.kinds[column] |= STRING;
    (this.items[column] ?? this.itemColumn(column))[row] = value;
  }

  strings(column: number, row: number, value: readonly string[]): void {
    this.kinds[column] |= value.length === 0 ? EMPTY_ARRAY : STRING_ARRAY;
    (this.items[column] ?? this.itemColumn(column))[row] = value;
  }

  /** The JSON text of an array of objects (the `path` column), encoded by the caller, who may reuse it across rows. */
  jsonText(column: number, row: number, text: string): void {
    this.kinds[column] |= JSON_TEXT;
    (this.items[column] ?? this.itemColumn(column))[row] = text;
  }

  /** Whether `rows` rows can be a block on this host, before any is written. */
  static fits(rows: number): boolean {
    return rows > 0 && rows <= MAX_NATIVE_ROWS && LITTLE_ENDIAN;
  }

  /** The block, or undefined when it cannot be one (see fits(); an infinite number): send JSON. */
  block(): Buffer | undefined {
    const rows = this.rows;
    if (!NativeColumns.fits(rows)) return undefined;
    const columns: PathNode[] = [];
    for (let column = 0; column < this.paths.length; column++) {
      const numbers = this.numbers[column];
      const items = this.items[column];
      if (numbers === undefined && items === undefined) continue;
      if (numbers !== undefined && items !== undefined) return undefined; // one path, numbers and text
      const node = new PathNode('', this.paths[column]!, 0);
      const absent = (node.absent = this.arrays.absentOf(column, rows));
      let missing = 0;
      if (numbers !== undefined) {
        let integers = true;
        for (let row = 0; row < rows; row++) {
          const value = numbers[row]!;
          if (value !== value) {
            absent[row] = 1;
            numbers[row] = 0; // the type's zero, as for a record's absent path
            missing++;
          } else if (!Number.isFinite(value)) return undefined;
          else if (integers && !Number.isSafeInteger(value)) integers = false;
        }
        node.numbers = numbers;
        node.seen = this.kinds[column] === BOOL ? BOOL : integers ? INT : FLOAT;
      } else {
        for (let row = 0; row < rows; row++) {
          if (items![row] !== undefined) continue;
          absent[row] = 1;
          missing++;
        }
        node.items = items;
        node.seen = this.kinds[column]!;
      }
      node.present = rows - missing;
      columns.push(node);
    }
    try {
      return writeBlock(columns, rows);
    } catch (error) {
      if (error instanceof Inexpressible) return undefined;
      throw error;
    }
  }

  private numberColumn(column: number): Float64Array {
    return (this.numbers[column] = this.arrays.numbersOf(column, this.rows));
  }

  private itemColumn(column: number): unknown[] {
    return (this.items[column] = this.arrays.itemsOf(column, this.rows));
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function walk(object: Record<string, unknown>, parent: PathNode, root: PathNode, row: number, rows: number): void {
  const order = parent.lastOrder;
  let n = 0;
  for (const key in object) {
    const value = object[key];
    if (value === undefined || value === null) continue; // absent, as JSON's null
    const jsonText = parent.depth === 0 && key === JSON_PATH;
    if (jsonText && !Array.isArray(value)) throw new Inexpressible(); // JSON lets the service judge it
    let node = order[n];
    if (node === undefined || node.key !== key) {
      node = parent.children.get(key) ?? child(parent, key, root, rows);
      order[n] = node;
    }
    n++;
    switch (typeof value) {
      case 'string':
        storeItem(node, row, rows, value, STRING);
        break;
      case 'boolean':
        storeNumber(node, row, rows, value ? 1 : 0, BOOL);
        break;
      case 'number':
        if (!Number.isFinite(value)) throw new Inexpressible();
        storeNumber(node, row, rows, value, Number.isSafeInteger(value) ? INT : FLOAT);
        break;
      case 'object':
        if (Array.isArray(value)) storeItem(node, row, rows, value, jsonText ? JSON_TEXT : arrayKind(value));
        else if (isPlainObject(value)) walk(value, node, root, row, rows);
        else throw new Inexpressible();
        break;
      default:
        throw new Inexpressible();
    }
  }
}

function child(parent: PathNode, key: string, root: PathNode, rows: number): PathNode {
  // `__proto__` would set a prototype where the service (or decodeNativeBatch) builds the record.
  if (key === '' || key.includes('.') || key === '__proto__' || parent.depth === MAX_PATH_DEPTH) throw new Inexpressible();
  if (++root.paths * rows > MAX_NATIVE_CELLS) throw new Inexpressible();
  const node = new PathNode(key, parent.depth === 0 ? key : `${parent.path}.${key}`, parent.depth + 1);
  parent.children.set(key, node);
  return node;
}

function present(node: PathNode, row: number, rows: number, kind: number): void {
  if (node.absent === undefined) node.absent = new Uint8Array(rows).fill(1);
  node.absent[row] = 0;
  node.seen |= kind;
  node.present++;
}

// A path that held a number or boolean and then something else (or the reverse) is refused at
// once; the other mixes are told apart by `seen` when the column is typed.

function storeNumber(node: PathNode, row: number, rows: number, value: number, kind: number): void {
  if (node.numbers === undefined) {
    if (node.items !== undefined) throw new Inexpressible();
    node.numbers = new Float64Array(rows);
  }
  node.numbers[row] = value;
  present(node, row, rows, kind);
}

function storeItem(node: PathNode, row: number, rows: number, value: unknown, kind: number): void {
  if (node.items === undefined) {
    if (node.numbers !== undefined) throw new Inexpressible();
    node.items = new Array(rows);
  }
  node.items[row] = value;
  present(node, row, rows, kind);
}

function arrayKind(array: readonly unknown[]): number {
  if (array.length === 0) return EMPTY_ARRAY;
  const first = typeof array[0];
  if (first !== 'string' && first !== 'number') throw new Inexpressible();
  for (const item of array) {
    if (typeof item !== first || (first === 'number' && !Number.isFinite(item))) throw new Inexpressible();
  }
  return first === 'string' ? STRING_ARRAY : NUMBER_ARRAY;
}

/** Leaves in first-seen order; a path that is a leaf in one record and an object in another has no column. */
function collectLeaves(node: PathNode, out: PathNode[]): number {
  const leaf = node.absent !== undefined;
  if (leaf) out.push(node);
  let leaves = leaf ? 1 : 0;
  for (const child of node.children.values()) {
    const below = collectLeaves(child, out);
    if (below > 0 && leaf) throw new Inexpressible();
    leaves += below;
  }
  return leaves;
}

type Write = (out: BlockWriter, node: PathNode) => void;

/** The Native type and writer of a column, from what its path held. */
function columnType(node: PathNode, rows: number): { type: string; write: Write } {
  const seen = node.seen;
  const scalar = (type: string, write: Write) => (node.present < rows ? { type: `Nullable(${type})`, write: nullableOf(write) } : { type, write });
  if (seen === STRING) return scalar('String', (out, { items }) => writeStrings(out, items!));
  if (seen === JSON_TEXT) return scalar('String', writeJsonTexts);
  if (seen === BOOL) return scalar('Bool', (out, { numbers }) => writeBytes(out, numbers!));
  if (seen === INT) return scalar('Int64', (out, { numbers }) => writeInt64s(out, numbers!));
  if ((seen & ~(INT | FLOAT)) === 0) return scalar('Float64', (out, { numbers }) => out.bytes(numbers!));
  if ((seen & ~(STRING_ARRAY | EMPTY_ARRAY)) === 0) return { type: 'Array(String)', write: arrayOf(writeStringArrays) };
  if ((seen & ~(NUMBER_ARRAY | EMPTY_ARRAY)) === 0)
    return { type: 'Array(Float64)', write: arrayOf((out, arrays) => out.bytes(Float64Array.from(arrays.flatMap((array) => (array ?? []) as number[])))) };
  throw new Inexpressible();
}

function writeBlock(columns: readonly PathNode[], rows: number): Buffer {
  const typed = columns.map((node) => ({ node, ...columnType(node, rows) }));
  // About what the generator's flows take: a reallocation or two at most.
  const out = new BlockWriter(64 + rows * columns.length * 12);
  out.varUInt(columns.length);
  out.varUInt(rows);
  for (const { node, type, write } of typed) {
    out.string(node.path);
    out.string(type);
    write(out, node);
  }
  return out.buf.subarray(0, out.pos);
}

// A row that lacks the path is written as the type's zero (0, '', an empty array): a Nullable's
// map marks it.

// A run of rows with the same value (a batch's customer, its sensor, "flow" in every row) is
// written once and its bytes copied, in doublings.

function writeStrings(out: BlockWriter, strings: readonly unknown[]): void {
  writeRuns(out, strings, (value) => out.string((value as string | undefined) ?? ''));
}

// An item is an array (from a record) or its text already (NativeColumns.jsonText).
const writeJsonTexts: Write = (out, { items }) => {
  writeRuns(out, items!, (item) => out.string(item === undefined ? '' : typeof item === 'string' ? item : JSON.stringify(item)));
};

/** Each run of rows holding the same value (the same string, the same object) written once by `write`, then copied. */
function writeRuns(out: BlockWriter, values: readonly unknown[], write: (value: unknown) => void): void {
  for (let row = 0; row < values.length;) {
    const value = values[row];
    let end = row + 1;
    while (end < values.length && values[end] === value) end++;
    const from = out.pos;
    write(value);
    if (end - row > 1) out.repeat(from, end - row - 1);
    row = end;
  }
}

/** Where writeInt64s lays a column's words out before copying them: one array, grown as needed. */
let int64Words = new Int32Array(0);

/** Safe integers as 64-bit two's complement: the low and the high 32 bits of each. */
function writeInt64s(out: BlockWriter, numbers: Float64Array): void {
  const n = numbers.length * 2;
  if (int64Words.length < n) int64Words = new Int32Array(n);
  const words = int64Words;
  for (let i = 0; i < numbers.length; i++) {
    const v = numbers[i]!;
    words[2 * i] = v | 0;
    words[2 * i + 1] = Math.floor(v / 4_294_967_296);
  }
  out.bytes(words.subarray(0, n));
}

/** Numbers of 0–255 (booleans as 0 and 1), a byte each. */
function writeBytes(out: BlockWriter, numbers: Float64Array): void {
  out.ensure(numbers.length);
  const buf = out.buf;
  for (let i = 0; i < numbers.length; i++) buf[out.pos + i] = numbers[i]!;
  out.pos += numbers.length;
}

function nullableOf(write: Write): Write {
  return (out, node) => {
    out.bytes(node.absent!);
    write(out, node);
  };
}

/** Per row the cumulative end offset (UInt64), then every row's elements as one column. */
function arrayOf(writeElements: (out: BlockWriter, arrays: readonly (readonly unknown[] | undefined)[]) => void): Write {
  return (out, { items }) => {
    const arrays = items as (unknown[] | undefined)[];
    const ends = new Float64Array(arrays.length);
    let end = 0;
    for (let i = 0; i < arrays.length; i++) ends[i] = end += arrays[i]?.length ?? 0;
    writeInt64s(out, ends);
    writeElements(out, arrays);
  };
}

/** Every row's strings in turn; a run of rows with the same array (one list shared by a writer's rows) is written once and copied. */
function writeStringArrays(out: BlockWriter, arrays: readonly (readonly unknown[] | undefined)[]): void {
  writeRuns(out, arrays, (array) => {
    for (const element of (array as readonly string[] | undefined) ?? []) out.string(element);
  });
}

/** A growing byte buffer with the few writes the format needs. */
class BlockWriter {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varUInt(n: number): void {
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /** Varuint byte length, then UTF-8. */
  string(s: string): void {
    // Under 43 UTF-16 units a string is under 128 UTF-8 bytes (a one-byte length). Most are ASCII
    // (names, addresses, enums): copied here, cheaper than a call into the encoder.
    if (s.length < 43) {
      this.ensure(1 + s.length * 3);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < s.length; i++) {
        const code = s.charCodeAt(i);
        if (code >= 0x80) break;
        buf[start + i] = code;
      }
      const n = i === s.length ? i : buf.write(s, start, 'utf8');
      buf[this.pos] = n;
      this.pos = start + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.varUInt(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** What was written from `from` to here, `times` times more: copied in doublings. */
  repeat(from: number, times: number): void {
    const length = this.pos - from;
    const total = length * (times + 1);
    this.ensure(total - length);
    const buf = this.buf;
    for (let done = length; done < total;) {
      const n = Math.min(done, total - done);
      buf.copyWithin(from + done, from, from + n);
      done += n;
    }
    this.pos = from + total;
  }

  /** A typed array's bytes, in host order (little endian: see LITTLE_ENDIAN). */
  bytes(array: Uint8Array | Int32Array | Float64Array): void {
    this.ensure(array.byteLength);
    this.buf.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), this.pos);
    this.pos += array.byteLength;
  }
}

/** A column of a block as read back: its name, its type, its values by row (undefined: NULL). */
export interface NativeColumnValues {
  name: string;
  type: string;
  values: unknown[];
}

/** The columns of a block of the types this module writes; throws on bytes that are not such a block. */
export function readNativeBlock(block: Buffer): { rows: number; columns: NativeColumnValues[] } {
  const input = new BlockReader(block);
  const columnCount = input.varUInt();
  const rows = input.varUInt();
  if (rows > MAX_NATIVE_ROWS) throw new Error(`native batch: ${rows} rows, at most ${MAX_NATIVE_ROWS}`);
  const columns: NativeColumnValues[] = [];
  for (let c = 0; c < columnCount; c++) {
    const name = input.string();
    const type = input.string();
    columns.push({ name, type, values: readColumn(input, type, rows) });
  }
  if (!input.done()) throw new Error(`native batch: ${input.left()} bytes after the block`);
  return { rows, columns };
}

/** The records of a block this module wrote; an absent value (NULL, an empty array) leaves its field out, as the service reads it. */
export function decodeNativeBatch(block: Buffer): Record<string, unknown>[] {
  const { rows, columns } = readNativeBlock(block);
  const records: Record<string, unknown>[] = Array.from({ length: rows }, () => ({}));
  for (const { name, type, values } of columns) {
    const segments = name.split('.');
    const parse = name === JSON_PATH && /^(Nullable\()?String\)?$/.test(type);
    for (let row = 0; row < rows; row++) {
      const value = values[row];
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      setPath(records[row]!, segments, parse ? JSON.parse(value as string) : value);
    }
  }
  return records;
}

function readColumn(input: BlockReader, type: string, rows: number): unknown[] {
  const inner = /^(Nullable|Array)\((.+)\)$/.exec(type);
  if (inner?.[1] === 'Nullable') {
    const nulls = input.bytes(rows);
    const values = readColumn(input, inner[2]!, rows);
    return values.map((value, row) => (nulls[row] ? undefined : value));
  }
  if (inner?.[1] === 'Array') {
    const ends = Array.from({ length: rows }, () => input.int64());
    // Offsets that go back, or promise more elements than bytes are left (each takes one at least).
    if (ends.some((end, row) => end < (row === 0 ? 0 : ends[row - 1]!)) || (ends[rows - 1] ?? 0) > input.left()) {
      throw new Error(`native batch: array offsets out of order or past the end, before byte ${input.pos}`);
    }
    const items = readColumn(input, inner[2]!, ends[rows - 1] ?? 0);
    return ends.map((end, row) => items.slice(row === 0 ? 0 : ends[row - 1], end));
  }
  const read = SCALAR_READERS[type];
  if (!read) throw new Error(`native batch: type ${JSON.stringify(type)} is not one this encoder writes`);
  return Array.from({ length: rows }, () => read(input));
}

const SCALAR_READERS: Record<string, (input: BlockReader) => unknown> = {
  String: (input) => input.string(),
  Bool: (input) => input.bytes(1)[0] === 1,
  Int64: (input) => input.int64(),
  Float64: (input) => input.float64(),
};

function setPath(record: Record<string, unknown>, segments: readonly string[], value: unknown): void {
  if (segments.includes('__proto__')) throw new Error(`native batch: a column named ${segments.join('.')}`);
  let object = record;
  for (let i = 0; i < segments.length - 1; i++) object = (object[segments[i]!] ??= {}) as Record<string, unknown>;
  object[segments[segments.length - 1]!] = value;
}

class BlockReader {
  pos = 0;

  constructor(private readonly buf: Buffer) {}

  left(): number {
    return this.buf.length - this.pos;
  }

  done(): boolean {
    return this.left() === 0;
  }

  bytes(n: number): Buffer {
    if (n > this.buf.length - this.pos) throw new Error(`native batch: truncated at byte ${this.pos}`);
    this.pos += n;
    return this.buf.subarray(this.pos - n, this.pos);
  }

  varUInt(): number {
    let n = 0;
    for (let shift = 0; shift < 63; shift += 7) {
      const byte = this.bytes(1)[0]!;
      n += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return n;
    }
    throw new Error(`native batch: a varuint longer than 9 bytes at byte ${this.pos}`);
  }

  string(): string {
    return this.bytes(this.varUInt()).toString('utf8');
  }

  int64(): number {
    const bytes = this.bytes(8);
    return bytes.readUInt32LE(0) + bytes.readInt32LE(4) * 4_294_967_296;
  }

  float64(): number {
    return this.bytes(8).readDoubleLE(0);
  }
}
