import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accessOf, actionsOf, allowedAccess, authorizationDoc, operationFields, rootFields } from '../../rest-compat/authorization.js';
import { routes, servedRoutes } from '../../rest-compat/routes.js';
import { type Action, type ActionRule, actions, publicDoors } from '../../src/auth/actions.js';
import type { Session } from '../../src/auth/session.js';
import { schema } from '../../src/graphql/schema.js';
import { CONTROL_PATH } from '../../src/modules/control/hub.js';
import { INGEST_PATH } from '../../src/modules/ingest/ingest.http.js';

const everyRoute = [...routes, ...servedRoutes];
const catalogue = Object.keys(actions) as Action[];

/** The action names written as string literals in the code outside the catalogue and the tests. */
function actionsNamedInCode(): Set<string> {
  const root = new URL('../../', import.meta.url).pathname;
  const files = ['src', 'rest-compat'].flatMap((dir) => (readdirSync(join(root, dir), { recursive: true }) as string[]).map((f) => join(root, dir, f)));
  const named = new Set<string>();
  for (const file of files.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('auth/actions.ts'))) {
    for (const [, name] of readFileSync(file, 'utf8').matchAll(/'([a-z]+\.[a-z]+)'/g)) named.add(name!);
  }
  return named;
}

describe('the authorization catalogue', () => {
  it('guards every root field of the schema by an action, or lists it public (never both)', () => {
    const unguarded = rootFields(schema).filter((f) => actionsOf(f).length === 0 && !publicDoors.includes(f));
    // A new field names its action in src/auth/actions.ts (and asserts it), or is added to publicDoors.
    expect(unguarded).toEqual([]);
    expect(rootFields(schema).filter((f) => actionsOf(f).length > 0 && publicDoors.includes(f))).toEqual([]);
  });

  it('names only fields the schema has', () => {
    const exists = (coordinate: string) => {
      const [type, field] = coordinate.split('.');
      const found = schema.getType(type!);
      return Boolean(found && 'getFields' in found && (found.getFields() as Record<string, unknown>)[field!]);
    };
    const named = [...catalogue.flatMap((a) => actions[a].fields), ...publicDoors.filter((d) => !d.includes(' '))];
    expect(named.filter((f) => !exists(f))).toEqual([]);
  });

  it('guards every REST row: its access is the scope of an action its operation asserts, or public with public fields', () => {
    const wrong = everyRoute
      .filter((r) => !allowedAccess(schema, r).includes(r.access))
      .map((r) => `${r.method} ${r.path}: says ${r.access}, its fields allow ${allowedAccess(schema, r).join(' or ') || 'nothing (unguarded)'}`);
    expect(wrong).toEqual([]);
    const unguarded = routes.flatMap((r) => operationFields(schema, r.operation)).filter((f) => actionsOf(f).length === 0 && !publicDoors.includes(f));
    expect(unguarded).toEqual([]);
  });

  it('lists as public only REST paths the route table serves', () => {
    const served = new Set(servedRoutes.map((r) => `${r.method} ${r.path}`));
    expect(publicDoors.filter((d) => d.includes(' ') && !served.has(d))).toEqual([]);
  });

  it('names the doors outside GraphQL by the paths the server answers', () => {
    expect(catalogue.flatMap((a) => (actions[a] as ActionRule).doors ?? [])).toEqual([`POST ${INGEST_PATH}`, `GET ${CONTROL_PATH} (WebSocket)`]);
  });

  it('has every action asserted somewhere in the code', () => {
    const named = actionsNamedInCode();
    expect(catalogue.filter((a) => !named.has(a))).toEqual([]);
  });

  it('knows no access a row may not state', () => {
    expect(new Set(catalogue.map(accessOf))).toEqual(new Set(everyRoute.map((r) => r.access).filter((a) => a !== 'public')));
  });

  it('is docs/authorization.md', () => {
    const doc = readFileSync(new URL('../../docs/authorization.md', import.meta.url), 'utf8');
    // On failure: npx tsx tools/print-authorization.ts
    expect(doc).toBe(authorizationDoc(schema, everyRoute));
  });
});

/** Never called: an action the catalogue does not have is a type error. */
export function unknownActionsDoNotCompile(session: Session) {
  // @ts-expect-error 'nodes.reed' is not an action
  session.assert('nodes.reed');
  // @ts-expect-error a deployment action does not reach another tenant
  return session.assertTenant('deployments.create', 'cus_x');
}
