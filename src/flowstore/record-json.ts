/**
 * Flow records as JSON text, written by ClickHouse (wire.md 5.4), in two shapes:
 * - `projectedRecordSql`: a `fields` projection, the requested paths cut out of the stored
 *   record (`source`, columns.ts) and nested again;
 * - `recordFromColumnsSql`: the whole record rebuilt from its columns, which is what `source`
 *   holds, for rows stored before it existed (flow store migration 2).
 * Either way the page's bytes go to the socket as the engine wrote them (search.ts,
 * infra/raw-json.ts): nothing is parsed or serialized on the event loop.
 *
 * Output rules, the ones ingest applies to `source`: a null leaf or an empty array is omitted, an
 * object appears only when a leaf under it does, `@timestamp` and `meta.@ingest_time` are epoch
 * milliseconds, JSON columns are embedded as stored, and unknown keys (`extras`) are merged in
 * without overriding known ones (JSONMergePatch, extras first).
 *
 * Members are built as `,"key":value` (or '' when absent) and concatenated; an object strips the
 * leading comma of its first member. Requested paths come from the request, so they reach the SQL
 * as parameters, never as text.
 */
import { EXTRAS_COLUMN, RECORD_COLUMNS, SOURCE_COLUMN, quoteIdent, type ColumnDef } from './columns.js';
import type { Params } from './sql.js';

/** The record's SQL and the parameters it names. */
export interface RecordJson {
  sql: string;
  params: Params;
}

interface TreeNode {
  /** The text `,"key":`. */
  key: string;
  /** How `key` (or a chain of keys starting here) becomes SQL. */
  keyText: KeyText;
  /** For a leaf: its member, see Member. */
  member?: Member;
  children: Map<string, TreeNode>;
}

/**
 * A leaf's member: SQL of `<prefix>value<close>`, or '' when the value is absent. `prefix` is SQL
 * of the text before the value (`,"key":`, or `,"a":{"b":` for a chain of objects), `close` the
 * braces the chain opened.
 */
type Member = (prefix: string, close: string, aliases?: Aliases) => string;

/** How a key becomes SQL text: a literal for registry keys, a parameter for requested ones. */
type KeyText = (text: string) => string;

/** A SQL string literal of text we generate (registry keys). */
const literal: KeyText = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const present = (prefix: string, close: string, value: string, absent?: string) => {
  const text = close ? `concat(${prefix}, ${value}, '${close}')` : `concat(${prefix}, ${value})`;
  return absent ? `if(${absent}, '', ${text})` : text;
};

/**
 * Names for repeated subexpressions. An object's members are tested for '' and then used, so
 * without a name (`__rj<n>`) their text would double at every level of nesting. Lambda bodies
 * (picked array elements) get no names: they are small, and names do not cross into lambdas.
 */
class Aliases {
  private next = 0;
  name(): string {
    return `__rj${this.next++}`;
  }
}

const newNode = (key: string, keyText: KeyText): TreeNode => ({ key, keyText, children: new Map() });

function insert(root: TreeNode, keys: readonly string[], keyText: KeyText, member: Member): void {
  let node = root;
  for (const key of keys) {
    let next = node.children.get(key);
    if (!next) node.children.set(key, (next = newNode(`,${JSON.stringify(key)}:`, keyText)));
    node = next;
  }
  node.member = member;
}

/** The concatenated members of an object's children: '' when none is present. */
function membersSql(node: TreeNode, aliases?: Aliases): string {
  const parts = [...node.children.values()].map((child) => {
    // Objects of one member each (`stats.volume.bytes.total` asked alone) are written with one
    // prefix, `,"stats":{"volume":{"bytes":{"total":`, and closed after the value: one test for
    // absence instead of one per level (~2 ms of a 1,000-record page at 100M).
    const chain = [child];
    for (let end = child; !end.member && end.children.size === 1;) chain.push((end = end.children.values().next().value!));
    const end = chain[chain.length - 1]!;
    const keyText = chain.find((n) => n.keyText !== literal)?.keyText ?? literal;
    const prefix = keyText(chain.map((n, i) => (i === 0 ? n.key : `{${n.key.slice(1)}`)).join(''));
    const close = '}'.repeat(chain.length - 1);
    if (end.member) return end.member(prefix, close, aliases);
    const members = membersSql(end, aliases);
    if (!aliases) return present(prefix, close, `concat('{', substring(${members}, 2), '}')`, `${members} = ''`);
    const alias = aliases.name();
    return present(prefix, close, `concat('{', substring(${alias}, 2), '}')`, `(${members} AS ${alias}) = ''`);
  });
  return parts.length === 1 ? parts[0]! : `concat(${parts.join(', ')})`;
}

/** `{...}` of a node's members; `{}` when none is present. */
function objectSql(node: TreeNode, aliases?: Aliases): string {
  return `concat('{', substring(${membersSql(node, aliases)}, 2), '}')`;
}

/** A leaf read from the JSON text `json` at `keys`: absent when missing or null. */
function rawLeaf(json: string, keys: readonly string[], keyText: KeyText): Member {
  const raw = `JSONExtractRaw(${json}, ${keys.map(keyText).join(', ')})`;
  return (prefix, close) => present(prefix, close, raw, `${raw} IN ('', 'null')`);
}

/** Requested paths without the ones a requested prefix already covers (`src` covers `src.zone`). */
function outermost(paths: readonly string[]): string[] {
  return [...new Set(paths.filter((p) => !paths.some((q) => p.startsWith(q + '.'))))];
}

/**
 * A member holding the array of objects at `keys` of `json` (`path`), each element cut down to
 * `subPaths`; elements left empty are dropped, and the member is absent when none is left.
 */
function pickedArray(json: string, keys: readonly string[], subPaths: readonly string[], keyText: KeyText): Member {
  const element = newNode('', literal);
  for (const p of outermost(subPaths)) insert(element, p.split('.'), keyText, rawLeaf('x', p.split('.'), keyText));
  const members = membersSql(element);
  const item = `if(${members} = '', '', concat('{', substring(${members}, 2), '}'))`;
  const items = `arrayFilter(y -> y != '', arrayMap(x -> ${item}, JSONExtractArrayRaw(${json}, ${keys.map(keyText).join(', ')})))`;
  return (prefix, close, aliases) => {
    const alias = aliases!.name();
    return present(prefix, close, `concat('[', arrayStringConcat(${alias}, ','), ']')`, `empty(${items} AS ${alias})`);
  };
}

export interface Projected {
  /** Registry columns of ours (`id`, `node_id`, `batch_id`) asked for by name. */
  internal: readonly ColumnDef[];
  /** Record paths (canonical, dotted) to cut out of `source`. */
  paths: readonly string[];
  /** JSON array columns (`path`) of which only some sub-paths are asked for. */
  arrays: readonly { col: ColumnDef; subPaths: readonly string[] }[];
}

/** Scalar and array leaves of the record, by path: the paths a projection reads from their column. */
const LEAVES: ReadonlyMap<string, ColumnDef> = new Map(RECORD_COLUMNS.filter((c) => c.kind !== 'json').map((c) => [c.path, c]));

/** A `fields` projection: the requested paths of the stored record, plus requested internal columns. */
export function projectedRecordSql(p: Projected): RecordJson {
  const params: Params = {};
  // One parameter per distinct key text, however often the SQL names it.
  const names = new Map<string, string>();
  const param: KeyText = (text) => {
    let name = names.get(text);
    if (name === undefined) {
      names.set(text, (name = `rj${names.size}`));
      params[name] = text;
    }
    return `{${name}:String}`;
  };
  const source = quoteIdent(SOURCE_COLUMN);
  const root = newNode('', literal);
  for (const col of p.internal) insert(root, [col.path], literal, (prefix, close) => present(prefix, close, `toJSONString(${quoteIdent(col.column)})`));
  for (const path of outermost(p.paths)) {
    // A registry leaf is read from its column (a few bytes); anything else (an object, which
    // may hold unknown keys too, or an unknown path) is cut out of the stored record.
    const leaf = LEAVES.get(path);
    insert(root, path.split('.'), param, leaf ? columnLeaf(leaf) : rawLeaf(source, path.split('.'), param));
  }
  for (const { col, subPaths } of p.arrays) insert(root, col.path.split('.'), literal, pickedArray(source, col.path.split('.'), subPaths, param));
  return { sql: objectSql(root, new Aliases()), params };
}

/** The member of one column's value, as ingest writes it into `source`. */
function columnLeaf(col: ColumnDef): Member {
  const c = quoteIdent(col.column);
  const isNull = col.nullable ? `isNull(${c})` : undefined;
  const value = col.nullable ? `assumeNotNull(${c})` : c;
  return (prefix, close) => {
    switch (col.kind) {
      case 'timestamp':
        return present(prefix, close, `toString(toUnixTimestamp64Milli(${value}))`, isNull);
      case 'json':
        return present(prefix, close, value, `${isNull ? `${isNull} OR ` : ''}${value} IN ('', '[]')`);
      case 'string[]':
      case 'float[]':
        return present(prefix, close, `toJSONString(${c})`, `empty(${c})`);
      case 'int':
      case 'float':
      case 'bool':
        // Ingest admits finite numbers only, whose text form is valid JSON (and cheaper than toJSONString).
        return present(prefix, close, `toString(${value})`, isNull);
      default:
        return present(prefix, close, `toJSONString(${value})`, isNull);
    }
  };
}

/** The whole record rebuilt from its columns and extras: what ingest writes to `source`. */
export function recordFromColumnsSql(): string {
  const root = newNode('', literal);
  for (const col of RECORD_COLUMNS) insert(root, col.path.split('.'), literal, columnLeaf(col));
  const extras = quoteIdent(EXTRAS_COLUMN);
  return `if(${extras} = '', ${objectSql(root, new Aliases())} AS __record, JSONMergePatch(${extras}, __record))`;
}
