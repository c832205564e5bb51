/**
 * PQL syntax tree. Every node keeps the character offset where it starts in the sentence so that
 * errors found after parsing (unknown field, wrong value type) can still point at the text.
 *
 * The tree is normalized while parsing: `and`/`or` are n-ary and flattened, parentheses leave no
 * node of their own (precedence is in the shape), and an empty group `()` is `all`.
 */

export const BINARY_OPS = ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'wi', 'nwi'] as const;
export const UNARY_OPS = ['ex', 'nex'] as const;
export type BinaryOp = (typeof BINARY_OPS)[number];
export type UnaryOp = (typeof UNARY_OPS)[number];
export type Op = BinaryOp | UnaryOp | 'in';
export const ALL_OPS: readonly Op[] = [...BINARY_OPS, ...UNARY_OPS, 'in'];

export interface Value {
  /** The value's text; for a quoted value, with quotes removed and escapes resolved. */
  text: string;
  /** Quoted values are always strings: a quoted `None` is the text "None", not null. */
  quoted: boolean;
  pos: number;
}

export interface Condition {
  type: 'cond';
  /** The field as written (may be an alias such as `protocol`). */
  field: string;
  op: Op;
  /** For binary operators. */
  value?: Value;
  /** For `in`. */
  values?: Value[];
  pos: number;
  opPos: number;
}

export interface BoolExpr {
  type: 'and' | 'or';
  items: Expr[];
  pos: number;
}

/** `()`: matches every record. */
export interface MatchAll {
  type: 'all';
  pos: number;
}

export type Expr = Condition | BoolExpr | MatchAll;

/** Python-style keywords the SDK renders for None / True / False (bare only). */
export function keywordOf(v: Value): 'None' | 'True' | 'False' | undefined {
  if (v.quoted) return undefined;
  return v.text === 'None' || v.text === 'True' || v.text === 'False' ? v.text : undefined;
}
