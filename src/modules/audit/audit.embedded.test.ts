import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';

// Its own file (so its own process): embedded mode owns per-process engines (PGlite and chDB).
describe('the audit log in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true, env: { AUDIT_RETENTION_DAYS: '1' } });
  });
  afterAll(() => t?.stop());

  it('writes a batch, reads it back, and purges by age', async () => {
    const tenant = await seedTenant(t.app);
    const { token } = await seedCaller(t.app, tenant.id);
    const created = await graphql(t.url, 'mutation { createProfile(input: { name: "Embedded" }) { profile { profileId } } }', {}, token);
    expect(created.errors).toBeUndefined();
    await t.app.services.audit.flush();
    const log = await graphql(t.url, 'query($c: String!) { auditLog(customerId: $c) { edges { node { action result target } } } }', { c: tenant.id }, token);
    expect(log.data.auditLog.edges).toEqual([{ node: { action: 'profiles.create', result: 'ok', target: { 'input.name': 'Embedded' } } }]);
    expect(await t.app.services.audit.purge(Date.now() + 2 * 86_400_000)).toBe(1);
  });
});
