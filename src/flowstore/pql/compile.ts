/**
 * Compiles a checked PQL tree to a ClickHouse boolean expression over the registry's columns.
 * Every value becomes a typed placeholder in the ParamBag; only registry column names and fixed
 * SQL enter the text.
 *
 * Null semantics (kept identical in evaluate.ts):
 * - positive tests (eq, gt, in, wi, ...) never match a missing value;
 * - negative tests are the exact complement of their positive twin: `ne`, `nwi` and `nex` match
 *   a record whose field is missing. They are compiled as `NOT ifNull(<positive>, 0)`.
 * - on arrays, eq/in/wi ask "does any element match"; `ex` means "not empty".
 */
import { addressSql, quoteIdent, type ColumnDef } from '../columns.js';
import { IPV4_RANGE, formatIpv6, isIpv4 } from '../ip.js';
import type { ParamBag } from '../sql.js';
import type { Op } from './ast.js';
import type { Operand, TypedCondition, TypedExpr } from './check.js';

const CMP: Partial<Record<Op, string>> = { eq: '=', gt: '>', lt: '<', gte: '>=', lte: '<=' };

/** `*` → `%`, `?` → `_`; LIKE's own metacharacters are escaped so they match literally. */
export function wildcardToLike(pattern: string): string {
  let out = '';
  for (const ch of pattern) {
    if (ch === '*') out += '%';
    else if (ch === '?') out += '_';
    else if (ch === '%' || ch === '_' || ch === '\\') out += '\\' + ch;
    else out += ch;
  }
  return out;
}

export function compilePql(expr: TypedExpr, params: ParamBag): string {
  switch (expr.type) {
    case 'all':
      return 'true';
    case 'and':
    case 'or':
      return `(${expr.items.map((e) => compilePql(e, params)).join(expr.type === 'and' ? ' AND ' : ' OR ')})`;
    case 'cond':
      return compileCondition(expr, params);
  }
}

function negate(positive: string): string {
  return `NOT ifNull(${positive}, 0)`;
}

function compileCondition(cond: TypedCondition, params: ParamBag): string {
  const { col, op, operands } = cond;
  const c = quoteIdent(col.column);
  const isArray = col.kind === 'string[]';
  switch (op) {
    case 'ex':
      return isArray ? `notEmpty(${c})` : `${c} IS NOT NULL`;
    case 'nex':
      return isArray ? `empty(${c})` : `${c} IS NULL`;
    case 'ne':
      return negate(matchOne(col, operands[0]!, params));
    case 'nwi':
      return negate(matchOne(col, operands[0]!, params, 'wi'));
    case 'wi':
      return matchOne(col, operands[0]!, params, 'wi');
    case 'eq':
      return matchOne(col, operands[0]!, params);
    case 'in':
      return matchAny(col, operands, params);
    default:
      return compare(col, CMP[op]!, operands[0]!, params);
  }
}

/** SQL that is true when the field equals (or, with `wi`, matches) one operand. */
function matchOne(col: ColumnDef, o: Operand, params: ParamBag, mode: 'eq' | 'wi' = 'eq'): string {
  const c = quoteIdent(col.column);
  if (o.t === 'null') return col.kind === 'string[]' ? `empty(${c})` : `${c} IS NULL`;
  if (mode === 'wi' || o.t === 'pattern') {
    const pattern = params.add(wildcardToLike(o.t === 'pattern' ? o.v : String((o as { v: unknown }).v)), 'String');
    if (col.kind === 'string[]') return `arrayExists(x -> x LIKE ${pattern}, ${c})`;
    if (col.kind === 'int') return `toString(${c}) LIKE ${pattern}`;
    return `${c} LIKE ${pattern}`;
  }
  if (col.kind === 'string[]') return `has(${c}, ${params.add((o as { v: string }).v, 'String')})`;
  if (o.t === 'cidr') {
    return `${addressSql(col)} BETWEEN ${params.add(formatIpv6(o.lo), 'IPv6')} AND ${params.add(formatIpv6(o.hi), 'IPv6')}`;
  }
  return compare(col, '=', o, params);
}

function compare(col: ColumnDef, sqlOp: string, o: Operand, params: ParamBag): string {
  const c = quoteIdent(col.column);
  switch (o.t) {
    case 'string':
      return `${c} ${sqlOp} ${params.add(o.v, 'String')}`;
    case 'number':
      return `${c} ${sqlOp} ${numberParam(o.v, params)}`;
    case 'bool':
      return `${c} ${sqlOp} ${params.add(o.v, 'Bool')}`;
    case 'time':
      return `${c} ${sqlOp} fromUnixTimestamp64Milli(${params.add(o.v, 'Int64')}, 'UTC')`;
    case 'ip':
      return compareAddress(col, sqlOp, o.v, params);
    default:
      throw new Error(`cannot compare ${col.path} with a ${o.t}`);
  }
}

/**
 * An address test. Orderings stay within the value's family (`gt 10.0.0.1` never matches an IPv6
 * address, nor `lt 2001:db8::` an IPv4 one), as evaluate.ts; equality is across forms.
 */
function compareAddress(col: ColumnDef, sqlOp: string, v: bigint, params: ParamBag): string {
  const addr = addressSql(col);
  const test = `${addr} ${sqlOp} ${params.add(formatIpv6(v), 'IPv6')}`;
  if (sqlOp === '=') return test;
  const v4 = `${addr} BETWEEN ${params.add(formatIpv6(IPV4_RANGE.lo), 'IPv6')} AND ${params.add(formatIpv6(IPV4_RANGE.hi), 'IPv6')}`;
  return isIpv4(v) ? `(${test} AND ${v4})` : `(${test} AND NOT ${v4})`;
}

function numberParam(v: number, params: ParamBag): string {
  return Number.isSafeInteger(v) ? params.add(v, 'Int64') : params.add(v, 'Float64');
}

/**
 * `in [...]`: plain values of one type go into a single array parameter (one placeholder however
 * long the list), and so do CIDR blocks and wildcards (below); null is an alternative of its own.
 */
function matchAny(col: ColumnDef, operands: Operand[], params: ParamBag): string {
  if (operands.length === 0) return 'false';
  const c = quoteIdent(col.column);
  const parts: string[] = [];
  const strings = operands.flatMap((o) => (o.t === 'string' ? [o.v] : []));
  const numbers = operands.flatMap((o) => (o.t === 'number' ? [o.v] : []));
  const bools = operands.flatMap((o) => (o.t === 'bool' ? [o.v] : []));
  const times = operands.flatMap((o) => (o.t === 'time' ? [o.v] : []));
  const ips = operands.flatMap((o) => (o.t === 'ip' ? [formatIpv6(o.v)] : []));
  if (strings.length) {
    const p = params.add(strings, 'Array(String)');
    parts.push(col.kind === 'string[]' ? `hasAny(${c}, ${p})` : `${c} IN ${p}`);
  }
  if (numbers.length) {
    // Exact integers and the rest in separate arrays, so no integer is rounded through Float64.
    const ints = numbers.filter((n) => Number.isSafeInteger(n));
    const others = numbers.filter((n) => !Number.isSafeInteger(n));
    if (ints.length) parts.push(`has(${params.add(ints, 'Array(Int64)')}, ${c})`);
    if (others.length) parts.push(`has(${params.add(others, 'Array(Float64)')}, ${c})`);
  }
  if (bools.length) parts.push(`${c} IN ${params.add(bools, 'Array(Bool)')}`);
  if (times.length) parts.push(`toUnixTimestamp64Milli(${c}) IN ${params.add(times, 'Array(Int64)')}`);
  if (ips.length) parts.push(`${addressSql(col)} IN ${params.add(ips, 'Array(IPv6)')}`);
  if (operands.some((o) => o.t === 'null')) parts.push(matchOne(col, { t: 'null' }, params));
  const blocks = operands.flatMap((o) => (o.t === 'cidr' ? [o] : []));
  if (blocks.length === 1) parts.push(matchOne(col, blocks[0]!, params));
  if (blocks.length > 1) parts.push(inAnyBlock(col, blocks, params));
  const patterns = operands.flatMap((o) => (o.t === 'pattern' ? [o] : []));
  if (patterns.length === 1) parts.push(matchOne(col, patterns[0]!, params));
  if (patterns.length > 1) parts.push(likeAny(col, patterns, params));
  return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
}

/**
 * Several CIDR blocks of one list, tested by one lambda over array parameters: an alternative
 * each made the statement grow with the list, past ClickHouse's limit on its size (TOO_BIG_AST)
 * with some 1,600 blocks in a sentence well under its 16 KiB. Wildcards likewise (likeAny).
 */
function inAnyBlock(col: ColumnDef, blocks: readonly Extract<Operand, { t: 'cidr' }>[], params: ParamBag): string {
  const lo = params.add(
    blocks.map((b) => formatIpv6(b.lo)),
    'Array(IPv6)',
  );
  const hi = params.add(
    blocks.map((b) => formatIpv6(b.hi)),
    'Array(IPv6)',
  );
  return `arrayExists((lo, hi) -> ${addressSql(col)} BETWEEN lo AND hi, ${lo}, ${hi})`;
}

/** Several wildcards of one list: only address fields take them there (check.ts), matched on the text. */
function likeAny(col: ColumnDef, patterns: readonly Extract<Operand, { t: 'pattern' }>[], params: ParamBag): string {
  const likes = params.add(
    patterns.map((p) => wildcardToLike(p.v)),
    'Array(String)',
  );
  return `arrayExists(p -> ${quoteIdent(col.column)} LIKE p, ${likes})`;
}
