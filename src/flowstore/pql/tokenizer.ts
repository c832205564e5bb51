/**
 * PQL tokenizer. PQL values are unquoted and may contain spaces (`app_name eq Google Drive`), so
 * where a token ends depends on what the parser expects; the tokenizer therefore has three entry
 * points, one per lexical context:
 *
 * - structure(): `(`, `)`, `[`, `]`, `,`, words (fields, operators, `and`/`or`), end of input;
 * - value(): the value after a binary operator;
 * - listItem(): one item inside `in [...]`.
 *
 * Value rules (docs/flowstore.md "PQL"):
 * - A quoted value ('...' or "...", backslash escapes) ends at its closing quote.
 * - A bare value runs to the end of input, to a `)` that closes an enclosing group, to
 *   whitespace + `and`/`or` followed by something shaped like a term (`(` or `field word`), or to
 *   whitespace + a group that starts with a condition (`field op`). So `Tom and Jerry` and
 *   `Google (beta)` stay values, while `x eq 1 and y eqq 2` is an error near `eqq`. Trailing
 *   whitespace is not part of the value.
 * - A list item runs to the next `,` or `]`, whitespace trimmed.
 */
import { PqlSyntaxError } from '../errors.js';
import { ALL_OPS } from './ast.js';

export type TokenType = 'lparen' | 'rparen' | 'lbracket' | 'rbracket' | 'comma' | 'word' | 'value' | 'eof';

export interface Token {
  type: TokenType;
  /** Word text, or the value's text (unescaped when quoted). */
  text: string;
  pos: number;
  /** End offset (exclusive) in the sentence. */
  end: number;
  quoted?: boolean;
}

const PUNCT: Record<string, TokenType> = { '(': 'lparen', ')': 'rparen', '[': 'lbracket', ']': 'rbracket', ',': 'comma' };
const WORD_STOP = /[\s()[\],]/;
const OPS_PATTERN = ALL_OPS.join('|');
/** A condition starts here: a field, whitespace, an operator keyword standing alone. */
const CONDITION_START = new RegExp(`[^\\s()\\[\\],'"]+\\s+(?:${OPS_PATTERN})(?=\\s|[()\\[]|$)`, 'y');
/**
 * After `and`/`or`: something shaped like `field word`. Looser than CONDITION_START on purpose,
 * so that a mistyped operator (`and dst.port eqq 53`) is reported rather than read as value text.
 */
const FIELD_THEN_WORD = /[^\s()\[\],'"]+\s+[^\s]/y;
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f' };

export class Tokenizer {
  private pos = 0;

  constructor(readonly input: string) {}

  private skipSpace(): void {
    while (this.pos < this.input.length && /\s/.test(this.input[this.pos]!)) this.pos++;
  }

  /** The next structural token without consuming it. */
  peek(): Token {
    const saved = this.pos;
    const t = this.structure();
    this.pos = saved;
    return t;
  }

  structure(): Token {
    this.skipSpace();
    const start = this.pos;
    if (start >= this.input.length) return { type: 'eof', text: '', pos: start, end: start };
    const ch = this.input[start]!;
    const punct = PUNCT[ch];
    if (punct) {
      this.pos++;
      return { type: punct, text: ch, pos: start, end: this.pos };
    }
    while (this.pos < this.input.length && !WORD_STOP.test(this.input[this.pos]!)) this.pos++;
    return { type: 'word', text: this.input.slice(start, this.pos), pos: start, end: this.pos };
  }

  /** The value after a binary operator (the operator's trailing whitespace is skipped first). */
  value(): Token {
    this.skipSpace();
    const start = this.pos;
    if (start >= this.input.length) throw new PqlSyntaxError('<end>', start);
    const ch = this.input[start]!;
    if (ch === '"' || ch === "'") return this.quoted(ch);
    if (ch === ')') throw new PqlSyntaxError(')', start);
    let depth = 0;
    let end = start;
    let i = start;
    while (i < this.input.length) {
      const c = this.input[i]!;
      if (c === ')') {
        if (depth === 0) break;
        depth--;
      } else if (c === '(') {
        depth++;
      } else if (/\s/.test(c) && depth === 0 && !/\s/.test(this.input[i - 1]!) && this.termFollows(i)) {
        // Checked once per whitespace run: termFollows looks past the whole run.
        break;
      }
      i++;
      if (!/\s/.test(c)) end = i;
    }
    this.pos = end;
    return { type: 'value', text: this.input.slice(start, end), pos: start, end, quoted: false };
  }

  /** One `in [...]` item; the caller consumes the `,` or `]` after it. */
  listItem(): Token {
    this.skipSpace();
    const start = this.pos;
    if (start >= this.input.length) throw new PqlSyntaxError('<end>', start);
    const ch = this.input[start]!;
    if (ch === '"' || ch === "'") return this.quoted(ch);
    if (ch === ',' || ch === ']') throw new PqlSyntaxError(ch, start);
    let end = start;
    let i = start;
    while (i < this.input.length && this.input[i] !== ',' && this.input[i] !== ']') {
      if (!/\s/.test(this.input[i]!)) end = i + 1;
      i++;
    }
    this.pos = end;
    return { type: 'value', text: this.input.slice(start, end), pos: start, end, quoted: false };
  }

  private quoted(quote: string): Token {
    const start = this.pos;
    let i = start + 1;
    let text = '';
    while (i < this.input.length) {
      const c = this.input[i]!;
      if (c === '\\') {
        const next = this.input[i + 1];
        if (next === undefined) break;
        text += ESCAPES[next] ?? next;
        i += 2;
        continue;
      }
      if (c === quote) {
        this.pos = i + 1;
        return { type: 'value', text, pos: start, end: this.pos, quoted: true };
      }
      text += c;
      i++;
    }
    // An unterminated string: point at its opening quote.
    throw new PqlSyntaxError(this.input.slice(start, start + 20), start);
  }

  /**
   * At whitespace position `i` inside a bare value: does a new term follow, joined by
   * `and`/`or` or juxtaposed as a group? Only then does the value end here.
   */
  private termFollows(i: number): boolean {
    let j = i;
    while (j < this.input.length && /\s/.test(this.input[j]!)) j++;
    if (j >= this.input.length) return false;
    const conj = /^(and|or)(?=[\s(]|$)/.exec(this.input.slice(j, j + 4));
    if (conj) {
      let k = j + conj[1]!.length;
      while (k < this.input.length && /\s/.test(this.input[k]!)) k++;
      FIELD_THEN_WORD.lastIndex = k;
      return this.startsTerm(k) || FIELD_THEN_WORD.test(this.input);
    }
    return this.input[j] === '(' && this.startsTerm(j);
  }

  /**
   * A term starts at `k`: a group whose content starts a term (or is empty), or a condition.
   * Opening parentheses are stepped over in a loop: thousands of them fit in a sentence.
   */
  private startsTerm(k: number): boolean {
    while (this.input[k] === '(') {
      k++;
      while (k < this.input.length && /\s/.test(this.input[k]!)) k++;
      if (this.input[k] === ')') return true;
    }
    CONDITION_START.lastIndex = k;
    return CONDITION_START.test(this.input);
  }
}
