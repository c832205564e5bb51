/**
 * Every root field of the GraphQL schema (what the console can call, REST or not), fed hostile
 * arguments that still pass GraphQL's type checks, so they reach the resolvers: one argument at a
 * time set to extreme values of its type over a plausible baseline (the caller's own tenant id
 * for strings). Whatever the input, no answer is an internal error.
 */
import {
  type GraphQLArgument,
  type GraphQLInputType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLField,
  isLeafType,
  getNamedType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedCaller, seedTree } from '../../test/kit/seed.js';
import { schema } from './schema.js';

const STRINGS = ['', ' ', 'x'.repeat(5_000), '😀', '\ud800', '\u0000', "'; DROP TABLE tenants; --", '../../etc/passwd', '%00', 'null'];
const SCALARS: Record<string, unknown[]> = {
  String: STRINGS,
  ID: STRINGS,
  Int: [0, -1, 2 ** 31 - 1, -(2 ** 31)],
  Float: [0, -1, 1.5, 2 ** 53 + 2, 1e308, -1e308],
  Boolean: [true, false],
  DateTime: ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2025-13-45', 'x', 0],
  JSON: [null, 0, -1e308, '', 'x'.repeat(5_000), [], [null], {}, { a: { b: [{}] } }, { now: true }, { relative: { value: 1e12, unit: 'days' } }],
};

type Baseline = (type: GraphQLInputType) => unknown;

/** A plausible value of `type`: strings are the caller's tenant id, so lookups reach real rows. */
function baselineFor(tenantId: string): Baseline {
  const base: Baseline = (type) => {
    if (type instanceof GraphQLNonNull) return base(type.ofType);
    if (type instanceof GraphQLList) return [base(type.ofType)];
    if (type instanceof GraphQLEnumType) return type.getValues()[0]!.value;
    if (type instanceof GraphQLInputObjectType) {
      return Object.fromEntries(
        Object.values(type.getFields())
          .filter((f) => f.type instanceof GraphQLNonNull)
          .map((f) => [f.name, base(f.type)]),
      );
    }
    const name = (type as GraphQLScalarType).name;
    return { String: tenantId, ID: tenantId, Int: 1, Float: 1, Boolean: true, DateTime: new Date().toISOString(), JSON: {} }[name] ?? null;
  };
  return base;
}

/** Hostile values of `type`, each still of that type (lists and input objects hostile inside). */
function hostile(type: GraphQLInputType, base: Baseline, depth = 0): unknown[] {
  if (type instanceof GraphQLNonNull) return hostile(type.ofType, base, depth).filter((v) => v !== null);
  if (type instanceof GraphQLList)
    return [
      [],
      ...hostile(type.ofType, base, depth)
        .slice(0, 4)
        .map((v) => [v]),
      Array.from({ length: 300 }, () => base(type.ofType)),
    ];
  if (type instanceof GraphQLEnumType) return type.getValues().map((v) => v.value);
  if (type instanceof GraphQLInputObjectType) {
    if (depth > 1) return [base(type)];
    const plain = base(type) as Record<string, unknown>;
    return Object.values(type.getFields()).flatMap((f) =>
      hostile(f.type, base, depth + 1)
        .slice(0, 6)
        .map((v) => ({ ...plain, [f.name]: v })),
    );
  }
  return [null, ...(SCALARS[(type as GraphQLScalarType).name] ?? [])];
}

/** The document calling `field` with every argument as a variable. */
function documentFor(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a: GraphQLArgument) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const selection = isLeafType(getNamedType(field.type)) ? '' : ' { __typename }';
  return `${kind}${vars ? `(${vars})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

const roots = (['query', 'mutation'] as const).flatMap((kind) => {
  const type = kind === 'query' ? schema.getQueryType() : schema.getMutationType();
  return Object.values(type?.getFields() ?? {})
    .filter((f) => f.args.length > 0)
    .map((field) => [`${kind} ${field.name}`, kind, field] as const);
});

describe('hostile arguments on every GraphQL root field', () => {
  let t: TestApp;
  let msp: string;

  beforeAll(async () => {
    t = await startTestApp();
    msp = (await seedTree(t.app)).msp.id;
  });
  afterAll(() => t.stop());

  it.each(roots)('%s: never an internal error', async (label, kind, field) => {
    // A caller of its own: a mutation fed the baseline may delete or revoke what it acts on.
    const { token } = await seedCaller(t.app, msp);
    const base = baselineFor(msp);
    const query = documentFor(kind, field);
    // Only required arguments take the baseline: an optional one set to it may stop the request
    // before the hostile argument is read (`after` is then no cursor).
    const plain = Object.fromEntries(field.args.filter((a) => a.type instanceof GraphQLNonNull).map((a) => [a.name, base(a.type)]));
    for (const arg of field.args) {
      for (const value of hostile(arg.type, base)) {
        const variables = { ...plain, [arg.name]: value };
        const res = await call(t.url, 'POST', '/graphql', { token, body: { query, variables } });
        const problem = `${label} ${arg.name}=${JSON.stringify(value)?.slice(0, 120)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
        expect(res.status, problem).toBeLessThan(500);
        expect(res.body.errors?.filter((e: any) => e.extensions?.code === 'internal_error') ?? [], problem).toEqual([]);
      }
    }
  });
});
