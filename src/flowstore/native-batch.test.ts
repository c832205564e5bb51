/**
 * A Native batch is stored as the same records sent as JSON are: each insert column equal (the
 * `source` and `extras` JSON equal as values), the same refusals; and a batch the format does not
 * allow is refused whole, naming why.
 */
import { describe, expect, it } from 'vitest';
import { createFlowGenerator } from '../../tools/collector/flowgen/index.js';
import { encodeNativeBatch } from '../../tools/collector/native-batch.js';
import { atOnce } from './turns.js';
import { convertFlows } from './ingest-convert.js';
import { FLOW_ROW_COLUMNS, flowRowsBlock, type RowStamp } from './ingest-rows.js';
import { NativeBatch, NativeBatchError } from './native-batch.js';
import { type ReadColumn, readNativeBlock } from './native-batch-read.js';
import { encodeNativeBlock, nativeLayout } from './native-block.js';
import { sampleFlows } from './testkit/sample-flows.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const stamp: RowStamp = { customerId: 'cust-1', nodeId: 'node-1', batchId: 'batch-1', ingestTimeMs: NOW - 5 };
const window = { retentionDays: 30, nowMs: NOW };
const tooMany = (rows: number): never => {
  throw new Error(`too many rows: ${rows}`);
};

/** An insert block's columns by name: values as text or numbers, `source` and `extras` parsed. */
function columnsOf(block: Buffer): Map<string, unknown[]> {
  const read = readNativeBlock(block, 1e6, tooMany);
  const values = (c: ReadColumn, i: number) => (c.scalar === 'String' ? block.toString('utf8', c.starts![i], c.ends![i]) : c.numbers![i]);
  return new Map(
    read.columns.map((c) => [
      c.name,
      Array.from({ length: read.rows }, (_, r) => {
        if (c.nulls?.[r]) return null;
        if (c.array) {
          const ends = c.elementEnds!;
          return Array.from({ length: ends[r]! - (r ? ends[r - 1]! : 0) }, (_, e) => values(c, (r ? ends[r - 1]! : 0) + e));
        }
        const v = values(c, r);
        return (c.name === 'source' || c.name === 'extras') && v ? JSON.parse(v as string) : v;
      }),
    ]),
  );
}

/** Both paths over the same records: the JSON batch's rejections and block, and the Native batch's (as the reference collector encodes it, or as given). */
function bothWays(records: Record<string, unknown>[], block = encodeNativeBatch(records)!) {
  const json = atOnce(convertFlows(stamp, records, window));
  const native = NativeBatch.read(block, 10_000, tooMany);
  const converted = native.convert(stamp, window);
  const indexes = json.days.flatMap((d) => d.indexes);
  return {
    json: { rejected: json.rejected, days: json.days, block: flowRowsBlock(indexes.map((i) => json.rows[i]!)) },
    native: {
      rejected: converted.rejected,
      days: converted.days,
      block: native.block(
        stamp,
        converted.days.flatMap((d) => d.indexes),
      ),
    },
  };
}

function expectSameBlocks(a: Buffer, b: Buffer) {
  const left = columnsOf(a);
  const right = columnsOf(b);
  expect([...right.keys()]).toEqual(FLOW_ROW_COLUMNS);
  for (const name of FLOW_ROW_COLUMNS) expect({ name, values: right.get(name) }).toEqual({ name, values: left.get(name) });
}

describe('a Native batch', () => {
  it('stores generated flows as the same rows as their JSON batch', () => {
    const flows = createFlowGenerator({ seed: 3, customerId: 'x', startMs: NOW - 3_600_000, flowsPerSecond: 50, scenarios: [] }).take(300);
    const { json, native } = bothWays(flows as unknown as Record<string, unknown>[]);
    expect(json.rejected).toEqual([]);
    expect(native.rejected).toEqual([]);
    expect(native.days).toEqual(json.days);
    expectSameBlocks(json.block, native.block);
  });

  it('stores awkward records (missing leaves, unicode, quotes, big integers, extras) as JSON does', () => {
    // An extra that is NULL is absent: a Native batch cannot keep the `null` a JSON record can.
    const flows = sampleFlows(400, 11, NOW).map((f, i) => ({ ...f, custom: { seen: i % 3 ? `x${i}` : undefined, n: i } }));
    const { json, native } = bothWays(flows);
    expect(native.rejected).toEqual(json.rejected);
    expectSameBlocks(json.block, native.block);
  });

  it('refuses the records JSON refuses, with the same reasons', () => {
    const ok = { '@timestamp': NOW - 1000, dst: { port: 443 }, stats: { volume: { bytes: { total: 10 } } }, path: [{ sensor: { name: 'a' } }] };
    const records: Record<string, unknown>[] = [
      ok,
      { ...ok, dst: { port: 70_000 } },
      { ...ok, '@timestamp': undefined },
      { ...ok, '@timestamp': NOW - 40 * 86_400_000 },
      { ...ok, '@timestamp': NOW + 3 * 86_400_000 },
      { ...ok, dst: { port: 1.5 } },
    ];
    const { json, native } = bothWays(records);
    expect(json.rejected.map((r) => r.index)).toEqual([1, 2, 3, 4, 5]);
    expect(native.rejected).toEqual(json.rejected);
    expectSameBlocks(json.block, native.block);
  });

  it('refuses a record whose value no JSON record can hold, or whose path is not an array', () => {
    const block = encodeNativeBlock(
      nativeLayout([
        { name: '@timestamp', type: 'Int64' },
        { name: 'stats.volume.bytes.total', type: 'Float64' },
        { name: 'path', type: 'Nullable(String)' },
        { name: 'transport.proto_num', type: 'UInt16' },
      ]),
      [
        [NOW, NaN, null, 6],
        [NOW, 1, '{"a":1}', 6],
        [NOW, 1, 'not json', 300],
        [NOW, Infinity, '[]', 17],
        [NOW, 2, '[{"sensor":{"name":"s"}}]', 17],
      ],
    );
    const batch = NativeBatch.read(block, 100, tooMany);
    const { rejected, days } = batch.convert(stamp, window);
    expect(rejected).toEqual([
      { index: 0, error: 'flow #0: stats.volume.bytes.total: expected a finite number, got null' },
      { index: 1, error: 'flow #1: path: expected an array, got "{\\"a\\":1}"' },
      { index: 2, error: 'flow #2: path: expected an array, got "not json"' },
      { index: 3, error: 'flow #3: stats.volume.bytes.total: expected a finite number, got null' },
    ]);
    expect(days.flatMap((d) => d.indexes)).toEqual([4]);
    const stored = columnsOf(batch.block(stamp, [4]));
    expect(stored.get('path')).toEqual(['[{"sensor":{"name":"s"}}]']);
    expect(stored.get('transport_proto_num')).toEqual([17]);
    expect(stored.get('source')![0]).toMatchObject({ path: [{ sensor: { name: 's' } }], transport: { proto_num: 17 } });
  });

  it('mends text that is not UTF-8, as JSON text is made well formed', () => {
    const layout = nativeLayout([
      { name: '@timestamp', type: 'Int64' },
      { name: 'app_name', type: 'String' },
    ]);
    const block = encodeNativeBlock(layout, [
      [NOW, 'AAAA'],
      [NOW, 'ok'],
    ]);
    const at = block.indexOf('AAAA');
    block[at + 1] = 0xff;
    const batch = NativeBatch.read(block, 100, tooMany);
    const { rejected } = batch.convert(stamp, window);
    expect(rejected).toEqual([]);
    const stored = columnsOf(batch.block(stamp, [0, 1]));
    expect(stored.get('app_name')).toEqual(['A\uFFFDAA', 'ok']);
    expect(stored.get('source')!.map((s) => (s as { app_name: string }).app_name)).toEqual(['A\uFFFDAA', 'ok']);
  });

  it('ignores the paths the service stamps and keeps a sent ingest time', () => {
    const block = encodeNativeBlock(
      nativeLayout([
        { name: '@timestamp', type: "DateTime64(3, 'UTC')" },
        { name: 'meta.customer_id', type: 'String' },
        { name: 'id', type: 'String' },
        { name: 'meta.@ingest_time', type: 'Nullable(Int64)' },
      ]),
      [
        [NOW, 'other-tenant', 'forged', NOW - 100],
        [NOW, 'other-tenant', 'forged', null],
      ],
    );
    const batch = NativeBatch.read(block, 100, tooMany);
    batch.convert(stamp, window);
    const stored = columnsOf(batch.block(stamp, [0, 1]));
    expect(stored.get('customer_id')).toEqual(['cust-1', 'cust-1']);
    expect(stored.get('id')![0]).not.toBe('forged');
    expect(stored.get('meta_ingest_time')).toEqual([NOW - 100, NOW - 5]);
    expect(stored.get('source')).toEqual([
      { '@timestamp': NOW, meta: { customer_id: 'cust-1', '@ingest_time': NOW - 100 } },
      { '@timestamp': NOW, meta: { customer_id: 'cust-1', '@ingest_time': NOW - 5 } },
    ]);
  });

  describe('is refused whole', () => {
    const refusal = (block: Buffer, maxRows = 100) => {
      try {
        NativeBatch.read(block, maxRows, tooMany);
      } catch (error) {
        return error instanceof NativeBatchError ? error.message : `not a NativeBatchError: ${String(error)}`;
      }
      return 'accepted';
    };
    const one = (columns: { name: string; type: string }[], row: unknown[]) => encodeNativeBlock(nativeLayout(columns), [row]);
    const ts = { name: '@timestamp', type: 'Int64' };

    it('when the block is cut short or followed by more bytes', () => {
      const block = one([ts, { name: 'app_name', type: 'String' }], [NOW, 'HTTPS']);
      expect(refusal(block.subarray(0, block.length - 2))).toBe('the block ends inside column app_name');
      expect(refusal(Buffer.concat([block, Buffer.from([0])]))).toBe('1 bytes follow the block; a batch is one block');
      expect(refusal(Buffer.alloc(0))).toBe('the block ends inside the column count');
    });

    it('when a column has a type the format does not take, or its field does not', () => {
      const float32 = one([ts, { name: 'x', type: 'Float64' }], [NOW, 1]);
      float32.write('Float32', float32.indexOf('Float64'));
      expect(refusal(float32)).toMatch(/^column x: type Float32 is not one a batch may use/);
      expect(refusal(one([ts, { name: 'dst.port', type: 'String' }], [NOW, '443']))).toMatch(/^column dst.port: int fields do not take String/);
      expect(refusal(one([{ name: '@timestamp', type: 'Float64' }], [NOW]))).toMatch(/^column @timestamp: timestamp fields do not take Float64/);
      expect(refusal(one([ts, { name: 'meta.tags', type: 'String' }], [NOW, 'a']))).toMatch(/^column meta.tags: string\[\] fields do not take String/);
    });

    it('when its paths are not a record', () => {
      expect(refusal(one([ts, ts], [NOW, NOW]))).toBe('column @timestamp is sent twice');
      expect(refusal(one([ts, { name: 'a..b', type: 'String' }], [NOW, 'x']))).toMatch(/none of them empty/);
      expect(refusal(one([ts, { name: 'src.ip.v', type: 'String' }], [NOW, 'x']))).toBe('column src.ip.v: src.ip is a field, not an object');
      expect(refusal(one([ts, { name: 'a', type: 'String' }, { name: 'a.b', type: 'String' }], [NOW, 'x', 'y']))).toBe(
        'column a.b: a is a field, not an object',
      );
      expect(refusal(one([ts, { name: 'meta', type: 'String' }], [NOW, 'x']))).toMatch(/^column meta: meta is an object/);
      expect(refusal(one([ts, { name: Array(65).fill('k').join('.'), type: 'String' }], [NOW, 'x']))).toMatch(/nests deeper than 64 levels/);
    });

    it('when it has more records or columns than a batch may', () => {
      const rows = Array.from({ length: 101 }, () => [NOW]);
      expect(() => NativeBatch.read(encodeNativeBlock(nativeLayout([ts]), rows), 100, tooMany)).toThrow('too many rows: 101');
      const wide = Array.from({ length: 1001 }, (_, i) => ({ name: `x${i}`, type: 'UInt8' }));
      expect(refusal(one(wide, new Array(1001).fill(1)))).toBe('a batch has at most 1000 columns, not 1001');
    });

    it('when a count or length claims more than the body holds', () => {
      // One column, 2^40 rows: refused by the row limit before anything is allocated.
      expect(() => NativeBatch.read(Buffer.from([1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]), 10_000, tooMany)).toThrow('too many rows: 1099511627776');
      const array = one([ts, { name: 'meta.tags', type: 'Array(String)' }], [NOW, ['a']]);
      const offset = array.indexOf(Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), array.indexOf('Array(String)'));
      array.writeUInt32LE(0xffffffff, offset);
      expect(refusal(array)).toBe('the block ends inside column meta.tags');
    });
  });
});
