import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Access } from '../../rest-compat/route.js';
import { routes, servedRoutes } from '../../rest-compat/routes.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { call } from '../kit/http.js';
import { type Caller, allScopes, seedCaller, seedTenant } from '../kit/seed.js';

/**
 * The OpenAPI document's security comes from each row's `access`; the services enforce their own
 * scope checks. This holds the two together: every row is called without a token, with a token
 * holding no scope, and with one holding every scope but the row's.
 */
describe("each route row's access is what the server enforces", () => {
  let t: TestApp;
  let noScope: Caller;
  const allBut = new Map<string, Caller>();

  beforeAll(async () => {
    t = await startTestApp();
    const tenant = await seedTenant(t.app, { msp: true });
    noScope = await seedCaller(t.app, tenant.id, []);
    for (const scope of allScopes)
      allBut.set(
        scope,
        await seedCaller(
          t.app,
          tenant.id,
          allScopes.filter((s) => s !== scope),
        ),
      );
  });
  afterAll(() => t?.stop());

  /** A call that names nothing that exists: `x` for each path parameter, an empty JSON body on writes. */
  const request = (r: { method: string; path: string }, token?: string) =>
    call(t.url, r.method, r.path.replace(/:[^/]+/g, 'x'), { token, ...(r.method !== 'GET' && { body: {} }) });

  const codeOf = (body: any): string | undefined => (typeof body?.error === 'object' ? body.error.type : body?.code);
  const requiredScopeOf = (body: any): string | undefined => body?.error?.details?.required_scope ?? body?.required_scope ?? body?.details?.required_scope;

  const rows: Array<{ method: string; path: string; access: Access }> = [...routes, ...servedRoutes];

  it.each(rows.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_name, r) => {
    const anonymous = await request(r);
    // A public path may still refuse what it was given (bad credentials, a bad link), never for want of a token.
    if (r.access === 'public') {
      expect(['authentication_error', 'authorization_error'], JSON.stringify(anonymous.body)).not.toContain(codeOf(anonymous.body));
      return;
    }
    expect(anonymous.status, JSON.stringify(anonymous.body)).toBe(401);
    expect(codeOf(anonymous.body)).toBe('authentication_error');
    const scopeless = await request(r, noScope.token);
    if (r.access === 'token') {
      expect([401, 403], JSON.stringify(scopeless.body)).not.toContain(scopeless.status);
      return;
    }
    expect(scopeless.status, JSON.stringify(scopeless.body)).toBe(403);
    expect(codeOf(scopeless.body)).toBe('authorization_error');
    const others = await request(r, allBut.get(r.access)!.token);
    expect(others.status, JSON.stringify(others.body)).toBe(403);
    const named = requiredScopeOf(others.body);
    if (named !== undefined) expect(named).toBe(r.access);
  });
});
