/**
 * Every documented path, fed hostile input: each body field and query parameter a route reads
 * (found by watching its `variables` read them), set one at a time to values of every wrong
 * shape on top of a plausible request, then random mixtures of them. Whatever the input, the
 * answer is a 4xx in the documented shape or a success, never a 5xx. And each field whose
 * operation variable has a JSON type (a string, a number, a list…), given a value of any other
 * JSON type, is a 400 `invalid_request` naming the field as the request spelt it.
 */
import fc from 'fast-check';
import {
  type GraphQLInputType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  Kind,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
} from 'graphql';
import { schema } from '../src/graphql/schema.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../test/kit/app.js';
import { call } from '../test/kit/http.js';
import { seedTree } from '../test/kit/seed.js';
import { readInputs } from './openapi/request.js';
import type { Route, ServedRoute } from './route.js';
import { routes, servedRoutes } from './routes.js';

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 31,
  -(2 ** 63),
  2 ** 53 + 2,
  1e308,
  -1e308,
  '',
  ' ',
  'x'.repeat(5_000),
  '\u0000',
  '\ud800',
  '😀',
  '../../etc/passwd',
  "'; DROP TABLE flows; --",
  'NaN',
  '1e400',
  '2025-13-45T99:99:99Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  // Names every JavaScript object has: a lookup table must not find them.
  'constructor',
  '__proto__',
  'toString',
  ['constructor', '__proto__', 'hasOwnProperty'],
  { by: 'toString', direction: 'ASC' },
  { relative: { value: 1, unit: 'constructor' } },
  [{ field: 'valueOf', order: 'constructor' }],
  [],
  [null],
  ['x'],
  [1, 'a', {}],
  Array.from({ length: 200 }, (_, i) => `id-${i}`),
  {},
  { now: true },
  { relative: { value: 1e12, unit: 'days' } },
  { absolute: { date: 42 } },
  { a: { b: { c: [{}] } } },
];
const HOSTILE_QUERY = [
  '',
  'x',
  '-1',
  '1.5',
  '1e400',
  '99999999999999999999',
  'NaN',
  '\u0000',
  '😀',
  'x'.repeat(3_000),
  'true',
  '2025-13-45',
  '0000-01-01T00:00:00Z',
  'a,b,,c',
];
const HOSTILE_SEGMENTS = ['x', '..', '%00', encodeURIComponent('😀'), 'x'.repeat(400), '%E0%A4%A'];
/** Valid JSON nested 40,000 deep: in every field a route reads, the body still fits in 1 MiB. */
const nested = `${'['.repeat(40_000)}${']'.repeat(40_000)}`;
const RAW_BODIES = ['{"a":', '[]', '"x"', '42', 'null', '['.repeat(100_000), '{"a":'.repeat(50_000), '\u0000'];

/** The body fields and query parameters a route's `variables` reads (the search bodies' keys as a whole). */
function fieldsOf(route: Route | ServedRoute): { body: string[]; query: string[] } {
  if (!('variables' in route)) return { body: [], query: [] };
  const read = readInputs(route);
  return { body: read.wholeBody ? Object.keys(route.bodySchema?.properties ?? {}) : read.body, query: read.query };
}

/** A 4xx in one of the documented shapes: flat `{error, message?}` or the search's nested envelope. */
function expectDocumentedError(label: string, res: { status: number; body: any }): void {
  expect(res.status, `${label} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
  if (res.status < 400 || typeof res.body !== 'object' || res.body === null) return;
  const nested = typeof res.body.error === 'object' && res.body.error !== null;
  if (nested) expect(res.body.error, label).toMatchObject({ code: res.status, message: expect.any(String), type: expect.any(String) });
  else expect(res.body, label).toMatchObject({ error: expect.any(String) });
  // A REST caller never wrote a GraphQL variable: no message may name one.
  expect(JSON.stringify(res.body), label).not.toMatch(/Variable \\?"\$/);
}

/** A value of each JSON type; `integer` and `number` stand for GraphQL's Int and Float. */
const OF_KIND = { string: 'x', integer: 7, number: 1.5, boolean: true, array: ['x'], object: { unknown_field: 1 } } as const;
type JsonKind = keyof typeof OF_KIND;
const fits = (kind: JsonKind, other: JsonKind) => kind === other || (kind === 'number' && other === 'integer');

/** The JSON type a GraphQL input type takes; undefined for scalars that take any JSON (`JSON`). */
function jsonKind(type: GraphQLInputType): JsonKind | undefined {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return 'array';
  if (isInputObjectType(inner)) return 'object';
  const scalars: Record<string, JsonKind> = {
    [GraphQLString.name]: 'string',
    [GraphQLID.name]: 'string',
    [GraphQLBoolean.name]: 'boolean',
    [GraphQLInt.name]: 'integer',
    [GraphQLFloat.name]: 'number',
  };
  return scalars[inner.name];
}

/**
 * The GraphQL type of the variable (or input field) a route puts a request field into, found by
 * giving the field a marker and looking for it among the variables the route builds.
 */
function typeOfField(
  route: Route,
  where: 'body' | 'query',
  key: string,
  base: { body?: Record<string, unknown>; params?: Record<string, string> } = {},
): GraphQLInputType | undefined {
  const marker = `\u0001marker:${key}`;
  const query = new URLSearchParams(where === 'query' ? { [key]: marker } : {});
  const variables = route.variables({
    params: new Proxy({}, { get: (_t, name) => base.params?.[name as string] ?? 'x' }),
    query,
    body: where === 'body' ? { ...base.body, [key]: marker } : { ...base.body },
    headers: {},
  });
  const pathTo = (value: unknown, path: string[]): string[] | undefined => {
    if (value === marker) return path;
    if (typeof value !== 'object' || value === null) return undefined;
    for (const [k, v] of Object.entries(value)) {
      const found = pathTo(v, [...path, k]);
      if (found) return found;
    }
    return undefined;
  };
  const path = pathTo(variables, []);
  if (!path) return undefined;
  const operation = route.operation.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const definition = operation?.kind === Kind.OPERATION_DEFINITION ? operation.variableDefinitions?.find((v) => v.variable.name.value === path[0]) : undefined;
  let type = definition && (typeFromAST(schema, definition.type) as GraphQLInputType | undefined);
  for (const segment of path.slice(1)) {
    const inner = type && isNonNullType(type) ? type.ofType : type;
    type = inner && isInputObjectType(inner) ? inner.getFields()[segment]?.type : undefined;
  }
  return type;
}

describe('hostile input on every documented path', () => {
  let t: TestApp;
  let token: string;
  /** Plausible requests per path, so that a hostile field is read past the first check. */
  let base: Record<string, { body?: Record<string, unknown>; query?: Record<string, string>; params?: Record<string, string> }>;

  beforeAll(async () => {
    t = await startTestApp();
    const tree = await seedTree(t.app);
    token = tree.mspCaller.token;
    const child = tree.childA.id;
    const window = { start: { relative: { value: 1, unit: 'hours' } }, end: { now: true } };
    base = {
      '/search/records/1.0': { body: { instance_ids: [child], module: 'flows', ...window } },
      '/search/agg/1.0': { body: { instance_ids: [child], module: 'flows', field: 'app_name', ...window } },
      '/rest/deployments/1.0': { body: { name: 'Hostile', handle: 'hostile', parent_id: tree.msp.id } },
      '/rest/profiles/1.0': { body: { name: 'Hostile', customer_id: child } },
      '/rest/nodes/provision/1.0': { body: { customer_id: child, machine_id: 'm-1' } },
      '/rest/automation/1.0': { body: { customer_id: child, name: 'Hostile', match: {}, action: {} } },
      '/rest/events/1.0/:customerId': { params: { customerId: child } },
      '/rest/events/1.0/:customerId/:topic': { params: { customerId: child, topic: 'investigations' } },
    };
    for (const path of ['', '/:org', '/:org/temporal', '/:org/cadence', '/:org/transfer', '/:org/reach', '/:org/access']) {
      base[`/rest/explore/1.0/egress/organizations${path}`] = { query: { instance_ids: child }, params: { org: 'Google LLC' } };
    }
  });
  afterAll(() => t.stop());

  const all: (Route | ServedRoute)[] = [...routes, ...servedRoutes];
  const send = (route: Route | ServedRoute, req: { body?: unknown; rawBody?: string; query?: Record<string, string>; params?: Record<string, string> }) => {
    const params = { ...base[route.path]?.params, ...req.params };
    const path = route.path.replace(/:(\w+)/g, (_m, name: string) => params[name] ?? 'x');
    const query = new URLSearchParams({ ...base[route.path]?.query, ...req.query }).toString();
    const payload = req.rawBody !== undefined ? { rawBody: req.rawBody } : { body: req.body ?? base[route.path]?.body ?? {} };
    return call(t.url, route.method, query ? `${path}?${query}` : path, { token, ...payload });
  };

  it.each(all.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: every field and parameter, one hostile value at a time',
    async (label, route) => {
      const { body, query } = fieldsOf(route);
      for (const key of body) {
        for (const value of HOSTILE_VALUES) {
          expectDocumentedError(
            `${label} body.${key}=${JSON.stringify(value)?.slice(0, 60)}`,
            await send(route, { body: { ...base[route.path]?.body, [key]: value } }),
          );
        }
      }
      for (const key of query) {
        for (const value of HOSTILE_QUERY) expectDocumentedError(`${label} ?${key}=${value.slice(0, 60)}`, await send(route, { query: { [key]: value } }));
      }
      for (const name of route.path.match(/:\w+/g) ?? []) {
        for (const segment of HOSTILE_SEGMENTS) {
          const res = await call(
            t.url,
            route.method,
            route.path.replace(/:(\w+)/g, (m) => (m === name ? segment : 'x')),
            { token, body: {} },
          );
          expectDocumentedError(`${label} ${name}=${segment.slice(0, 40)}`, res);
        }
      }
      if (route.method !== 'GET') {
        for (const rawBody of RAW_BODIES) expectDocumentedError(`${label} raw ${rawBody.slice(0, 20)}`, await send(route, { rawBody }));
        const deep = `{${body.map((key) => `${JSON.stringify(key)}:${nested}`).join(',')}}`;
        expectDocumentedError(`${label} every field nested 40,000 deep`, await send(route, { rawBody: deep }));
      }
    },
  );

  const typed = routes.map((route) => [`${route.method} ${route.path}`, route] as const);
  it.each(typed)('%s: a value of the wrong JSON type in any field is a 400 invalid_request naming it', async (label, route) => {
    const { body, query } = fieldsOf(route);
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const expectRefused = (what: string, field: string, res: { status: number; body: any }) => {
      expect(res.status, `${what} → ${JSON.stringify(res.body)}`).toBe(400);
      const message = typeof res.body.error === 'object' ? res.body.error.message : res.body.message;
      expect(typeof res.body.error === 'object' ? res.body.error.type : res.body.code, what).toBe('invalid_request');
      expect(message, what).toMatch(new RegExp(`^${escape(field)}[ .[]`));
    };
    for (const key of body) {
      const type = typeOfField(route, 'body', key, base[route.path]);
      const kind = type && jsonKind(type);
      if (!type || !kind) continue;
      for (const [other, value] of Object.entries(OF_KIND) as [JsonKind, unknown][]) {
        if (fits(kind, other)) continue;
        expectRefused(`${label} body.${key}=${JSON.stringify(value)}`, key, await send(route, { body: { ...base[route.path]?.body, [key]: value } }));
      }
      const list = isNonNullType(type) ? type.ofType : type;
      const itemKind = isListType(list) ? jsonKind(list.ofType) : undefined;
      if (itemKind) {
        const wrong = (Object.keys(OF_KIND) as JsonKind[]).find((other) => !fits(itemKind, other))!;
        expectRefused(
          `${label} body.${key}=[${JSON.stringify(OF_KIND[wrong])}]`,
          `${key}[0]`,
          await send(route, { body: { ...base[route.path]?.body, [key]: [OF_KIND[wrong]] } }),
        );
      }
    }
    for (const key of query) {
      const type = typeOfField(route, 'query', key, base[route.path]);
      const kind = type && jsonKind(type);
      if (kind === 'integer' || kind === 'number') expectRefused(`${label} ?${key}=abc`, key, await send(route, { query: { [key]: 'abc' } }));
    }
  });

  it('answers random mixtures of hostile fields on every path without a 5xx', async () => {
    const value = fc.constantFrom(...HOSTILE_VALUES);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...all), fc.array(fc.tuple(fc.nat(), value), { maxLength: 4 }), async (route, picks) => {
        const { body } = fieldsOf(route);
        if (!body.length) return;
        const mixed: Record<string, unknown> = { ...base[route.path]?.body };
        for (const [i, v] of picks) mixed[body[i % body.length]!] = v;
        expectDocumentedError(`${route.method} ${route.path} ${JSON.stringify(mixed).slice(0, 200)}`, await send(route, { body: mixed }));
      }),
      { numRuns: 300, seed: 20261122 },
    );
  });
});
