import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PqlSemanticError, PqlSyntaxError } from '../errors.js';
import { checkPql } from './check.js';
import { readSentence } from './index.js';
import { parsePql } from './parser.js';
import { printPql, stripPositions } from './printer.js';
import type { Expr, Op, Value } from './ast.js';

const parse = (s: string) => stripPositions(parsePql(s));
const cond = (field: string, op: Op, value?: string | string[]) => ({
  type: 'cond',
  field,
  op,
  ...(typeof value === 'string' ? { value: { text: value, keyword: ['None', 'True', 'False'].includes(value) ? value : null } } : {}),
  ...(Array.isArray(value) ? { values: value.map((text) => ({ text, keyword: null })) } : {}),
});

describe('PQL parser', () => {
  it('parses the operators and values the SDK emits', () => {
    expect(parse('dst.port eq 443')).toEqual(cond('dst.port', 'eq', '443'));
    expect(parse('app_name eq Google Drive')).toEqual(cond('app_name', 'eq', 'Google Drive'));
    expect(parse('x in [80, 443, 8080]')).toEqual(cond('x', 'in', ['80', '443', '8080']));
    expect(parse('x in []')).toEqual(cond('x', 'in', []));
    expect(parse('x ex')).toEqual(cond('x', 'ex'));
    expect(parse('meta.flipped eq True')).toEqual(cond('meta.flipped', 'eq', 'True'));
    expect(parse('app_name wi *server*')).toEqual(cond('app_name', 'wi', '*server*'));
    expect(parse('x eq say "hi"')).toEqual(cond('x', 'eq', 'say "hi"'));
    expect(parse('mpls.1_label gte 16')).toEqual(cond('mpls.1_label', 'gte', '16'));
  });

  it('binds and tighter than or, and reads juxtaposition as and', () => {
    const [a, b, c] = [cond('a', 'eq', '443'), cond('a', 'eq', '80'), cond('b', 'gt', '0')];
    expect(parse('a eq 443 or a eq 80 and b gt 0')).toEqual({ type: 'or', items: [a, { type: 'and', items: [b, c] }] });
    expect(parse('(a eq 443 or a eq 80) and b gt 0')).toEqual({ type: 'and', items: [{ type: 'or', items: [a, b] }, c] });
    expect(parse('a eq 1 (b eq 2)')).toEqual({ type: 'and', items: [cond('a', 'eq', '1'), cond('b', 'eq', '2')] });
    expect(parse('a ex b nex')).toEqual({ type: 'and', items: [cond('a', 'ex'), cond('b', 'nex')] });
    expect(parse('()')).toEqual({ type: 'all' });
    expect(parse('  ')).toEqual({ type: 'all' });
    expect(parse('a eq 1 and ()')).toEqual({ type: 'and', items: [cond('a', 'eq', '1'), { type: 'all' }] });
  });

  it('ends a bare value only where a term follows', () => {
    expect(parse('app_name eq Tom and Jerry')).toEqual(cond('app_name', 'eq', 'Tom and Jerry'));
    expect(parse('app_name eq Teams (web) and x ex')).toEqual({ type: 'and', items: [cond('app_name', 'eq', 'Teams (web)'), cond('x', 'ex')] });
    expect(parse('(a eq b c)')).toEqual(cond('a', 'eq', 'b c'));
    expect(parse('a eq \'x and y eq 1\' or b eq "q\\"d"')).toEqual({ type: 'or', items: [cond('a', 'eq', 'x and y eq 1'), cond('b', 'eq', 'q"d')] });
    expect(parse("a eq 'None'")).toEqual({ ...cond('a', 'eq'), value: { text: 'None', keyword: null } });
  });

  it('reports syntax errors with the offending token and its offset', () => {
    const cases: [string, string, number][] = [
      ['dst.port eqq 443', 'eqq', 9],
      ['src.ip eq 1.2.3.4 and dst.port eqq 53', 'eqq', 31],
      ['a eq', '<end>', 4],
      ['(a eq 1', '<end>', 7],
      ['a eq 1)', ')', 6],
      ['and a eq 1', 'and', 0],
      ['a in [1, 2', '<end>', 10],
      ['a in 1', '1', 5],
      ["a eq 'open", "'open", 5],
    ];
    for (const [sentence, token, position] of cases) {
      const err = (() => {
        try {
          parsePql(sentence);
        } catch (e) {
          return e;
        }
      })();
      expect(err, sentence).toBeInstanceOf(PqlSyntaxError);
      expect(err, sentence).toMatchObject({ message: `PQL parse failure near '${token}'`, position, code: 'validation_error' });
    }
  });

  it('checks fields and value types against the registry, with positions', () => {
    const check = (s: string) => () => checkPql(parsePql(s));
    expect(check('nope eq 1')).toThrow(PqlSemanticError);
    expect(check('dst.port eq 1 and nope eq 1')).toThrow(expect.objectContaining({ position: 18, reason: 'unknown_field' }));
    expect(check('dst.port eq http')).toThrow(expect.objectContaining({ position: 12, reason: 'invalid_value' }));
    expect(check('app_name gt b')).toThrow(expect.objectContaining({ position: 9, reason: 'unsupported_operator' }));
    expect(check('src.ip eq banana')).toThrow(expect.objectContaining({ reason: 'invalid_value' }));
    expect(check('meta.flipped eq maybe')).toThrow(expect.objectContaining({ reason: 'invalid_value' }));
    expect(check('path eq x')).toThrow(expect.objectContaining({ reason: 'unknown_field' }));
    // Numbers and times the engines could not bind exactly are refused, not failed on.
    expect(check('dst.port gt 1e20')).toThrow(
      expect.objectContaining({ position: 12, reason: 'invalid_value', message: expect.stringMatching(/within ±9007199254740991/) }),
    );
    expect(check('bytes lt 1e400')).toThrow(expect.objectContaining({ reason: 'invalid_value' }));
    expect(check('dst.port in [1, -99999999999999999999]')).toThrow(expect.objectContaining({ position: 16, reason: 'invalid_value' }));
    expect(check('@timestamp gt 10000000000000000')).toThrow(
      expect.objectContaining({ reason: 'invalid_value', message: expect.stringMatching(/years 0001 and 9999/) }),
    );
    expect(() => checkPql(parsePql('bytes lt 9007199254740991 and dst.port gt 1e3 and @timestamp gt -62135596800000'))).not.toThrow();
    expect(() => checkPql(parsePql('protocol eq TCP and bytes gt 10 and packets lt 5 and hostname wi web*'))).not.toThrow();
  });

  it('remembers a checked sentence by its text, and refuses a bad one every time', () => {
    const checked = readSentence('dst.port eq 443 and app_name eq DNS');
    expect(readSentence('dst.port eq 443 and app_name eq DNS')).toBe(checked);
    expect(readSentence('dst.port eq 443 and app_name eq HTTP')).not.toBe(checked);
    for (let i = 0; i < 2; i++) expect(() => readSentence('nope eq 1')).toThrow(PqlSemanticError);
  });
});

// ---- Property tests ----------------------------------------------------------------------

/** What the SDK's Q builder can emit (wire.md 6.4): flat chains, no quoting, Python literals. */
type Term = { kind: 'cond'; field: string; op: Op; value?: string; values?: string[] } | { kind: 'group'; chain: Chain | null };
type Chain = { first: Term; rest: { conj: 'and' | 'or' | null; term: Term }[] };

const FIELDS = ['dst.port', 'src.ip', '@timestamp', 'app_name', 'meta.flipped', 'mpls.1_label', 'protocol', 'stats.volume.bytes.total'];
const WORD = fc.stringMatching(/^[A-Za-z0-9._:/*?@+-][A-Za-z0-9._:/*?@+'"-]{0,8}$/).filter((w) => !['and', 'or', 'None', 'True', 'False'].includes(w));

/** Python's repr of a float: exponent form below 1e-4 and from 1e16, two-digit exponents. */
export function pythonFloat(x: number): string {
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [m, e] = x.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    return `${m}e${sign}${e.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

const builderValue = fc.oneof(
  fc.array(WORD, { minLength: 1, maxLength: 3 }).map((ws) => ws.join(' ')),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(pythonFloat),
  fc.constantFrom('True', 'False', 'None'),
);
const listItem = fc.oneof(WORD, fc.integer().map(String), fc.constantFrom('True', 'None'));

const termArb: fc.Arbitrary<Term> = fc.letrec<{ term: Term; chain: Chain }>((tie) => ({
  term: fc.oneof(
    { maxDepth: 3 },
    fc.record({
      kind: fc.constant('cond' as const),
      field: fc.constantFrom(...FIELDS),
      op: fc.constantFrom<Op>('eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'wi', 'nwi'),
      value: builderValue,
    }),
    fc.record({
      kind: fc.constant('cond' as const),
      field: fc.constantFrom(...FIELDS),
      op: fc.constant<Op>('in'),
      values: fc.array(listItem, { maxLength: 4 }),
    }),
    fc.record({ kind: fc.constant('cond' as const), field: fc.constantFrom(...FIELDS), op: fc.constantFrom<Op>('ex', 'nex') }),
    fc.record({ kind: fc.constant('group' as const), chain: fc.option(tie('chain'), { nil: null }) }),
  ),
  chain: fc.record({
    first: tie('term'),
    rest: fc.array(
      fc.oneof(
        fc.record({ conj: fc.constantFrom<'and' | 'or'>('and', 'or'), term: tie('term') }),
        // Juxtaposition happens only when a group is added without a conjunction.
        fc.record({ conj: fc.constant(null), term: fc.record({ kind: fc.constant('group' as const), chain: fc.option(tie('chain'), { nil: null }) }) }),
      ),
      { maxLength: 3 },
    ),
  }),
})).term;

function emitTerm(t: Term): string {
  if (t.kind === 'group') return `(${t.chain ? emitChain(t.chain) : ''})`;
  if (t.op === 'in') return `${t.field} in [${t.values!.join(', ')}]`;
  return t.value === undefined ? `${t.field} ${t.op}` : `${t.field} ${t.op} ${t.value}`;
}
function emitChain(c: Chain): string {
  return [emitTerm(c.first), ...c.rest.map((r) => (r.conj ? `${r.conj} ${emitTerm(r.term)}` : emitTerm(r.term)))].join(' ');
}

/** The tree the server must build: `and` before `or`, same-kind nodes flattened. */
function expectedTerm(t: Term): unknown {
  if (t.kind === 'group') return t.chain ? expectedChain(t.chain) : { type: 'all' };
  const kw = (text: string) => ({ text, keyword: ['None', 'True', 'False'].includes(text) ? text : null });
  return {
    type: 'cond',
    field: t.field,
    op: t.op,
    ...(t.value !== undefined ? { value: kw(t.value) } : {}),
    ...(t.values ? { values: t.values.map(kw) } : {}),
  };
}
function combine(type: 'and' | 'or', items: unknown[]): unknown {
  const flat = items.flatMap((i) => ((i as { type: string }).type === type ? (i as { items: unknown[] }).items : [i]));
  return flat.length === 1 ? flat[0] : { type, items: flat };
}
function expectedChain(c: Chain): unknown {
  const ors: unknown[][] = [[expectedTerm(c.first)]];
  for (const r of c.rest) {
    if (r.conj === 'or') ors.push([expectedTerm(r.term)]);
    else ors[ors.length - 1]!.push(expectedTerm(r.term));
  }
  return combine(
    'or',
    ors.map((ands) => combine('and', ands)),
  );
}

/** Arbitrary trees with arbitrary value text (quotes, spaces, keywords, unicode) for the printer. */
const anyValue: fc.Arbitrary<Value> = fc
  .tuple(fc.oneof(fc.string(), fc.constantFrom('and', 'or', 'None', 'True', ' x ', '(', ')', ',', ']', "'", '"', '\\', 'a and b eq c')), fc.boolean())
  .map(([text, quoted]) => ({ text, quoted, pos: 0 }));
const anyTree: fc.Arbitrary<Expr> = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { maxDepth: 3 },
    fc.record({
      type: fc.constant('cond' as const),
      field: fc.constantFrom(...FIELDS),
      op: fc.constantFrom<Op>('eq', 'wi'),
      value: anyValue,
      pos: fc.constant(0),
      opPos: fc.constant(0),
    }),
    fc.record({
      type: fc.constant('cond' as const),
      field: fc.constantFrom(...FIELDS),
      op: fc.constant<Op>('in'),
      values: fc.array(anyValue, { maxLength: 3 }),
      pos: fc.constant(0),
      opPos: fc.constant(0),
    }),
    fc.constant<Expr>({ type: 'all', pos: 0 }),
    fc.record({ type: fc.constantFrom<'and' | 'or'>('and', 'or'), items: fc.array(tie('e'), { minLength: 2, maxLength: 3 }), pos: fc.constant(0) }),
  ),
})).e;

/** The tree as the parser would build it: positions gone, nested same-kind nodes flattened. */
function canonical(e: Expr): unknown {
  const s = stripPositions(e) as { type: string; items?: unknown[] };
  const flatten = (n: { type: string; items?: unknown[] }): unknown => {
    if (!n.items) return n;
    const items = n.items.map((i) => flatten(i as typeof n)).flatMap((i) => ((i as typeof n).type === n.type ? (i as typeof n).items! : [i]));
    return { type: n.type, items };
  };
  return flatten(s);
}

describe('PQL properties', () => {
  it('parses every sentence the SDK builder can emit into the intended tree', () => {
    fc.assert(
      fc.property(termArb, (t) => {
        const sentence = emitTerm(t);
        expect(parse(sentence)).toEqual(expectedTerm(t));
      }),
      { numRuns: 400 },
    );
  });

  it('printing a parsed sentence and parsing it again gives the same tree', () => {
    fc.assert(
      fc.property(termArb, (t) => {
        const first = parsePql(emitTerm(t));
        const printed = printPql(first);
        expect(parse(printed)).toEqual(stripPositions(first));
        expect(printPql(parsePql(printed))).toBe(printed);
      }),
      { numRuns: 400 },
    );
  });

  it('the printer quotes any value text so that it reads back unchanged', () => {
    fc.assert(
      fc.property(anyTree, (tree) => {
        const printed = printPql(tree);
        expect(parse(printed)).toEqual(canonical(tree));
        expect(printPql(parsePql(printed))).toBe(printed);
      }),
      { numRuns: 400 },
    );
  });

  it('positions point into the sentence', () => {
    fc.assert(
      fc.property(termArb, (t) => {
        const sentence = emitTerm(t);
        const visit = (e: Expr): void => {
          if (e.type === 'cond') {
            expect(sentence.startsWith(e.field, e.pos)).toBe(true);
            expect(sentence.startsWith(e.op, e.opPos)).toBe(true);
            for (const v of e.values ?? (e.value ? [e.value] : [])) expect(sentence.startsWith(v.text, v.pos)).toBe(true);
          } else if (e.type !== 'all') e.items.forEach(visit);
        };
        visit(parsePql(sentence));
      }),
      { numRuns: 200 },
    );
  });
});
