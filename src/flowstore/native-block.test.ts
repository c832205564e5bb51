import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { encodeNativeBlock, encodeNativeBlockInTurns, nativeLayout } from './native-block.js';

const dir = mkdtempSync(join(tmpdir(), 'bd-native-'));
const engine = new ChdbEngine(dir);

const COLUMNS = [
  { name: 's', type: 'String' },
  { name: 'ns', type: 'Nullable(String)' },
  { name: 'lc', type: 'LowCardinality(Nullable(String))' },
  { name: 'u8', type: 'Nullable(UInt8)' },
  { name: 'u16', type: 'Nullable(UInt16)' },
  { name: 'u32', type: 'Nullable(UInt32)' },
  { name: 'i32', type: 'Nullable(Int32)' },
  { name: 'i64', type: 'Nullable(Int64)' },
  { name: 'f64', type: 'Nullable(Float64)' },
  { name: 'b', type: 'Nullable(Bool)' },
  { name: 'ts', type: "DateTime64(3, 'UTC')" },
  { name: 'nts', type: "Nullable(DateTime64(3, 'UTC'))" },
  { name: 'tags', type: 'Array(LowCardinality(String))' },
  { name: 'vec', type: 'Array(Float64)' },
] as const;
const layout = nativeLayout(COLUMNS);
const names = COLUMNS.map((c) => c.name);
/** A row in the block's column order, from an object of the columns it has. */
const positional = (row: Record<string, unknown>) => names.map((n) => row[n]);

beforeAll(async () => {
  await engine.command(
    `/* test:create */ CREATE TABLE nb (${COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ')}) ENGINE = MergeTree ORDER BY ts SETTINGS non_replicated_deduplication_window = 100`,
  );
});
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const readBack = () =>
  engine.query<Record<string, unknown>>('/* test:read */ SELECT * FROM nb ORDER BY ts', {}, { settings: { output_format_json_quote_64bit_integers: 0 } });

describe('a Native block', () => {
  it('carries every type the flows table uses, nulls and limits included, as the engine reads it back', async () => {
    const long = 'é'.repeat(200) + '🦀';
    const rows = [
      {
        s: 'plain',
        ns: 'x',
        lc: 'tcp',
        u8: 255,
        u16: 65_535,
        u32: 4_294_967_295,
        i32: -2_147_483_648,
        i64: Number.MIN_SAFE_INTEGER,
        f64: -0.5,
        b: true,
        ts: 1,
        nts: 2,
        tags: ['a', 'ü'],
        vec: [1.5, -2],
      },
      {
        s: long,
        ns: null,
        lc: null,
        u8: null,
        u16: 0,
        u32: 0,
        i32: 2_147_483_647,
        i64: Number.MAX_SAFE_INTEGER,
        f64: 1e308,
        b: false,
        ts: 2,
        nts: Date.UTC(2299, 11, 31),
        tags: [],
        vec: [],
      },
      { s: 'tab\there\nnewline \\ quote\' "', ts: 3, tags: ['only'] },
    ];
    await engine.insertNative('nb', names, [encodeNativeBlock(layout, rows.map(positional))]);
    const back = await readBack();
    expect(back).toHaveLength(3);
    expect(back[0]).toMatchObject({
      s: 'plain',
      ns: 'x',
      lc: 'tcp',
      u8: 255,
      u16: 65_535,
      u32: 4_294_967_295,
      i32: -2_147_483_648,
      i64: Number.MIN_SAFE_INTEGER,
      f64: -0.5,
      b: true,
      tags: ['a', 'ü'],
      vec: [1.5, -2],
    });
    expect(back[0]!.ts).toBe('1970-01-01 00:00:00.001');
    expect(back[1]).toMatchObject({
      s: long,
      ns: null,
      lc: null,
      u8: null,
      i32: 2_147_483_647,
      i64: Number.MAX_SAFE_INTEGER,
      f64: 1e308,
      b: false,
      tags: [],
      vec: [],
    });
    expect(back[1]!.nts).toBe('2299-12-31 00:00:00.000');
    expect(back[2]).toMatchObject({ s: 'tab\there\nnewline \\ quote\' "', ns: null, u16: null, i64: null, b: null, nts: null, tags: ['only'], vec: [] });
  });

  it('is deduplicated by its token like any insert, and leaves no file behind', async () => {
    const rows = [{ s: 'once', ts: 10 }];
    for (let i = 0; i < 2; i++) await engine.insertNative('nb', names, [encodeNativeBlock(layout, rows.map(positional))], { dedupToken: 'token-once' });
    expect((await readBack()).filter((r) => r.s === 'once')).toHaveLength(1);
    expect(readdirSync(join(dir, 'insert-spool'))).toEqual([]);
  });

  it('leaves no file behind when the engine refuses the insert', async () => {
    await expect(engine.insertNative('no_such_table', names, [encodeNativeBlock(layout, [positional({ s: 'x', ts: 1 })])])).rejects.toThrow(/no_such_table/);
    expect(readdirSync(join(dir, 'insert-spool'))).toEqual([]);
  });

  it('grows past its first guess of the size', async () => {
    const rows = Array.from({ length: 3 }, (_, i) => ({ s: 'x'.repeat(200_000 + i), ts: 100 + i }));
    await engine.insertNative('nb', names, [encodeNativeBlock(layout, rows.map(positional))]);
    const back = (await readBack()).filter((r) => typeof r.s === 'string' && r.s.startsWith('xxx'));
    expect(back.map((r) => (r.s as string).length)).toEqual([200_000, 200_001, 200_002]);
  });

  it('is the same block when encoded over turns of the event loop, which stay free meanwhile', async () => {
    const rows = Array.from({ length: 500 }, (_, i) =>
      positional({ s: `s${i}`, ns: i % 3 ? null : 'n', i64: i * 1e9, ts: i, tags: ['a', `t${i}`], vec: [i, 0.5] }),
    );
    let turnsTaken = 0;
    const tick = () => {
      turnsTaken++;
      if (!done) setImmediate(tick);
    };
    let done = false;
    setImmediate(tick);
    const inTurns = await encodeNativeBlockInTurns(layout, rows, 0);
    done = true;
    expect(inTurns.equals(encodeNativeBlock(layout, rows))).toBe(true);
    // With no time allowed per turn, every column is a turn of its own.
    expect(turnsTaken).toBeGreaterThanOrEqual(COLUMNS.length - 1);
  });

  it('refuses a type it has no encoder for, when the layout is made', () => {
    expect(() => nativeLayout([{ name: 'x', type: 'Decimal(10, 2)' }])).toThrow(/no encoder for the type Decimal/);
  });
});
