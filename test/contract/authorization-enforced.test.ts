import type { GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsOf } from '../../rest-compat/authorization.js';
import { actions } from '../../src/auth/actions.js';
import { schema } from '../../src/graphql/schema.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { callOf } from '../kit/field-calls.js';
import { graphql } from '../kit/http.js';
import { allScopes, seedCaller, seedTenant } from '../kit/seed.js';

/**
 * The catalogue says which action guards each field (authorization.test.ts); this calls every
 * root query and mutation whose actions all need a scope with a token holding none, and checks the
 * 403 names one of those scopes: the resolvers assert what the catalogue says.
 */
describe('every scoped root field refuses a token without its scope', () => {
  let t: TestApp;
  let scopeless: string;

  beforeAll(async () => {
    t = await startTestApp();
    scopeless = (await seedCaller(t.app, (await seedTenant(t.app, { msp: true })).id, [])).token;
  });
  afterAll(() => t?.stop());

  const roots: ['query' | 'mutation', GraphQLObjectType][] = [
    ['query', schema.getQueryType()!],
    ['mutation', schema.getMutationType()!],
  ];
  const scoped = roots.flatMap(([operation, type]) =>
    Object.values(type.getFields()).flatMap((field) => {
      const scopes = actionsOf(`${type.name}.${field.name}`).map((a) => actions[a].scope);
      return scopes.length && !scopes.includes(null) ? [{ operation, field, scopes, name: `${type.name}.${field.name}` }] : [];
    }),
  );

  it('has fields to call', () => {
    expect(scoped.length).toBeGreaterThan(40);
    expect(new Set(scoped.flatMap((s) => s.scopes))).toEqual(new Set(allScopes));
  });

  it.each(scoped.map((s) => [s.name, s] as const))('%s', async (_name, { operation, field, scopes }) => {
    const { query, variables } = callOf(operation, field);
    const res = await graphql(t.url, query, variables, scopeless);
    const error = res.errors?.[0];
    expect(error?.extensions?.code, `${query}: ${JSON.stringify(res)}`).toBe('authorization_error');
    expect(scopes).toContain(error?.extensions?.details?.required_scope);
  });
});
