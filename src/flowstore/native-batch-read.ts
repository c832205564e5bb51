/**
 * Reads a collector's compact batch, one ClickHouse Native block (docs/collector-protocol.md 4.1),
 * into typed columns that point into the body: numbers as a Float64Array, text as byte ranges.
 * Nothing is made per value but the numbers, so reading costs little more than the bytes'
 * length. Anything malformed is a NativeBatchError naming the column.
 */
import { isUtf8 } from 'node:buffer';

/** The batch itself is refused (400 `invalid_request`): its block, a column or a type is wrong. */
export class NativeBatchError extends Error {}

export type ScalarType = 'String' | 'Bool' | 'UInt8' | 'UInt16' | 'UInt32' | 'UInt64' | 'Int8' | 'Int16' | 'Int32' | 'Int64' | 'Float64' | 'DateTime64';

const WIDTH: Record<Exclude<ScalarType, 'String'>, number> = {
  Bool: 1,
  UInt8: 1,
  Int8: 1,
  UInt16: 2,
  Int16: 2,
  UInt32: 4,
  Int32: 4,
  UInt64: 8,
  Int64: 8,
  Float64: 8,
  DateTime64: 8,
};

export interface ReadColumn {
  readonly name: string;
  /** The type as sent. */
  readonly type: string;
  /** The type of a value, or of an array's elements. */
  readonly scalar: ScalarType;
  readonly array: boolean;
  /** Per row, 1 where the value is NULL (Nullable columns only). */
  readonly nulls?: Uint8Array;
  /** Numbers and booleans: per value, or per element of an array column. */
  readonly numbers?: Float64Array;
  /** Text, per value or element: where its length prefix starts, and its bytes' start and end. */
  readonly heads?: Uint32Array;
  readonly starts?: Uint32Array;
  readonly ends?: Uint32Array;
  /** Text whose bytes are not UTF-8, by value or element: as decoded, U+FFFD in place of what is not. */
  readonly mended?: ReadonlyMap<number, string>;
  /** Arrays: where each row's elements end (row r's are [elementEnds[r - 1] ?? 0, elementEnds[r])). */
  readonly elementEnds?: Float64Array;
}

export interface ReadBlock {
  readonly rows: number;
  readonly columns: readonly ReadColumn[];
}

/** More columns than any record has (the registry has about 200): each costs a few values per row. */
export const MAX_BATCH_COLUMNS = 1_000;
const MAX_NAME_BYTES = 1_000;
const MAX_TYPE_BYTES = 100;

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  need(bytes: number, what: string): void {
    if (bytes > this.buf.length - this.pos) throw new NativeBatchError(`the block ends inside ${what}`);
  }

  varUInt(what: string): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      this.need(1, what);
      const byte = this.buf[this.pos++]!;
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 128;
    }
    throw new NativeBatchError(`${what} has a length beyond any block`);
  }

  text(what: string, max: number): string {
    const n = this.varUInt(what);
    if (n > max) throw new NativeBatchError(`${what} is longer than ${max} bytes`);
    this.need(n, what);
    const bytes = this.buf.subarray(this.pos, (this.pos += n));
    if (!isUtf8(bytes)) throw new NativeBatchError(`${what} is not UTF-8`);
    return bytes.toString('utf8');
  }
}

/** A type this format takes: a scalar, Nullable of one, or Array(String) and Array(Float64). */
function parseType(type: string): { scalar: ScalarType; nullable: boolean; array: boolean } | undefined {
  const inner = (prefix: string) => (type.startsWith(`${prefix}(`) && type.endsWith(')') ? type.slice(prefix.length + 1, -1) : undefined);
  const array = inner('Array');
  if (array !== undefined) return array === 'String' || array === 'Float64' ? { scalar: array, nullable: false, array: true } : undefined;
  const nullable = inner('Nullable');
  const scalar = scalarOf(nullable ?? type);
  return scalar && { scalar, nullable: nullable !== undefined, array: false };
}

function scalarOf(type: string): ScalarType | undefined {
  if (/^DateTime64\(3(, *'[A-Za-z0-9_/+-]*')?\)$/.test(type)) return 'DateTime64';
  return type === 'String' || Object.hasOwn(WIDTH, type) ? (type as ScalarType) : undefined;
}

/**
 * Reads the block: every column and every value, checked against the block's bounds. Text that is
 * not UTF-8 is mended as any UTF-8 decoder would (JSON batches' text is made well formed too).
 */
export function readNativeBlock(body: Buffer, maxRows: number, onTooManyRows: (rows: number) => never): ReadBlock {
  const r = new Reader(body);
  const columnCount = r.varUInt('the column count');
  const rows = r.varUInt('the row count');
  if (rows > maxRows) onTooManyRows(rows);
  if (columnCount > MAX_BATCH_COLUMNS) throw new NativeBatchError(`a batch has at most ${MAX_BATCH_COLUMNS} columns, not ${columnCount}`);
  const columns: ReadColumn[] = [];
  for (let c = 0; c < columnCount; c++) {
    const name = r.text(`column #${c}'s name`, MAX_NAME_BYTES);
    const type = r.text(`column ${name}'s type`, MAX_TYPE_BYTES);
    const parsed = parseType(type);
    if (!parsed) throw new NativeBatchError(`column ${name}: type ${type} is not one a batch may use (docs/collector-protocol.md 4.1)`);
    const what = `column ${name}`;
    let nulls: Uint8Array | undefined;
    if (parsed.nullable) {
      r.need(rows, what);
      nulls = body.subarray(r.pos, (r.pos += rows));
    }
    let count = rows;
    let elementEnds: Float64Array | undefined;
    if (parsed.array) {
      elementEnds = readNumbers(r, 'UInt64', rows, what);
      let last = 0;
      for (const end of elementEnds) {
        if (end < last) throw new NativeBatchError(`${what}: array offsets go backwards`);
        last = end;
      }
      count = last;
    }
    const text = parsed.scalar === 'String' ? readText(r, count, what) : undefined;
    const numbers = parsed.scalar === 'String' ? undefined : readNumbers(r, parsed.scalar, count, what);
    // Every property set, so that the hot reads see one shape.
    columns.push({
      name,
      type,
      scalar: parsed.scalar,
      array: parsed.array,
      nulls,
      numbers,
      heads: text?.heads,
      starts: text?.starts,
      ends: text?.ends,
      mended: text?.mended,
      elementEnds,
    });
  }
  if (r.pos !== body.length) throw new NativeBatchError(`${body.length - r.pos} bytes follow the block; a batch is one block`);
  return { rows, columns };
}

function readNumbers(r: Reader, scalar: Exclude<ScalarType, 'String'>, count: number, what: string): Float64Array {
  const width = WIDTH[scalar];
  r.need(count * width, what);
  const b = r.buf;
  const at = r.pos;
  r.pos += count * width;
  if (scalar === 'Float64') return new Float64Array(b.buffer.slice(b.byteOffset + at, b.byteOffset + r.pos));
  const out = new Float64Array(count);
  switch (scalar) {
    case 'Bool':
    case 'UInt8':
      for (let i = 0; i < count; i++) out[i] = b[at + i]!;
      break;
    case 'Int8':
      for (let i = 0; i < count; i++) out[i] = b.readInt8(at + i);
      break;
    case 'UInt16':
      for (let i = 0; i < count; i++) out[i] = b.readUInt16LE(at + 2 * i);
      break;
    case 'Int16':
      for (let i = 0; i < count; i++) out[i] = b.readInt16LE(at + 2 * i);
      break;
    case 'UInt32':
      for (let i = 0; i < count; i++) out[i] = b.readUInt32LE(at + 4 * i);
      break;
    case 'Int32':
      for (let i = 0; i < count; i++) out[i] = b.readInt32LE(at + 4 * i);
      break;
    // Beyond 2^53 the nearest double, as JSON.parse reads such a number.
    case 'UInt64':
      for (let i = 0; i < count; i++) out[i] = b.readUInt32LE(at + 8 * i) + b.readUInt32LE(at + 8 * i + 4) * 4_294_967_296;
      break;
    case 'Int64':
    case 'DateTime64':
      for (let i = 0; i < count; i++) out[i] = b.readUInt32LE(at + 8 * i) + b.readInt32LE(at + 8 * i + 4) * 4_294_967_296;
      break;
  }
  return out;
}

function readText(r: Reader, count: number, what: string): { heads: Uint32Array; starts: Uint32Array; ends: Uint32Array; mended?: Map<number, string> } {
  r.need(count, what); // each value takes at least its length's byte
  const heads = new Uint32Array(count);
  const starts = new Uint32Array(count);
  const ends = new Uint32Array(count);
  const b = r.buf;
  const first = r.pos;
  // Lengths under 128 are one ASCII byte, which no UTF-8 sequence spans: then the whole column
  // being UTF-8 means every value is, checked in one call.
  let shortOnly = true;
  for (let i = 0; i < count; i++) {
    heads[i] = r.pos;
    let n: number;
    if (r.pos < b.length && b[r.pos]! < 0x80) n = b[r.pos++]!;
    else {
      n = r.varUInt(what);
      shortOnly = false;
    }
    r.need(n, what);
    starts[i] = r.pos;
    r.pos += n;
    ends[i] = r.pos;
  }
  if (shortOnly && isUtf8(b.subarray(first, r.pos))) return { heads, starts, ends };
  const mended = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    if (!isUtf8(b.subarray(starts[i], ends[i]))) mended.set(i, b.toString('utf8', starts[i], ends[i]));
  }
  return { heads, starts, ends, ...(mended.size && { mended }) };
}
