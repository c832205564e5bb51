/**
 * Checks a parsed PQL tree against the column registry and reads every value as the field's kind.
 * The result (a typed tree) is what both the SQL compiler and the reference evaluator consume, so
 * the two cannot disagree on what a value means.
 *
 * Value reading, per field kind:
 * - bare `None` is null on any field (`eq None` = missing, `ne None` = present);
 * - string, string[]: the text as is;
 * - int, float: a decimal number (`443`, `-5`, `0.5`, `1e-05`, `1e+20`);
 * - bool: True / False (also true/false/1/0);
 * - timestamp: epoch milliseconds or an ISO 8601 date-time;
 * - ip: an address (IPv4 or IPv6), a CIDR block, or a wildcard pattern with `*` / `?`.
 */
import { columnForPath, type ColumnDef, type ValueKind } from '../columns.js';
import { PqlSemanticError } from '../errors.js';
import { parseCidr, parseIp } from '../ip.js';
import { isRepresentableMs, parseIsoDate } from '../time.js';
import { keywordOf, type Expr, type Op, type Value } from './ast.js';

export type Operand =
  | { t: 'null' }
  | { t: 'string'; v: string }
  | { t: 'number'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'time'; v: number }
  | { t: 'ip'; v: bigint; text: string }
  | { t: 'cidr'; lo: bigint; hi: bigint }
  | { t: 'pattern'; v: string };

export interface TypedCondition {
  type: 'cond';
  col: ColumnDef;
  op: Op;
  /** One operand for binary operators, the list for `in`, none for ex/nex. */
  operands: Operand[];
  pos: number;
}

export type TypedExpr = TypedCondition | { type: 'and' | 'or'; items: TypedExpr[] } | { type: 'all' };

const OPS_BY_KIND: Record<ValueKind, readonly Op[]> = {
  string: ['eq', 'ne', 'in', 'wi', 'nwi', 'ex', 'nex'],
  'string[]': ['eq', 'ne', 'in', 'wi', 'nwi', 'ex', 'nex'],
  int: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'wi', 'nwi', 'ex', 'nex'],
  float: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'ex', 'nex'],
  bool: ['eq', 'ne', 'in', 'ex', 'nex'],
  timestamp: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'ex', 'nex'],
  ip: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'wi', 'nwi', 'ex', 'nex'],
  'float[]': [],
  json: [],
};

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const ORDERING_OPS: readonly Op[] = ['gt', 'lt', 'gte', 'lte'];

function invalid(v: Value, message: string): never {
  throw new PqlSemanticError(message, v.pos, 'invalid_value');
}

function readOperand(col: ColumnDef, field: string, op: Op, v: Value): Operand {
  if (op === 'wi' || op === 'nwi') return { t: 'pattern', v: v.text };
  if (keywordOf(v) === 'None') {
    if (ORDERING_OPS.includes(op)) invalid(v, `None cannot be compared with ${op} (field '${field}')`);
    return { t: 'null' };
  }
  const text = v.text;
  switch (col.kind) {
    case 'string':
    case 'string[]':
      return { t: 'string', v: text };
    case 'int':
    case 'float': {
      if (!NUMBER_RE.test(text)) invalid(v, `field '${field}' expects a number, got '${text}'`);
      const n = Number(text);
      // Beyond ±2^53 a number is no longer exact, and the engines refuse to bind it as such.
      if (!(Math.abs(n) <= Number.MAX_SAFE_INTEGER)) invalid(v, `field '${field}' expects a number within ±${Number.MAX_SAFE_INTEGER}, got '${text}'`);
      return { t: 'number', v: n };
    }
    case 'bool': {
      if (/^(True|true|1)$/.test(text)) return { t: 'bool', v: true };
      if (/^(False|false|0)$/.test(text)) return { t: 'bool', v: false };
      return invalid(v, `field '${field}' expects True or False, got '${text}'`);
    }
    case 'timestamp': {
      if (/^-?\d+$/.test(text)) {
        const ms = Number(text);
        if (!isRepresentableMs(ms)) invalid(v, `field '${field}' expects epoch milliseconds between years 0001 and 9999, got '${text}'`);
        return { t: 'time', v: ms };
      }
      const ms = parseIsoDate(text);
      if (ms === null) invalid(v, `field '${field}' expects epoch milliseconds or an ISO 8601 date-time, got '${text}'`);
      return { t: 'time', v: ms };
    }
    case 'ip': {
      const addr = parseIp(text);
      if (addr !== null) return { t: 'ip', v: addr, text };
      if (ORDERING_OPS.includes(op)) invalid(v, `field '${field}' compares with ${op} only against an IP address, got '${text}'`);
      const range = parseCidr(text);
      if (range) return { t: 'cidr', ...range };
      if (/[*?]/.test(text)) return { t: 'pattern', v: text };
      return invalid(v, `field '${field}' expects an IP address, a CIDR block or a wildcard pattern, got '${text}'`);
    }
    default:
      return invalid(v, `field '${field}' cannot be filtered`);
  }
}

/** Resolves fields and reads values; throws PqlSemanticError with the offending position. */
export function checkPql(expr: Expr): TypedExpr {
  switch (expr.type) {
    case 'all':
      return { type: 'all' };
    case 'and':
    case 'or':
      return { type: expr.type, items: expr.items.map(checkPql) };
    case 'cond': {
      const col = columnForPath(expr.field);
      if (!col || !col.filterable) {
        throw new PqlSemanticError(col ? `field '${expr.field}' cannot be filtered` : `unknown field '${expr.field}'`, expr.pos, 'unknown_field');
      }
      if (!OPS_BY_KIND[col.kind].includes(expr.op)) {
        throw new PqlSemanticError(`operator '${expr.op}' is not supported for ${col.kind} field '${expr.field}'`, expr.opPos, 'unsupported_operator');
      }
      const values = expr.op === 'in' ? (expr.values ?? []) : expr.value ? [expr.value] : [];
      return { type: 'cond', col, op: expr.op, operands: values.map((v) => readOperand(col, expr.field, expr.op, v)), pos: expr.pos };
    }
  }
}
