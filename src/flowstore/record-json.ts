/**
 * The flow record as JSON text, written by ClickHouse: one SQL expression per projection that
 * nests the selected columns into the wire shape (wire.md 5.4) while the rows are read.
 *
 * Why in SQL: a 25,000-record page is tens of megabytes of JSON. Built in JavaScript it costs
 * parsing every row and serializing every record again on the event loop (about a second, during
 * which nothing else is answered); built by the engine it is bytes that go to the socket as they
 * came (search.ts, infra/raw-json.ts).
 *
 * Output rules: a null leaf or an empty array is omitted, an object appears only when a leaf
 * under it does, `@timestamp` and `meta.@ingest_time` are epoch milliseconds, JSON columns are
 * embedded as stored (ingest writes them with JSON.stringify), and the record's unknown keys
 * (`extras`) are merged back in without overriding known ones (JSONMergePatch, extras first).
 * With a `fields` projection only the requested paths of JSON columns and of extras are kept;
 * those paths come from the request, so they reach the SQL as parameters.
 *
 * Members are built as `,"key":value` (or '' when absent) and concatenated; an object strips the
 * leading comma of its first member. That is a few string functions per column, no arrays or
 * lambdas per row.
 */
import { EXTRAS_COLUMN, quoteIdent, type ColumnDef } from './columns.js';
import type { Params } from './sql.js';

/** A column in a projection, with the sub-paths wanted inside a JSON column (undefined = whole). */
export interface SelectedColumn {
  col: ColumnDef;
  subPaths?: string[];
}

/** The record's SQL and the parameters it names (requested paths, never written into the text). */
export interface RecordJson {
  sql: string;
  params: Params;
}

interface TreeNode {
  /** SQL of the text `,"key":`. */
  prefix: string;
  /** For a leaf: SQL of `,"key":value`, or '' when the value is absent. */
  member?: (aliases?: Aliases) => string;
  children: Map<string, TreeNode>;
}

/** How a key becomes SQL text: a literal for registry keys, a parameter for requested ones. */
type KeyText = (text: string) => string;

/** A SQL string literal of text we generate (registry keys). */
const literal: KeyText = (text) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const present = (prefix: string, value: string, absent?: string) =>
  absent ? `if(${absent}, '', concat(${prefix}, ${value}))` : `concat(${prefix}, ${value})`;

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

function columnMember(sel: SelectedColumn, prefix: string, keyText: KeyText): TreeNode['member'] {
  const { col } = sel;
  const c = quoteIdent(col.column);
  const isNull = col.nullable ? `isNull(${c})` : undefined;
  const value = col.nullable ? `assumeNotNull(${c})` : c;
  switch (col.kind) {
    case 'timestamp':
      return () => present(prefix, `toString(toUnixTimestamp64Milli(${value}))`, isNull);
    case 'json':
      if (sel.subPaths) return (aliases) => pickedArrayMember(prefix, `ifNull(${c}, '')`, pathsTree('x', sel.subPaths!, keyText), aliases!);
      return () => present(prefix, value, `${isNull ? `${isNull} OR ` : ''}${value} = ''`);
    case 'string[]':
    case 'float[]':
      return () => present(prefix, `toJSONString(${c})`, `empty(${c})`);
    case 'int':
    case 'float':
    case 'bool':
      // Ingest admits finite numbers only, whose text form is valid JSON (and cheaper than toJSONString).
      return () => present(prefix, `toString(${value})`, isNull);
    default:
      return () => present(prefix, `toJSONString(${value})`, isNull);
  }
}

/**
 * A JSON column holding an array of objects (`path`), each element cut down to `element`'s
 * paths; elements left empty are dropped, and the member is absent when none is left.
 */
function pickedArrayMember(prefix: string, json: string, element: TreeNode, aliases: Aliases): string {
  const members = membersSql(element);
  const item = `if(${members} = '', '', concat('{', substring(${members}, 2), '}'))`;
  const alias = aliases.name();
  const items = `arrayFilter(y -> y != '', arrayMap(x -> ${item}, JSONExtractArrayRaw(${json})))`;
  return present(prefix, `concat('[', arrayStringConcat(${alias}, ','), ']')`, `empty(${items} AS ${alias})`);
}

const newNode = (prefix: string): TreeNode => ({ prefix, children: new Map() });

function insert(root: TreeNode, keys: readonly string[], keyText: KeyText, member: (prefix: string) => TreeNode['member']): void {
  let node = root;
  for (const key of keys) {
    let next = node.children.get(key);
    if (!next) node.children.set(key, (next = newNode(keyText(`,${JSON.stringify(key)}:`))));
    node = next;
  }
  node.member = member(node.prefix);
}

/** A tree of dotted paths whose leaves are read from the JSON text `json` with JSONExtractRaw. */
function pathsTree(json: string, paths: readonly string[], keyText: KeyText): TreeNode {
  const root = newNode('');
  // A requested prefix covers everything under it: `src` makes `src.zone` redundant.
  const kept = new Set(paths.filter((p) => !paths.some((q) => p.startsWith(q + '.'))));
  for (const path of kept) {
    const keys = path.split('.');
    const raw = `JSONExtractRaw(${json}, ${keys.map(keyText).join(', ')})`;
    insert(root, keys, keyText, (prefix) => () => present(prefix, raw, `${raw} IN ('', 'null')`));
  }
  return root;
}

/** The concatenated members of an object's children: '' when none is present. */
function membersSql(node: TreeNode, aliases?: Aliases): string {
  const parts = [...node.children.values()].map((child) => {
    if (child.member) return child.member(aliases);
    const members = membersSql(child, aliases);
    if (!aliases) return present(child.prefix, `concat('{', substring(${members}, 2), '}')`, `${members} = ''`);
    const alias = aliases.name();
    return present(child.prefix, `concat('{', substring(${alias}, 2), '}')`, `(${members} AS ${alias}) = ''`);
  });
  return parts.length === 1 ? parts[0]! : `concat(${parts.join(', ')})`;
}

/** `{...}` of a node's members; `{}` when none is present. */
function objectSql(node: TreeNode, aliases?: Aliases): string {
  return `concat('{', substring(${membersSql(node, aliases)}, 2), '}')`;
}

/**
 * The record: the selected columns nested by path, then the unknown keys merged in.
 * `extrasPaths` (a `fields` projection) keeps only those paths of them.
 */
export function recordJsonSql(selected: readonly SelectedColumn[], extrasPaths?: readonly string[]): RecordJson {
  const params: Params = {};
  const param: KeyText = (text) => {
    const name = `rj${Object.keys(params).length}`;
    params[name] = text;
    return `{${name}:String}`;
  };
  const aliases = new Aliases();
  const root = newNode('');
  for (const sel of selected) insert(root, sel.col.path.split('.'), literal, (prefix) => columnMember(sel, prefix, param));
  const record = objectSql(root, aliases);
  const extras = quoteIdent(EXTRAS_COLUMN);
  const patches = extrasPaths
    ? [...pathsTree(extras, extrasPaths, param).children.values()].map((child) => objectSql({ prefix: '', children: new Map([['', child]]) }, aliases))
    : [extras];
  return { sql: `if(${extras} = '', ${record} AS __record, JSONMergePatch(${patches.join(', ')}, __record))`, params };
}
