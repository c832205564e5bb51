/**
 * Prints a PQL tree back to text that parses to the same tree: parentheses only where precedence
 * needs them, values bare when that is unambiguous and double-quoted (with escapes) otherwise.
 */
import { keywordOf, type Expr, type Value } from './ast.js';

/** Bare text that can never run into a neighbouring token or change meaning. */
const SAFE_BARE = /^[A-Za-z0-9@._:*?/+\-]+$/;

function quote(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r') + '"';
}

export function printValue(v: Value): string {
  if (keywordOf(v)) return v.text;
  const looksLikeKeyword = v.text === 'None' || v.text === 'True' || v.text === 'False';
  // `and`/`or` alone are safe as a value but are quoted anyway to keep the text readable.
  if (SAFE_BARE.test(v.text) && !looksLikeKeyword && v.text !== 'and' && v.text !== 'or') return v.text;
  return quote(v.text);
}

export function printPql(expr: Expr): string {
  switch (expr.type) {
    case 'all':
      return '()';
    case 'cond': {
      const head = `${expr.field} ${expr.op}`;
      if (expr.op === 'in') return `${head} [${(expr.values ?? []).map(printValue).join(', ')}]`;
      if (expr.value) return `${head} ${printValue(expr.value)}`;
      return head;
    }
    case 'and':
      // `or` inside `and` needs parentheses; nested `and` is associative and prints flat.
      return expr.items.map((e) => (e.type === 'or' ? `(${printPql(e)})` : printPql(e))).join(' and ');
    case 'or':
      // `and` binds tighter and nested `or` is associative: nothing inside `or` needs parentheses.
      return expr.items.map(printPql).join(' or ');
  }
}

/** The tree without positions, for comparing two parses of equivalent text. */
export function stripPositions(expr: Expr): unknown {
  switch (expr.type) {
    case 'all':
      return { type: 'all' };
    case 'cond': {
      const val = (v: Value) => ({ text: v.text, keyword: keywordOf(v) ?? null });
      return {
        type: 'cond',
        field: expr.field,
        op: expr.op,
        ...(expr.value ? { value: val(expr.value) } : {}),
        ...(expr.values ? { values: expr.values.map(val) } : {}),
      };
    }
    default:
      return { type: expr.type, items: expr.items.map(stripPositions) };
  }
}
