import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from '../../src/flowstore/chdb-engine.js';
import { named } from '../../src/flowstore/sql.js';
import { createFlowGenerator } from './flowgen/index.js';
import {
  ColumnSet,
  MAX_NATIVE_CELLS,
  MAX_NATIVE_ROWS,
  MAX_PATH_DEPTH,
  NativeColumns,
  decodeNativeBatch,
  encodeNativeBatch,
  readNativeBlock,
} from './native-batch.js';
import { withoutAbsent } from './testing/absent.js';

const generated = (n: number) =>
  createFlowGenerator({ seed: 11, customerId: 'c1', startMs: Date.UTC(2026, 0, 5), flowsPerSecond: 50, scenarios: ['scan', 'dns-tunnel', 'beacon'] }).take(n);

/** A hand-made batch with what generated flows lack: unicode, big and negative numbers, gaps, empty arrays. */
const edgeRecords = [
  {
    '@timestamp': 1_767_571_200_000,
    app_name: 'Ünïcødé ✓ 日本語 🚀',
    note: 'a long string of more than forty-three characters, with é, 日本 and 🚀 beyond the fast path',
    src: { ip: '10.0.0.1', port: 443, process: { pid: 7 } },
    stats: { big: 2 ** 60, delta: -5, ratio: 0.5, tiny: -(2 ** 40) },
    meta: { tags: ['a', 'é'], flipped: true, scores: [1.5, -2] },
    path: [{ sensor: { id: 's1', type: 'packet' }, src_vlan: 10 }],
  },
  {
    '@timestamp': 1_767_571_200_001,
    app_name: '',
    src: { ip: '::1', port: 0 },
    stats: { big: 3, delta: 2 ** 31, ratio: 2 },
    meta: { tags: [], flipped: false, scores: [] },
    dns: { rrname: 'x'.repeat(200) },
  },
  { '@timestamp': 1_767_571_200_002, src: { ip: '10.0.0.2', port: 65_535 }, stats: { big: 1, delta: null, ratio: 1e-300 }, meta: { tags: ['z'] } },
];

/** The value of each column per record, as the engine should hold it: NULL and [] for absent. */
function expectedRow(record: Record<string, unknown>, columns: { name: string; type: string }[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const { name, type } of columns) {
    let value: any = record;
    for (const key of name.split('.')) value = value?.[key];
    if (name === 'path' && value !== undefined) value = JSON.stringify(value);
    row[name] = value ?? (type.startsWith('Array') ? [] : null);
  }
  return row;
}

describe('encodeNativeBatch', () => {
  it('writes a column per dotted path, typed over the batch, Nullable where some record lacks it', () => {
    const { rows, columns } = readNativeBlock(encodeNativeBatch(edgeRecords)!);
    expect(rows).toBe(3);
    expect(Object.fromEntries(columns.map((c) => [c.name, c.type]))).toEqual({
      '@timestamp': 'Int64',
      app_name: 'Nullable(String)',
      note: 'Nullable(String)',
      'src.ip': 'String',
      'src.port': 'Int64',
      'src.process.pid': 'Nullable(Int64)',
      'stats.big': 'Float64', // 2^60 is not a safe integer
      'stats.delta': 'Nullable(Int64)',
      'stats.ratio': 'Float64',
      'stats.tiny': 'Nullable(Int64)',
      'meta.tags': 'Array(String)',
      'meta.flipped': 'Nullable(Bool)',
      'meta.scores': 'Array(Float64)',
      path: 'Nullable(String)',
      'dns.rrname': 'Nullable(String)',
    });
    const column = (name: string) => columns.find((c) => c.name === name)!.values;
    expect(column('app_name')).toEqual(['Ünïcødé ✓ 日本語 🚀', '', undefined]);
    expect(column('stats.big')).toEqual([2 ** 60, 3, 1]);
    expect(column('stats.tiny')).toEqual([-(2 ** 40), undefined, undefined]);
    expect(column('meta.tags')).toEqual([['a', 'é'], [], ['z']]);
    expect(column('path')).toEqual([JSON.stringify(edgeRecords[0]!.path), undefined, undefined]);
  });

  it('reads back as the records it was given', () => {
    const flows = generated(300);
    for (const batch of [flows, edgeRecords]) expect(decodeNativeBatch(encodeNativeBatch(batch)!)).toEqual(batch.map(withoutAbsent));
  });

  it('takes the most rows the service does, and leaves a larger batch to JSON', () => {
    const records = Array.from({ length: MAX_NATIVE_ROWS + 1 }, (_, i) => ({ n: i }));
    expect(readNativeBlock(encodeNativeBatch(records.slice(0, MAX_NATIVE_ROWS))!).rows).toBe(MAX_NATIVE_ROWS);
    expect(encodeNativeBatch(records)).toBeUndefined();
  });

  it('takes paths as deep as the service does, and leaves a deeper one to JSON', () => {
    const nested = (depth: number): Record<string, unknown> => (depth === 1 ? { leaf: 1 } : { k: nested(depth - 1) });
    expect(readNativeBlock(encodeNativeBatch([nested(MAX_PATH_DEPTH)])!).columns[0]!.name.split('.')).toHaveLength(MAX_PATH_DEPTH);
    expect(encodeNativeBatch([nested(MAX_PATH_DEPTH + 1)])).toBeUndefined();
  });

  it('takes as many paths times rows as its bound, and leaves a sparser batch to JSON', () => {
    const rows = 1000;
    const sparse = (paths: number) =>
      Array.from({ length: rows }, (_, i) => Object.fromEntries(Array.from({ length: paths / rows }, (_, j) => [`k${i}_${j}`, j])));
    expect(readNativeBlock(encodeNativeBatch(sparse(MAX_NATIVE_CELLS / rows))!).columns).toHaveLength(MAX_NATIVE_CELLS / rows);
    expect(encodeNativeBatch(sparse(MAX_NATIVE_CELLS / rows + rows))).toBeUndefined();
  });

  it('writes an empty array column as Array(String), and one with numbers as Array(Float64)', () => {
    const types = (records: unknown[]) => readNativeBlock(encodeNativeBatch(records)!).columns.map((c) => c.type);
    expect(types([{ a: [] }, { a: [] }])).toEqual(['Array(String)']);
    expect(types([{ a: [] }, { a: [1, 2.5] }, {}])).toEqual(['Array(Float64)']);
  });

  it.each([
    ['an empty batch', []],
    ['a record that is not an object', [{ a: 1 }, 'flow']],
    ['a record of a class', [new Date(0)]],
    ['a string and a number at one path', [{ a: 'x' }, { a: 1 }]],
    ['a number and a boolean at one path', [{ a: 1 }, { a: true }]],
    ['a leaf in one record, an object in another', [{ src: { ip: '1.2.3.4' } }, { src: { ip: { v4: '1.2.3.4' } } }]],
    ['string and number arrays at one path', [{ a: ['x'] }, { a: [1] }]],
    ['an array mixing strings and numbers', [{ a: ['x', 1] }]],
    ['an array of booleans', [{ a: [true] }]],
    ['an array holding null', [{ a: ['x', null] }]],
    ['nested arrays', [{ a: [['x']] }]],
    ['an array of objects other than path', [{ hops: [{ ip: '1.2.3.4' }] }]],
    ['a path that is not an array', [{ path: 'sensor-1' }]],
    ['a key with a dot', [{ 'src.ip': '1.2.3.4' }]],
    ['an empty key', [{ '': 1 }]],
    ['a key __proto__', [JSON.parse('{"a": {"__proto__": {"polluted": 1}}}')]],
    ['NaN', [{ a: 1 }, { a: Number.NaN }]],
    ['Infinity', [{ a: Infinity }]],
    ['a non-finite number in an array', [{ a: [1, -Infinity] }]],
    ['a Date value', [{ at: new Date(0) }]],
    ['a bigint', [{ n: 1n }]],
  ])('leaves %s to JSON (undefined)', (_what, records) => {
    expect(encodeNativeBatch(records as unknown[])).toBeUndefined();
  });
});

describe('NativeColumns', () => {
  const PATHS = ['id', 'size', 'ratio', 'up', 'name', 'tags', 'path', 'never'];
  const [ID, SIZE, RATIO, UP, NAME, TAGS, PATH] = PATHS.map((_, i) => i);

  it('writes the block encodeNativeBatch writes for the records its rows stand for', () => {
    const columns = new NativeColumns(PATHS, 3);
    const records: Record<string, unknown>[] = [
      { id: 'a', size: 2 ** 40, ratio: 1, up: true, name: 'é 日本', tags: ['x', 'y'], path: [{ sensor: { id: 's' } }] },
      { id: 'b', ratio: 0.5, up: false, tags: [], path: [{ sensor: { id: 's' }, src_vlan: 7 }] },
      { id: 'c', size: -3, ratio: 2, up: true, tags: ['z'], path: [{ sensor: { id: 's' } }] },
    ];
    records.forEach((record, row) => {
      columns.string(ID!, row, record.id as string);
      if (record.size !== undefined) columns.number(SIZE!, row, record.size as number);
      columns.number(RATIO!, row, record.ratio as number);
      columns.boolean(UP!, row, record.up as boolean);
      if (record.name !== undefined) columns.string(NAME!, row, record.name as string);
      columns.strings(TAGS!, row, record.tags as string[]);
      columns.jsonText(PATH!, row, JSON.stringify(record.path));
    });
    const block = columns.block()!;
    // The same bytes: column order, types (Nullable, Int64 against Float64, Bool, arrays) and values.
    expect(block.equals(encodeNativeBatch(records)!)).toBe(true);
    expect(readNativeBlock(block).columns.map((c) => `${c.name} ${c.type}`)).toEqual([
      'id String',
      'size Nullable(Int64)',
      'ratio Float64',
      'up Bool',
      'name Nullable(String)',
      'tags Array(String)',
      'path String',
    ]);
  });

  it("reuses a ColumnSet's arrays from block to block, each block as fresh columns would write it", () => {
    const set = new ColumnSet();
    const [id, kind, size, path, tags] = [set.column('id'), set.column('kind'), set.column('size'), set.column('path'), set.column('tags')];
    const shared = ['SYN', 'ACK']; // one list for many rows, as a writer shares its constant lists
    const sensor = (vlan?: number) => [{ sensor: { id: 's' }, ...(vlan === undefined ? {} : { src_vlan: vlan }) }];
    // Blocks that grow, shrink and grow: a row the block before wrote is absent in this one.
    for (const rows of [3, 5, 2, 6, 1]) {
      const records = Array.from({ length: rows }, (_, row) => ({
        id: `r${rows}-${row}`,
        // Runs of one value (written once, then copied) of every length, and values between them.
        kind: row === 3 ? 'other' : 'flow',
        ...(row === 0 || row % 2 === rows % 2 ? { size: row * 1.5 } : {}), // first, for encodeNativeBatch's column order
        path: sensor(row === 3 ? 7 : undefined),
        tags: row === 2 ? ['FIN'] : row === 4 ? [] : shared,
      }));
      const columns = set.rows(rows);
      records.forEach((record, row) => {
        columns.string(id, row, record.id);
        columns.string(kind, row, record.kind);
        if (record.size !== undefined) columns.number(size, row, record.size);
        columns.jsonText(path, row, JSON.stringify(record.path));
        columns.strings(tags, row, record.tags);
      });
      const block = columns.block()!;
      expect(block.equals(encodeNativeBatch(records)!)).toBe(true);
      expect(decodeNativeBatch(block)).toEqual(records.map(({ tags, ...rest }) => (tags.length === 0 ? rest : { ...rest, tags })));
    }
  });

  it('leaves to JSON what the format cannot carry: an infinite number, no rows, more rows than the service takes', () => {
    const infinite = new NativeColumns(['x'], 2);
    infinite.number(0, 0, 1);
    infinite.number(0, 1, Infinity);
    expect(infinite.block()).toBeUndefined();
    expect(new NativeColumns(['x'], 0).block()).toBeUndefined();
    const many = new NativeColumns(['x'], MAX_NATIVE_ROWS + 1);
    many.number(0, 0, 1);
    expect(many.block()).toBeUndefined();
  });
});

describe('readNativeBlock', () => {
  const block = encodeNativeBatch(edgeRecords)!;

  it('refuses truncated bytes, trailing bytes and types it does not write', () => {
    for (const end of [0, 1, 5, block.length - 1]) expect(() => readNativeBlock(block.subarray(0, end))).toThrow(/truncated/);
    expect(() => readNativeBlock(Buffer.concat([block, Buffer.from([0])]))).toThrow(/1 bytes after the block/);
    const uint8 = Buffer.from([1, 1, 1, 0x61, 5, ...Buffer.from('UInt8'), 7]);
    expect(() => readNativeBlock(uint8)).toThrow(/type "UInt8"/);
  });

  it('refuses more rows than the service takes, and array offsets past the end', () => {
    expect(() => readNativeBlock(Buffer.from([0, 0x91, 0x4e]))).toThrow(/10001 rows/);
    const offsets = Buffer.alloc(8);
    offsets.writeUInt32LE(1_000_000);
    const array = Buffer.concat([Buffer.from([1, 1, 1, 0x61, 13, ...Buffer.from('Array(String)')]), offsets]);
    expect(() => readNativeBlock(array)).toThrow(/array offsets/);
  });
});

describe('a Native batch in ClickHouse (chDB)', () => {
  let dir: string;
  let engine: ChdbEngine;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'collector-native-'));
    engine = new ChdbEngine(dir);
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Read by ClickHouse's own Native reader from the file, not inserted into a table of these
  // names: a table takes Array columns under one dotted prefix (meta.tags, meta.flow_types) as
  // one Nested structure and refuses rows whose arrays differ in length (SIZES_OF_ARRAYS_DONT_MATCH).
  it.each([
    ['generated flows', 'generated', () => generated(500)],
    ['the edge cases', 'edges', () => edgeRecords],
  ])('reads %s with the encoder’s columns and types, as the records', async (_what, name, records) => {
    const batch = records() as unknown as Record<string, unknown>[];
    const block = encodeNativeBatch(batch)!;
    const columns = readNativeBlock(block).columns;
    const file = join(dir, `${name}.native`);
    writeFileSync(file, block);
    const described = await engine.query<{ name: string; type: string }>(named('collector:test.describe', `DESCRIBE file('${file}', Native)`), {});
    expect(described.map(({ name, type }) => ({ name, type }))).toEqual(columns.map(({ name, type }) => ({ name, type })));
    const rows = await engine.query<Record<string, unknown>>(named('collector:test.read', `SELECT * FROM file('${file}', Native)`), {});
    expect(rows).toEqual(batch.map((record) => expectedRow(record, columns)));
  });
});
