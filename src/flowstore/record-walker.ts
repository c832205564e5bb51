/**
 * The walk that turns a flow record into a row (ingest-rows.ts flowToRow), compiled once from the
 * column registry: one function per object of the record's known shape, with a `case` per known
 * key that checks and stores the leaf in place. Generic walking (a map lookup per key, a switch on
 * the column's kind per leaf, a shape check over the whole record) was most of ingest's CPU per flow
 * (issue #27, docs/flowstore.md).
 *
 * What a walk does, per object of the record, key by key in the record's own order:
 * - a known leaf: its stored value (record-leaves.ts) goes to the row at its slot and to the
 *   record as search returns it, unless it is null (skipped) or an empty array (row only);
 * - a known object: walked in turn, and kept in the returned record only when something is;
 * - a path ingest sets itself (`ownPaths`): ignored;
 * - anything else (unknown keys, a known object sent as something else): kept as sent, both in
 *   the record and in the extras the walk returns (nesting kept; undefined when there are none).
 * Values the walk keeps without looking inside (unknown ones, JSON leaves) are checked against
 * record-shape.ts's rules; the known part of a record is too shallow to break them.
 */
import type { ColumnDef } from './columns.js';
import { FlowIngestError } from './errors.js';
import { LATEST_STORED_MS, storedValue } from './record-leaves.js';
import { isOutOfShape } from './record-shape.js';

/** A registry column and where its value sits in a row. */
export interface SlottedColumn {
  col: ColumnDef;
  slot: number;
}

/**
 * Converts `obj` into `row` and `record` (an empty object to fill); returns its extras. Throws
 * FlowIngestError on a bad leaf or out-of-shape value: on one, the caller runs checkShape over the
 * whole record first, so that a record's refusal names the same problem whatever its key order.
 */
export type RecordWalker = (
  obj: Record<string, unknown>,
  row: unknown[],
  record: Record<string, unknown>,
  index: number,
) => Record<string, unknown> | undefined;

interface KeyNode {
  col?: SlottedColumn;
  own?: boolean;
  children: Map<string, KeyNode>;
}

function keyTree(columns: readonly SlottedColumn[], ownPaths: ReadonlySet<string>): KeyNode {
  const root: KeyNode = { children: new Map() };
  for (const slotted of columns) {
    let node = root;
    for (const key of slotted.col.path.split('.')) {
      let next = node.children.get(key);
      if (!next) node.children.set(key, (next = { children: new Map() }));
      node = next;
    }
    node.col = slotted;
    node.own = ownPaths.has(slotted.col.path);
  }
  return root;
}

/** An expression that is `v` when it is already what the column stores, without a call. */
function storedAsSent(col: ColumnDef): string | undefined {
  switch (col.kind) {
    case 'string':
    case 'ip':
      return `typeof v === "string" && v.isWellFormed()`;
    case 'int':
      return `typeof v === "number" && Number.isInteger(v) && v >= ${col.intRange![0]} && v <= ${col.intRange![1]}`;
    case 'float':
      return `typeof v === "number" && Number.isFinite(v)`;
    case 'bool':
      return `typeof v === "boolean"`;
    case 'timestamp':
      return `typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= ${LATEST_STORED_MS}`;
    default:
      return undefined;
  }
}

/** Compiles the walk for `columns` (each at its row slot), ignoring the values of `ownPaths`. */
export function compileRecordWalker(columns: readonly SlottedColumn[], ownPaths: ReadonlySet<string>): RecordWalker {
  const cols: ColumnDef[] = [];
  const functions: string[] = [];

  function leafCase(k: string, { col, slot }: SlottedColumn, depth: number): string {
    const c = cols.push(col) - 1;
    const slow = `leaf(C[${c}], v, index, ${depth + 1})`;
    const fast = storedAsSent(col);
    if (fast) return `if (v !== null) { const s = ${fast} ? v : ${slow}; row[${slot}] = s; rec[${k}] = s; }`;
    // Arrays: an empty one is stored, but left out of the record.
    const kept = col.kind === 'json' ? 'v' : 's';
    return `if (v !== null) { const s = ${slow}; row[${slot}] = s; if (v.length !== 0) rec[${k}] = ${kept}; }`;
  }

  function objectCase(k: string, node: KeyNode, depth: number): string {
    const fn = compileNode(node, depth + 1);
    return `if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        const inner = {};
        const e = ${fn}(v, row, inner, index);
        if (e) (ext ??= {})[${k}] = e;
        for (const _ in inner) { rec[${k}] = inner; break; }
      } else if (v !== null) {
        (ext ??= {})[${k}] = v; rec[${k}] = v;
        shape(v, ${depth + 1}, index);
      }`;
  }

  function compileNode(node: KeyNode, depth: number): string {
    // Reserved before the children compile, so the root is walk0 and each name is its position.
    const id = functions.push('') - 1;
    const name = `walk${id}`;
    const cases: string[] = [];
    for (const [key, child] of node.children) {
      const k = JSON.stringify(key);
      const body = child.own ? `shape(v, ${depth + 1}, index);` : child.col ? leafCase(k, child.col, depth) : objectCase(k, child, depth);
      cases.push(`case ${k}: ${body} break;`);
    }
    const code = `function ${name}(obj, row, rec, index) {
  let ext;
  for (const key in obj) {
    const v = obj[key];
    if (v === undefined) continue;
    switch (key) {
      ${cases.join('\n      ')}
      default:
        (ext ??= {})[key] = v; rec[key] = v;
        shape(v, ${depth + 1}, index);
    }
  }
  return ext;
}`;
    functions[id] = code;
    return name;
  }

  const root = compileNode(keyTree(columns, ownPaths), 1);
  return new Function('C', 'leaf', 'shape', `${functions.join('\n')}\nreturn ${root};`)(cols, leafValue, checkValueShape) as RecordWalker;
}

/** A leaf's stored value off the fast path; an object is checked for shape before it is quoted in a refusal. */
function leafValue(col: ColumnDef, v: unknown, index: number, depth: number): unknown {
  checkValueShape(v, depth, index);
  return storedValue(col, v, index);
}

/** Throws when a value kept unlooked-at would break record-shape.ts's rules (the caller names the place). */
function checkValueShape(v: unknown, depth: number, index: number): void {
  const outOfShape = typeof v === 'number' ? !Number.isFinite(v) : v !== null && typeof v === 'object' && isOutOfShape(v, depth);
  if (outOfShape) throw new FlowIngestError(index, '', 'is out of shape');
}
