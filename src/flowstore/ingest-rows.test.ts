/**
 * Pins what flowToRow stores: every row value and the `source` bytes, and the error a refused
 * record gets, against a reference evaluator (the generic path walker flowToRow used before it was
 * compiled from the registry, kept here as the definition of the output: the whole record's shape
 * checked first, then every key looked up in a tree of the registry's paths, every leaf through
 * storedValue), on generated flows and on hostile records: numeric strings, nulls, empty arrays and
 * objects, big and non-finite numbers, unicode and lone surrogates, unknown keys at every level,
 * `__proto__` keys, deep nesting.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFlowGenerator } from '../../tools/collector/flowgen/index.js';
import { COLUMNS, type ColumnDef } from './columns.js';
import { FlowIngestError } from './errors.js';
import { FLOW_ROW_COLUMNS, flowRowSlot, flowToRow, type FlowRow, type RowStamp } from './ingest-rows.js';
import { storedValue } from './record-leaves.js';
import { checkShape } from './record-shape.js';
import { sampleFlows } from './testkit/sample-flows.js';

// ---- The reference: a record walked key by key against a tree of the registry's paths. ----

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
const OWN_PATHS = new Set(['id', 'node_id', 'batch_id', 'meta.customer_id']);

function walk(obj: Record<string, unknown>, node: KeyNode, row: FlowRow, record: Record<string, unknown>, index: number): Record<string, unknown> | undefined {
  let extras: Record<string, unknown> | undefined;
  for (const key in obj) {
    const v = obj[key];
    if (v === undefined) continue;
    const child = node.children?.get(key);
    if (child?.col) {
      if (v === null || OWN_PATHS.has(child.col.path)) continue;
      const stored = storedValue(child.col, v, index);
      row[child.slot!] = stored;
      if (!(Array.isArray(v) && v.length === 0)) record[key] = child.col.kind === 'json' ? v : stored;
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

function referenceFlowToRow(batch: RowStamp, flow: Record<string, unknown>, index: number): FlowRow {
  const slot = (c: string) => flowRowSlot(c);
  const row: FlowRow = new Array(FLOW_ROW_COLUMNS.length);
  row[slot('customer_id')] = batch.customerId;
  row[slot('node_id')] = batch.nodeId;
  row[slot('batch_id')] = batch.batchId;
  row[slot('id')] = createHash('sha256')
    .update(`${batch.customerId}\u0000${batch.nodeId}\u0000${batch.batchId}\u0000${index}`)
    .digest('base64url')
    .slice(0, 22);
  checkShape(flow, index);
  const record: Record<string, unknown> = {};
  const extras = walk(flow, ROOT, row, record, index);
  if (row[slot('timestamp')] === undefined) throw new FlowIngestError(index, '@timestamp', 'is required');
  row[slot('meta_ingest_time')] ??= batch.ingestTimeMs ?? Date.now();
  row[slot('extras')] = extras ? JSON.stringify(extras) : '';
  const meta = record.meta !== null && typeof record.meta === 'object' && !Array.isArray(record.meta) ? (record.meta as Record<string, unknown>) : {};
  record.meta = { ...meta, customer_id: batch.customerId, '@ingest_time': row[slot('meta_ingest_time')] };
  row[slot('source')] = JSON.stringify(record);
  return row;
}

// ---- The comparison. ----

const STAMP: RowStamp = { customerId: 'tenant-ü', nodeId: 'node-1', batchId: 'batch-7', ingestTimeMs: 1_790_000_000_123 };

/** flowToRow's outcome as comparable data: the row, or the refusal's class and message. */
function outcome(convert: typeof flowToRow, flow: Record<string, unknown>, index: number, stamp = STAMP): unknown {
  try {
    return { row: convert(stamp, flow, index) };
  } catch (error) {
    if (!(error instanceof FlowIngestError)) throw error;
    return { refused: error.message };
  }
}

function expectSameAsReference(flow: Record<string, unknown>, index = 0, stamp = STAMP): void {
  const expected = outcome(referenceFlowToRow, flow, index, stamp);
  expect(outcome(flowToRow, flow, index, stamp)).toStrictEqual(expected);
}

const generated = (seed: number, n: number, scenarios: Parameters<typeof createFlowGenerator>[0]['scenarios']) =>
  createFlowGenerator({ seed, customerId: 'pin', startMs: Date.UTC(2026, 5, 1), flowsPerSecond: 50, scenarios }).take(n) as unknown as Record<
    string,
    unknown
  >[];

/**
 * A copy of `flow` with `value` set at `keys`, objects made on the way where a key is missing. An
 * own property even for `__proto__`, as JSON.parse makes it.
 */
function withValue(flow: Record<string, unknown>, keys: readonly string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(flow);
  let at: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    const next = at[key];
    at = next !== null && typeof next === 'object' && !Array.isArray(next) && Object.hasOwn(at, key) ? (next as Record<string, unknown>) : setOwn(at, key, {});
  }
  setOwn(at, keys.at(-1)!, value);
  return copy;
}

function setOwn<T>(obj: Record<string, unknown>, key: string, value: T): T {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    [],
    {},
    '',
    ' ',
    '80',
    ' 12 ',
    '1e3',
    '0x10',
    '-0',
    '1.5',
    'NaN',
    'Infinity',
    '9007199254740993',
    true,
    false,
    0,
    -0,
    1.5,
    -1,
    2 ** 31,
    2 ** 32,
    2 ** 53 + 2,
    1e308,
    -1e-300,
    4_294_967_295,
    4_294_967_296,
  ),
  fc.constantFrom('\ud800', 'a\udc00b', 'Ünïcode ✓ 🚀', '"quote" \\ \n\t\u0000', '__proto__', 'constructor'),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const registryPaths = COLUMNS.map((c) => c.path.split('.'));
const keyPath: fc.Arbitrary<string[]> = fc.oneof(
  fc.constantFrom(...registryPaths),
  fc
    .constantFrom(...registryPaths)
    .map((keys) => keys.slice(0, -1))
    .filter((keys) => keys.length > 0),
  fc
    .tuple(fc.constantFrom(...registryPaths), fc.constantFrom('x', 'zz', '0', '7', '__proto__', 'a.b', ''))
    .map(([keys, extra]) => [...keys.slice(0, -1), extra]),
  fc.array(fc.constantFrom('meta', 'src', 'geo', 'unknown', '@ingest_time', 'customer_id', 'id', '1'), { minLength: 1, maxLength: 4 }),
);

describe('flowToRow stores what the reference evaluator stores', () => {
  it('for generated flows of every kind of traffic', () => {
    const flows = [
      ...generated(1, 1500, []),
      ...generated(2, 1500, [
        'beacon',
        'exfil',
        'scan',
        'bruteforce',
        'dns-tunnel',
        { kind: 'bruteforce', service: 'rdp' },
        { kind: 'bruteforce', service: 'smb' },
      ]),
      ...sampleFlows(300, 5, Date.UTC(2026, 5, 1)),
    ];
    flows.forEach((flow, i) => expectSameAsReference(flow, i));
  });

  it('for generated flows with hostile values at known and unknown paths', () => {
    const base = generated(3, 40, ['beacon', 'scan']);
    fc.assert(
      fc.property(fc.nat(base.length - 1), fc.array(fc.tuple(keyPath, hostileValue), { minLength: 1, maxLength: 6 }), fc.nat(1_000_000), (at, edits, index) => {
        const flow = edits.reduce((f, [keys, value]) => withValue(f, keys, value), base[at]!);
        expectSameAsReference(flow, index);
      }),
      { numRuns: 3000, seed: 27 },
    );
  });

  it('for records parsed from hostile JSON text', () => {
    const ts = '"@timestamp":1790000000000';
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const texts = [
      `{${ts}}`,
      `{}`,
      `{"@timestamp":"1790000000000"}`,
      `{"@timestamp":" 1790000000000 "}`,
      `{"@timestamp":1790000000000.5}`,
      `{"@timestamp":null}`,
      `{${ts},"__proto__":{"meta":{"x":1}}}`,
      `{${ts},"__proto__":{"a":1},"src":{"__proto__":{"b":2},"port":"80"}}`,
      `{${ts},"src":{"__proto__":null,"ip":"10.0.0.1"}}`,
      `{${ts},"meta":{"__proto__":{"customer_id":"evil"},"tags":["a"]}}`,
      `{"7":1,${ts},"0":{"x":null},"meta":{"3":true,"@ingest_time":5,"customer_id":"evil","x":{}}}`,
      `{${ts},"meta":{"@ingest_time":"42"},"id":"mine","node_id":{"deep":${deep(80)}},"batch_id":null}`,
      `{${ts},"meta":"text"}`,
      `{${ts},"meta":[]}`,
      `{${ts},"meta":null,"src":null,"dst":[]}`,
      `{${ts},"meta":{}}`,
      `{${ts},"meta":{"tags":[]}}`,
      `{${ts},"src":{"geo":{"location":{"lat":1e400}}}}`,
      `{${ts},"x":[1,2,{"y":-1e400}]}`,
      `{${ts},"x":${deep(63)}}`,
      `{${ts},"x":${deep(64)}}`,
      `{${ts},"path":${deep(70)}}`,
      `{${ts},"path":[{"sensor":{"id":"s"}},null,1e400]}`,
      `{${ts},"path":[]}`,
      `{${ts},"path":{}}`,
      `{${ts},"src":{"port":"65536"},"x":${deep(70)}}`,
      `{${ts},"src":{"port":"65536"}}`,
      `{${ts},"src":{"port":65535.0,"ip":7}}`,
      `{${ts},"src":{"ctx":{"vector":[1,"2"]}}}`,
      `{${ts},"src":{"ctx":{"vector":[1e308,-0,5e-324]}}}`,
      `{${ts},"tcp":{"flags":["SYN","\\ud800"]}}`,
      `{${ts},"app_name":"\\udfff\\ud800","x":"\\ud800"}`,
      `{${ts},"stats":{"connection_count":9007199254740993}}`,
      `{${ts},"stats":{"connection_count":"9007199254740991"}}`,
      `{${ts},"stats":"flat","src":{"geo":"flat"},"dst":{"geo":{"asn":{}}}}`,
      `{${ts},"meta":{"tags":"a"}}`,
      `{${ts},"a":{"b":{"c":{"d":[{},[],null,"",0]}}},"":"","a.b":1}`,
    ];
    texts.forEach((text, i) => expectSameAsReference(JSON.parse(text) as Record<string, unknown>, i));
  });

  it('for stamps with and without an ingest time', () => {
    const [flow] = generated(4, 1, []);
    const { '@ingest_time': _, ...meta } = flow!.meta as Record<string, unknown>;
    for (const f of [flow!, { ...flow!, meta }, { ...flow!, meta: undefined }]) {
      expectSameAsReference(f, 3, { customerId: 'c', nodeId: 'n', batchId: 'b', ingestTimeMs: 12 });
    }
  });
});
