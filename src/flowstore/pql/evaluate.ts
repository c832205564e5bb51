/**
 * Reference evaluator: decides whether a flow record (as JSON, wire.md 5.4) matches a checked PQL
 * tree, in plain JavaScript. It states the query semantics a second time, independently of SQL;
 * the property tests run both on the same data and require the same answer.
 */
import type { ColumnDef } from '../columns.js';
import { isIpv4, parseIp } from '../ip.js';
import type { Operand, TypedCondition, TypedExpr } from './check.js';

type Flow = Record<string, unknown>;

function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The field's value in the record: null when missing; an array for array fields. */
export function fieldValue(flow: Flow, col: ColumnDef): unknown {
  if (col.path.startsWith('path.sensor.')) {
    // Derived: the sensor field of every path element that has a non-empty one.
    const key = col.path.slice('path.sensor.'.length);
    const path = flow.path;
    if (!Array.isArray(path)) return [];
    return path.map((p) => getPath(p, `sensor.${key}`)).filter((v): v is string => typeof v === 'string' && v !== '');
  }
  const v = getPath(flow, col.path);
  if (col.kind === 'string[]') return Array.isArray(v) ? v : [];
  return v === undefined ? null : v;
}

export function wildcardToRegExp(pattern: string): RegExp {
  let src = '';
  for (const ch of pattern) {
    if (ch === '*') src += '[\\s\\S]*';
    else if (ch === '?') src += '[\\s\\S]';
    else src += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${src}$`, 'u');
}

/** Does one (non-array) value match one operand under equality (or wildcard for patterns)? */
function equals(col: ColumnDef, v: unknown, o: Operand): boolean {
  if (o.t === 'null') return v === null;
  if (v === null) return false;
  switch (o.t) {
    case 'pattern':
      return wildcardToRegExp(o.v).test(String(v));
    case 'string':
      return v === o.v;
    case 'number':
    case 'time':
    case 'bool':
      return v === o.v;
    case 'ip': {
      const a = parseIp(String(v));
      return a !== null && a === o.v;
    }
    case 'cidr': {
      const a = parseIp(String(v));
      return a !== null && a >= o.lo && a <= o.hi;
    }
  }
  void col;
  return false;
}

function compare(v: unknown, o: Operand): number | null {
  if (v === null) return null;
  if (o.t === 'ip') {
    const a = parseIp(String(v));
    // Orderings stay within the value's family (compile.ts compareAddress).
    if (a === null || isIpv4(a) !== isIpv4(o.v)) return null;
    return a < o.v ? -1 : a > o.v ? 1 : 0;
  }
  if (o.t === 'number' || o.t === 'time') {
    const n = v as number;
    return n < o.v ? -1 : n > o.v ? 1 : 0;
  }
  throw new Error(`cannot order ${o.t}`);
}

function positive(cond: TypedCondition, flow: Flow, op: 'eq' | 'wi' | 'in'): boolean {
  const v = fieldValue(flow, cond.col);
  const operands = op === 'in' ? cond.operands : [cond.operands[0]!];
  const asPattern = (o: Operand): Operand => (op === 'wi' && o.t !== 'pattern' ? { t: 'pattern', v: String((o as { v: unknown }).v) } : o);
  if (cond.col.kind === 'string[]') {
    const arr = v as unknown[];
    return operands.some((o) => (o.t === 'null' ? arr.length === 0 : arr.some((e) => equals(cond.col, e, asPattern(o)))));
  }
  return operands.some((o) => equals(cond.col, v, asPattern(o)));
}

function evalCondition(cond: TypedCondition, flow: Flow): boolean {
  switch (cond.op) {
    case 'ex':
    case 'nex': {
      const v = fieldValue(flow, cond.col);
      const present = Array.isArray(v) ? v.length > 0 : v !== null;
      return cond.op === 'ex' ? present : !present;
    }
    case 'eq':
    case 'in':
      return positive(cond, flow, cond.op);
    case 'wi':
      return positive(cond, flow, 'wi');
    case 'ne':
      return !positive(cond, flow, 'eq');
    case 'nwi':
      return !positive(cond, flow, 'wi');
    default: {
      const c = compare(fieldValue(flow, cond.col), cond.operands[0]!);
      if (c === null) return false;
      return cond.op === 'gt' ? c > 0 : cond.op === 'lt' ? c < 0 : cond.op === 'gte' ? c >= 0 : c <= 0;
    }
  }
}

export function evaluatePql(expr: TypedExpr, flow: Flow): boolean {
  switch (expr.type) {
    case 'all':
      return true;
    case 'and':
      return expr.items.every((e) => evaluatePql(e, flow));
    case 'or':
      return expr.items.some((e) => evaluatePql(e, flow));
    case 'cond':
      return evalCondition(expr, flow);
  }
}
