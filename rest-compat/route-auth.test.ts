import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../test/kit/app.js';
import { call } from '../test/kit/http.js';
import { allScopes, seedCaller, seedTenant } from '../test/kit/seed.js';
import { knownScopes } from '../src/auth/scopes.js';
import type { Access } from './route.js';
import { routes, servedRoutes } from './routes.js';

const everyRoute = [...routes, ...servedRoutes];

/** The README's table of what each path needs, as the route table declares it. */
function scopeTable(): string {
  const needs: [Access, string][] = [
    ['public', 'nothing (no token)'],
    ['token', 'any valid token'],
    ...knownScopes.map((s): [Access, string] => [s as Access, `\`${s}\``]),
  ];
  const rows = needs.map(([auth, label]) => {
    const methodsByPath = new Map<string, string[]>();
    for (const r of everyRoute.filter((r) => r.access === auth)) methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    const paths = [...methodsByPath].map(([path, methods]) => `\`${methods.join(', ')} ${path}\``);
    return `| ${label} | ${paths.join(', ') || '(none)'} |`;
  });
  return ['| Needs | Paths |', '|---|---|', ...rows].join('\n');
}

/** A request that reaches its route's scope check: path parameters and the body fields checked before it. */
const pathOf = (path: string) => path.replace(/:[A-Za-z_]+/g, 'x');

/** The scope a 403 names: in the flat body's message, or in the nested envelope's details. */
function refusedScope(res: { status: number; body: any }): string | undefined {
  if (res.status !== 403) return undefined;
  if (typeof res.body?.error === 'object') return res.body.error.details?.required_scope;
  return /: (p\.token\.scope\.\w+)$/.exec(res.body?.message ?? '')?.[1];
}

describe("the route table's access column", () => {
  let t: TestApp;
  let customerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    customerId = (await seedTenant(t.app, { msp: true })).id;
  });
  afterAll(() => t.stop());

  it('names for every path the scope the service asks for: 403 naming it without, none with only it', async () => {
    const scoped = everyRoute.filter((r) => r.access !== 'public' && r.access !== 'token');
    for (const scope of new Set(scoped.map((r) => r.access))) {
      const without = await seedCaller(
        t.app,
        customerId,
        allScopes.filter((s) => s !== scope),
      );
      const only = await seedCaller(t.app, customerId, [scope]);
      for (const route of scoped.filter((r) => r.access === scope)) {
        const label = `${route.method} ${route.path}`;
        const refused = await call(t.url, route.method, pathOf(route.path), { token: without.token, body: {} });
        expect(refusedScope(refused), `${label} without ${scope}: ${refused.status} ${JSON.stringify(refused.body)}`).toBe(scope);
        const allowed = await call(t.url, route.method, pathOf(route.path), { token: only.token, body: {} });
        expect(allowed.status === 403 && refusedScope(allowed) !== undefined, `${label} with only ${scope}: ${JSON.stringify(allowed.body)}`).toBe(false);
      }
    }
  });

  it('asks for no scope where it says any token will do, and for no token on public paths', async () => {
    const bare = await seedCaller(t.app, customerId, []);
    for (const route of everyRoute.filter((r) => r.access === 'token')) {
      expect((await call(t.url, route.method, pathOf(route.path), { body: {} })).status, route.path).toBe(401);
      const res = await call(t.url, route.method, pathOf(route.path), { token: bare.token, body: {} });
      expect([401, 403], `${route.path}: ${JSON.stringify(res.body)}`).not.toContain(res.status);
    }
    for (const route of everyRoute.filter((r) => r.access === 'public')) {
      const res = await call(t.url, route.method, pathOf(route.path), { body: {} });
      // Refusals of what a public path is given (401 invalid_credentials at the token endpoint,
      // 403 invalid_signature of a download link) are no demand for a bearer token.
      expect(['authentication_error', 'authorization_error'], `${route.path}: ${JSON.stringify(res.body)}`).not.toContain(res.body?.code);
    }
  });
});

describe("README's scope table", () => {
  it('is the route table', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = /\n(\| Needs \| Paths \|\n(?:\|.*\n)+)/.exec(readme)?.[1]?.trimEnd();
    // On failure, paste the expected table into the README's "Scopes" section.
    expect(table).toBe(scopeTable());
  });
});
