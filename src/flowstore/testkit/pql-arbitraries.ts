/**
 * fast-check generators of PQL trees over real registry fields, with values that hit the sample
 * data (testkit/sample-flows.ts) often enough for filters to select something.
 */
import fc from 'fast-check';
import type { Expr, Op, Value } from '../pql/ast.js';
import { POOLS } from './sample-flows.js';

const v = (text: string): Value => ({ text, quoted: false, pos: 0 });
const NONE = v('None');

type Kind = 'string' | 'int' | 'float' | 'bool' | 'ip' | 'timestamp' | 'string[]';

interface FieldSpec {
  field: string;
  kind: Kind;
  values: fc.Arbitrary<Value>;
  patterns?: fc.Arbitrary<Value>;
}

const OPS: Record<Kind, Op[]> = {
  string: ['eq', 'ne', 'in', 'wi', 'nwi', 'ex', 'nex'],
  'string[]': ['eq', 'ne', 'in', 'wi', 'nwi', 'ex', 'nex'],
  int: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'wi', 'nwi', 'ex', 'nex'],
  float: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'ex', 'nex'],
  bool: ['eq', 'ne', 'in', 'ex', 'nex'],
  timestamp: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'ex', 'nex'],
  ip: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'wi', 'nwi', 'ex', 'nex'],
};

/** Turns a known value into a wildcard pattern by replacing some characters with `*` / `?`. */
const patternOf = (texts: readonly string[]) =>
  fc.tuple(fc.constantFrom(...texts), fc.nat(), fc.constantFrom('*', '?', '')).map(([t, n, w]) => {
    if (!t.length) return v('*');
    const i = n % t.length;
    return v(w === '*' ? `${t.slice(0, i)}*` : w === '?' ? `${t.slice(0, i)}?${t.slice(i + 1)}` : `*${t.slice(i)}`);
  });

const texts = (xs: readonly string[], extra: string[] = []) => fc.constantFrom(...xs, ...extra).map(v);
const ints = (xs: readonly number[], min: number, max: number) => fc.oneof(fc.constantFrom(...xs), fc.integer({ min, max })).map((n) => v(String(n)));

export function fieldSpecs(endMs: number): FieldSpec[] {
  const validIps = POOLS.ip.filter((ip) => ip !== 'not-an-ip');
  const ipValues = fc.oneof(
    texts(validIps, ['10.0.0.2', '::1']),
    texts(['10.0.0.0/8', '10.0.0.0/30', '2001:db8::/32', '::ffff:10.0.0.0/104', '0.0.0.0/0', '192.168.1.0/24']),
    texts(['10.*', '*::*', '192.168.1.1?', '*DB8*']),
  );
  const tsValues = fc.oneof(
    fc.integer({ min: -5, max: 60 }).map((k) => v(String(endMs - k * 1000))),
    fc.integer({ min: 0, max: 60 }).map((k) => v(new Date(endMs - k * 1000).toISOString())),
  );
  const floats = fc.oneof(fc.constantFrom(...POOLS.bytes), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })).map((n) => v(String(n)));
  return [
    { field: 'app_name', kind: 'string', values: texts(POOLS.app, ['zzz', '']), patterns: patternOf(POOLS.app) },
    { field: 'protocol', kind: 'string', values: texts(POOLS.proto), patterns: patternOf(POOLS.proto) },
    { field: 'src.geo.country_iso_code', kind: 'string', values: texts(POOLS.country), patterns: patternOf(POOLS.country) },
    { field: 'dst.port', kind: 'int', values: ints(POOLS.port, -1, 70_000), patterns: texts(['4*', '*3', '8?8?', '*']) },
    { field: 'src.geo.asn', kind: 'int', values: ints(POOLS.asn, 0, 2 ** 32), patterns: texts(['1*', '*5']) },
    { field: 'stats.connection_count', kind: 'int', values: ints(POOLS.count, -10, 2 ** 41) },
    { field: 'mpls.1_label', kind: 'int', values: ints([16, 17], 0, 20) },
    { field: 'bytes', kind: 'float', values: floats },
    { field: 'beacon.confidence', kind: 'float', values: fc.constantFrom(...POOLS.confidence, 0.5).map((n) => v(String(n))) },
    { field: 'meta.flipped', kind: 'bool', values: texts(['True', 'False', 'true', '0']) },
    { field: 'suricata.flow.alerted', kind: 'bool', values: texts(['True', 'False']) },
    { field: 'src.ip', kind: 'ip', values: ipValues, patterns: patternOf(POOLS.ip) },
    { field: 'dst.ip', kind: 'ip', values: ipValues, patterns: patternOf(POOLS.ip) },
    { field: 'threat.ip', kind: 'ip', values: ipValues, patterns: patternOf(POOLS.ip) },
    { field: '@timestamp', kind: 'timestamp', values: tsValues },
    { field: 'meta.tags', kind: 'string[]', values: texts(['a', 'b', 'c d', 'scan', 'zzz']), patterns: patternOf(['a', 'scan', 'c d']) },
    { field: 'tcp.flags', kind: 'string[]', values: texts(['SYN', 'ACK', 'FIN']), patterns: patternOf(['SYN', 'ACK']) },
    { field: 'hostname', kind: 'string[]', values: texts(POOLS.host), patterns: patternOf(POOLS.host) },
  ];
}

const ORDERING: Op[] = ['gt', 'lt', 'gte', 'lte'];

function conditionArb(spec: FieldSpec): fc.Arbitrary<Expr> {
  const ops = OPS[spec.kind].filter((op) => (op === 'wi' || op === 'nwi' ? spec.patterns !== undefined : true));
  return fc.constantFrom(...ops).chain((op): fc.Arbitrary<Expr> => {
    const base = { type: 'cond' as const, field: spec.field, op, pos: 0, opPos: 0 };
    if (op === 'ex' || op === 'nex') return fc.constant(base);
    if (op === 'wi' || op === 'nwi') return spec.patterns!.map((value) => ({ ...base, value }));
    if (op === 'in') {
      return fc
        .array(fc.oneof({ weight: 6, arbitrary: spec.values }, { weight: 1, arbitrary: fc.constant(NONE) }), { maxLength: 4 })
        .map((values) => ({ ...base, values }));
    }
    let values = spec.values;
    // Ordering on IPs takes addresses only (CIDR and wildcards have no order).
    if (spec.kind === 'ip' && ORDERING.includes(op))
      values = texts(
        POOLS.ip.filter((ip) => ip !== 'not-an-ip'),
        ['10.0.0.0'],
      );
    const withNone = ORDERING.includes(op) ? values : fc.oneof({ weight: 8, arbitrary: values }, { weight: 1, arbitrary: fc.constant(NONE) });
    return withNone.map((value) => ({ ...base, value }));
  });
}

/** Random PQL trees (depth ≤ 3) over the sample-data fields. */
export function typedExprArb(endMs: number): fc.Arbitrary<Expr> {
  const conds = fc.oneof(...fieldSpecs(endMs).map(conditionArb));
  const { tree } = fc.letrec<{ tree: Expr }>((tie) => ({
    tree: fc.oneof(
      { maxDepth: 3, withCrossShrink: true },
      { weight: 5, arbitrary: conds },
      { weight: 1, arbitrary: fc.constant<Expr>({ type: 'all', pos: 0 }) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom<'and' | 'or'>('and', 'or'), fc.array(tie('tree'), { minLength: 2, maxLength: 3 }))
          .map(([type, items]): Expr => ({ type, items, pos: 0 })),
      },
    ),
  }));
  return tree;
}
