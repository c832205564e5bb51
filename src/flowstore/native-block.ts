/**
 * Rows as one block of ClickHouse's Native format: the columns one after the other, each as the
 * engine lays it out in memory, so an insert reads them without parsing text. JSONEachRow cost the
 * engine several times as much per flow (docs/flowstore.md "Insert format").
 *
 * The block declares each column with the table's type stripped of `LowCardinality` (the engine
 * converts a plain column into a dictionary-encoded one on insert, which saves writing the
 * dictionaries here). Supported: String, UInt8/16/32, Int32, Int64, Float64, Bool,
 * DateTime64(3, ...) (epoch milliseconds), and Nullable/Array of those.
 */

import { type Steps, atOnce, inTurns } from './turns.js';

/** A column of the block: its name and the table's type for it. */
export interface NativeColumn {
  readonly name: string;
  readonly type: string;
}

type Encode = (out: BlockWriter, values: readonly unknown[]) => void;

/** A growing byte buffer with the few writes the format needs. */
export class BlockWriter {
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

  string(s: string): void {
    // A string of fewer than 43 UTF-16 units is under 128 UTF-8 bytes: a one-byte length. Most
    // are ASCII (names, addresses, enums), copied here: cheaper than a call into the encoder.
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

  /** A 64-bit two's complement integer from a safe integer. */
  int64(v: number): void {
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.buf.writeInt32LE(Math.floor(v / 4_294_967_296), this.pos + 4);
    this.pos += 8;
  }
}

const stripLowCardinality = (type: string): string => type.replace(/LowCardinality\(((?:[^()]|\([^()]*\))*)\)/g, '$1');

/** An encoder for fixed-width numbers: `width` bytes each, a missing value written as 0. */
function fixed(width: number, write: (buf: Buffer, v: number, pos: number) => void): Encode {
  return (out, values) => {
    out.ensure(values.length * width);
    for (const v of values) {
      write(out.buf, typeof v === 'number' ? v : v === true ? 1 : 0, out.pos);
      out.pos += width;
    }
  };
}

const int64: Encode = (out, values) => {
  out.ensure(values.length * 8);
  for (const v of values) out.int64(typeof v === 'number' ? v : 0);
};

const strings: Encode = (out, values) => {
  for (const v of values) out.string(typeof v === 'string' ? v : '');
};

/** The fixed-width types: each value's width in bytes and its write (values already checked to fit). */
export const FIXED_WIDTH: Readonly<Record<string, { width: number; write: (buf: Buffer, v: number, pos: number) => void }>> = {
  UInt8: { width: 1, write: (b, v, p) => b.writeUInt8(v, p) },
  Bool: { width: 1, write: (b, v, p) => b.writeUInt8(v, p) },
  UInt16: { width: 2, write: (b, v, p) => b.writeUInt16LE(v, p) },
  UInt32: { width: 4, write: (b, v, p) => b.writeUInt32LE(v, p) },
  Int32: { width: 4, write: (b, v, p) => b.writeInt32LE(v, p) },
  Float64: { width: 8, write: (b, v, p) => b.writeDoubleLE(v, p) },
};

const BASE_ENCODERS: Record<string, Encode> = {
  String: strings,
  Int64: int64,
  ...Object.fromEntries(Object.entries(FIXED_WIDTH).map(([type, { width, write }]) => [type, fixed(width, write)])),
};

function encoderFor(type: string): Encode {
  const inner = (prefix: string) => (type.startsWith(`${prefix}(`) && type.endsWith(')') ? type.slice(prefix.length + 1, -1) : undefined);
  const nullableOf = inner('Nullable');
  if (nullableOf !== undefined) {
    const encodeValues = encoderFor(nullableOf);
    return (out, values) => {
      out.ensure(values.length);
      for (const v of values) out.buf[out.pos++] = v === null || v === undefined ? 1 : 0;
      encodeValues(out, values);
    };
  }
  const arrayOf = inner('Array');
  if (arrayOf !== undefined) {
    const encodeElements = encoderFor(arrayOf);
    return (out, values) => {
      const elements: unknown[] = [];
      out.ensure(values.length * 8);
      for (const v of values) {
        if (Array.isArray(v)) for (const e of v) elements.push(e);
        out.int64(elements.length);
      }
      encodeElements(out, elements);
    };
  }
  if (/^DateTime64\(3(, *'[^']*')?\)$/.test(type)) return int64;
  const base = BASE_ENCODERS[type];
  if (!base) throw new Error(`native-block: no encoder for the type ${type}`);
  return base;
}

/** The column's declared type in the block and its encoder, made once per column list. */
export interface NativeLayout {
  readonly columns: readonly NativeColumn[];
  readonly declared: readonly string[];
  readonly encoders: readonly Encode[];
}

export function nativeLayout(columns: readonly NativeColumn[]): NativeLayout {
  const declared = columns.map((c) => stripLowCardinality(c.type));
  return { columns, declared, encoders: declared.map(encoderFor) };
}

/**
 * One Native block of `rows`, each an array of values in the layout's column order (a missing or
 * null value is NULL in a Nullable column, else the type's zero). Values must already be of the
 * column's kind: ingest (ingest.ts) checks them before they get here.
 */
export function encodeNativeBlock(layout: NativeLayout, rows: readonly (readonly unknown[])[]): Buffer {
  return atOnce(encodeColumns(layout, rows));
}

/**
 * The same block, encoded over several turns of the event loop (a column is never cut): 30,000
 * flows take 0.4–1 s to encode, which in one piece would hold up every other request as long.
 */
export function encodeNativeBlockInTurns(layout: NativeLayout, rows: readonly (readonly unknown[])[], turnMs?: number): Promise<Buffer> {
  return inTurns(encodeColumns(layout, rows), turnMs);
}

/** Writes the block column by column, pausing (a yield) after each. */
function* encodeColumns(layout: NativeLayout, rows: readonly (readonly unknown[])[]): Steps<Buffer> {
  const out = new BlockWriter(64 * 1024 + rows.length * 512);
  out.varUInt(layout.columns.length);
  out.varUInt(rows.length);
  const values: unknown[] = new Array(rows.length);
  for (const [c, column] of layout.columns.entries()) {
    out.string(column.name);
    out.string(layout.declared[c]!);
    for (let r = 0; r < rows.length; r++) values[r] = rows[r]![c];
    layout.encoders[c]!(out, values);
    yield;
  }
  return out.buf.subarray(0, out.pos);
}
