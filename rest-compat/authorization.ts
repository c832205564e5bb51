import { type DocumentNode, type GraphQLSchema, Kind } from 'graphql';
import { type Action, type ActionRule, actions, publicDoors } from '../src/auth/actions.js';
import type { Access, Route, ServedRoute } from './route.js';

/** `Type.field` of every root field: the doors GraphQL opens. */
export function rootFields(schema: GraphQLSchema): string[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
    type ? Object.keys(type.getFields()).map((name) => `${type.name}.${name}`) : [],
  );
}

/** The root fields an operation document selects (a REST row runs exactly these). */
export function operationFields(schema: GraphQLSchema, document: DocumentNode): string[] {
  const roots = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() };
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return [];
    const root = roots[definition.operation]!.name;
    return definition.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [`${root}.${s.name.value}`] : []));
  });
}

const entries = Object.entries(actions) as [Action, ActionRule][];

/** The actions whose resolvers guard a field (empty: unguarded, unless public). */
export const actionsOf = (field: string): Action[] => entries.filter(([, rule]) => rule.fields.includes(field)).map(([name]) => name);

/** What a row's `access` column must say for an action: its scope, or any token. */
export const accessOf = (action: Action): Access => actions[action].scope ?? 'token';

/**
 * The accesses a REST row may state: `public` when every field it runs is public, else the
 * access of one of the actions its fields assert (the first a caller meets decides the 403).
 */
export function allowedAccess(schema: GraphQLSchema, route: Route | ServedRoute): Access[] {
  if (!('operation' in route)) return publicDoors.includes(`${route.method} ${route.path}`) ? ['public'] : [];
  const fields = operationFields(schema, route.operation);
  if (fields.every((f) => publicDoors.includes(f))) return ['public'];
  return [...new Set(fields.flatMap(actionsOf).map(accessOf))];
}

const code = (s: string) => `\`${s}\``;

/** docs/authorization.md: who may do what, printed from the catalogue, the schema and the route table. */
export function authorizationDoc(schema: GraphQLSchema, routes: readonly (Route | ServedRoute)[]): string {
  const pathsOf = (fields: readonly string[]) => {
    const methodsByPath = new Map<string, string[]>();
    for (const r of routes) {
      if ('operation' in r && operationFields(schema, r.operation).some((f) => fields.includes(f)))
        methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    }
    return [...methodsByPath].map(([path, methods]) => code(`${methods.join(', ')} ${path}`));
  };
  const rows = entries.map(([name, rule]) => {
    const doors = [...pathsOf(rule.fields), ...(rule.doors ?? []).map(code)];
    return `| ${code(name)} | ${rule.scope ? code(rule.scope) : 'any valid token'} | ${rule.role ? code(rule.role) : 'API clients only'} | ${rule.tenant} | ${rule.description} | ${rule.fields.map(code).join(', ') || '—'} | ${doors.join(', ') || '—'} |`;
  });
  const publicFields = publicDoors.filter((d) => !d.includes(' '));
  const publicPaths = [...pathsOf(publicFields), ...publicDoors.filter((d) => d.includes(' ')).map(code)];
  return [
    '# Who may do what',
    '',
    '<!-- Printed by `npx tsx tools/print-authorization.ts` from src/auth/actions.ts; test/contract/authorization.test.ts fails when it drifts. -->',
    '',
    'Every door of the server is guarded by one action of `src/auth/actions.ts`, which names the token',
    'scope it needs and how far it reaches over tenants, or is public. Resolvers and services name',
    "their action (`session.assert('nodes.read')`); an action on a tenant the request names uses",
    "`await session.assertTenant('networks.write', customerId)`. A token without the scope gets 403",
    "`authorization_error` naming `required_scope`; a named tenant outside the caller's tree gets 404",
    '`not_found`, as if it did not exist (the scope is checked first, input validation where the',
    "contract puts it). Tenant reach: `own` is the token's own tenant; `tree` is the caller's tenant",
    'and its children, anything outside behaving as missing.',
    '',
    'A person signed in to the console (docs/users.md) is held to the same actions by role instead of',
    'scope: `viewer` < `analyst` < `admin`, each role granted every action whose least role it reaches',
    '(403 `authorization_error` with `insufficient_role` and `required_role` otherwise); the tenant',
    "reach is the same, from the person's tenant.",
    '',
    '| Action | Needs (API client) | Least role (person) | Tenant reach | What | GraphQL fields | REST paths and other doors |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '## Public',
    '',
    'No token needed (a public door may still refuse what it is given, such as bad client credentials):',
    '',
    `- GraphQL: ${publicFields.map(code).join(', ')}`,
    `- REST: ${publicPaths.join(', ')}`,
    '',
    'test/contract/authorization.test.ts fails when a root field or a REST row is neither guarded by',
    "an action nor listed public, when a row's `access` is not its action's scope, and when an action",
    'is asserted nowhere in the code. test/contract/authorization-enforced.test.ts calls every root',
    'query and mutation of a scoped action with a token holding no scope and expects the 403 naming',
    "the action's scope; rest-compat/route-auth.test.ts does the same for every REST path.",
    '',
  ].join('\n');
}
