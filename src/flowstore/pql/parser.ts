/**
 * Recursive-descent PQL parser (grammar in docs/flowstore.md):
 *
 *   sentence = [ or ] EOF
 *   or       = and { "or" and }
 *   and      = unary { [ "and" ] unary }        juxtaposed terms are an implicit "and"
 *   unary    = "(" [ or ] ")" | condition       "()" matches everything
 *   condition= FIELD ( BINOP VALUE | "in" "[" [ ITEM { "," ITEM } ] "]" | "ex" | "nex" )
 *
 * `and` binds tighter than `or`. Fields are not checked here (check.ts does that against the
 * column registry), so the parser can be tested on syntax alone.
 */
import { PqlSyntaxError } from '../errors.js';
import { BINARY_OPS, UNARY_OPS, type BinaryOp, type Condition, type Expr, type Value } from './ast.js';
import { Tokenizer, type Token } from './tokenizer.js';

const FIELD_RE = /^[@A-Za-z0-9_][@A-Za-z0-9_.-]*$/;
const isBinary = (w: string): w is BinaryOp => (BINARY_OPS as readonly string[]).includes(w);
const isUnary = (w: string): w is 'ex' | 'nex' => (UNARY_OPS as readonly string[]).includes(w);
/** Deeper nesting than this is refused rather than risking the stack. */
const MAX_DEPTH = 64;

function fail(t: Token): never {
  throw new PqlSyntaxError(t.type === 'eof' ? '<end>' : t.text, t.pos);
}

class Parser {
  private depth = 0;
  constructor(private readonly lex: Tokenizer) {}

  sentence(): Expr {
    const first = this.lex.peek();
    if (first.type === 'eof') return { type: 'all', pos: 0 };
    const expr = this.or();
    const end = this.lex.structure();
    if (end.type !== 'eof') fail(end);
    return expr;
  }

  private or(): Expr {
    const items = [this.and()];
    for (;;) {
      const t = this.lex.peek();
      if (t.type === 'word' && t.text === 'or') {
        this.lex.structure();
        items.push(this.and());
      } else break;
    }
    return combine('or', items);
  }

  private and(): Expr {
    const items = [this.unary()];
    for (;;) {
      const t = this.lex.peek();
      if (t.type === 'word' && t.text === 'and') {
        this.lex.structure();
        items.push(this.unary());
      } else if (t.type === 'lparen' || (t.type === 'word' && t.text !== 'or')) {
        items.push(this.unary()); // juxtaposition: `a eq 1 (b eq 2)`
      } else break;
    }
    return combine('and', items);
  }

  private unary(): Expr {
    const t = this.lex.structure();
    if (t.type === 'lparen') {
      if (++this.depth > MAX_DEPTH) fail(t);
      const inner = this.lex.peek();
      let expr: Expr;
      if (inner.type === 'rparen') expr = { type: 'all', pos: t.pos };
      else expr = this.or();
      const close = this.lex.structure();
      if (close.type !== 'rparen') fail(close);
      this.depth--;
      return expr;
    }
    if (t.type !== 'word' || t.text === 'and' || t.text === 'or' || !FIELD_RE.test(t.text)) fail(t);
    return this.condition(t);
  }

  private condition(field: Token): Condition {
    const op = this.lex.structure();
    if (op.type !== 'word') fail(op);
    const base = { type: 'cond' as const, field: field.text, pos: field.pos, opPos: op.pos };
    if (isUnary(op.text)) return { ...base, op: op.text };
    if (isBinary(op.text)) return { ...base, op: op.text, value: toValue(this.lex.value()) };
    if (op.text === 'in') return { ...base, op: 'in', values: this.list() };
    fail(op);
  }

  private list(): Value[] {
    const open = this.lex.structure();
    if (open.type !== 'lbracket') fail(open);
    const values: Value[] = [];
    if (this.lex.peek().type === 'rbracket') {
      this.lex.structure();
      return values;
    }
    for (;;) {
      values.push(toValue(this.lex.listItem()));
      const sep = this.lex.structure();
      if (sep.type === 'rbracket') return values;
      if (sep.type !== 'comma') fail(sep);
    }
  }
}

function toValue(t: Token): Value {
  return { text: t.text, quoted: t.quoted ?? false, pos: t.pos };
}

/** n-ary node with nested nodes of the same kind flattened; a single item stands alone. */
function combine(type: 'and' | 'or', items: Expr[]): Expr {
  if (items.length === 1) return items[0]!;
  const flat = items.flatMap((e) => (e.type === type ? e.items : [e]));
  return { type, items: flat, pos: flat[0]!.pos };
}

/** Parses a PQL sentence; an empty or blank sentence matches everything. Throws PqlSyntaxError. */
export function parsePql(sentence: string): Expr {
  return new Parser(new Tokenizer(sentence)).sentence();
}
