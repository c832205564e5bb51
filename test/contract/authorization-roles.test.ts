import type { GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsOf } from '../../rest-compat/authorization.js';
import { type Role, actions, roles } from '../../src/auth/actions.js';
import { schema } from '../../src/graphql/schema.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { callOf } from '../kit/field-calls.js';
import { asPerson, seedPerson, signedIn } from '../kit/people.js';
import { seedTenant } from '../kit/seed.js';

const rank = (role: Role | null) => (role === null ? roles.length : roles.indexOf(role));

/**
 * authorization-enforced.test.ts holds API clients to the catalogue's scopes; this holds people to
 * its roles: every root query and mutation, called by a signed-in viewer, analyst and admin, is
 * refused (403 `insufficient_role`) exactly to the roles below the least role of its actions,
 * and never for that reason to the others. Actions without a role (a collector's) refuse every person.
 */
describe('every guarded root field refuses the roles below its least role, and only those', () => {
  let t: TestApp;
  const cookies = {} as Record<Role, string>;

  beforeAll(async () => {
    t = await startTestApp();
    const msp = await seedTenant(t.app, { msp: true });
    for (const role of roles) cookies[role] = await signedIn(t.url, await seedPerson(t.app, msp.id, role));
  });
  afterAll(() => t?.stop());

  const roots: ['query' | 'mutation', GraphQLObjectType][] = [
    ['query', schema.getQueryType()!],
    ['mutation', schema.getMutationType()!],
  ];
  const guarded = roots.flatMap(([operation, type]) =>
    Object.values(type.getFields()).flatMap((field) => {
      const guards = actionsOf(`${type.name}.${field.name}`);
      if (guards.length === 0) return [];
      const least = guards.map((a) => actions[a].role as Role | null).sort((a, b) => rank(a) - rank(b))[0]!;
      return [{ operation, field, least, name: `${type.name}.${field.name}` }];
    }),
  );

  it('has fields of every least role, and some for API clients only', () => {
    expect(new Set(guarded.map((g) => g.least))).toEqual(new Set([...roles, null]));
  });

  it.each(guarded.map((g) => [g.name, g.least ?? 'API clients only', g] as const))('%s (%s)', async (_name, _least, { operation, field, least }) => {
    const { query, variables } = callOf(operation, field);
    for (const role of roles) {
      const res = await asPerson(t.url, cookies[role], query, variables);
      const reason = res.errors?.[0]?.extensions?.details?.reason;
      if (rank(role) < rank(least)) expect(reason, `${role}: ${query}: ${JSON.stringify(res.errors)}`).toBe('insufficient_role');
      else expect(['insufficient_role', 'clients_only'], `${role}: ${query}: ${JSON.stringify(res.errors)}`).not.toContain(reason);
    }
  });
});
