import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';

const CREATE = 'mutation($i: CreateApiClientInput!) { createApiClient(input: $i) { accessKey } }';
const REVOKE = 'mutation($id: String!) { revokeApiClient(clientId: $id) { revokedAt } }';
const ISSUE = 'mutation($id: String!, $secret: String!) { issueToken(clientId: $id, clientSecret: $secret) { accessToken } }';
const VIEWER = '{ viewerTenant { customerId } }';

// Its own file (so its own process): embedded mode owns per-process engines (PGlite and chDB).
describe('API clients in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(() => t?.stop());

  it("refuses a revoked client's token on the very next request, before the outbox's notification is polled", async () => {
    const tenant = await seedTenant(t.app);
    const admin = await seedCaller(t.app, tenant.id, [Scopes.nodeApi, Scopes.searchApi]);
    const created = await graphql(t.url, CREATE, { i: { customerId: tenant.id, description: 'sdk', scopes: [Scopes.searchApi] } }, admin.token);
    const [clientId, secret] = created.data.createApiClient.accessKey.split('.');
    const token = (await graphql(t.url, ISSUE, { id: clientId, secret })).data.issueToken.accessToken;
    // Used once, the credential is in this process's cache.
    expect((await graphql(t.url, VIEWER, {}, token)).errors).toBeUndefined();
    expect((await graphql(t.url, REVOKE, { id: clientId }, admin.token)).errors).toBeUndefined();
    expect((await graphql(t.url, VIEWER, {}, token)).errors?.[0]?.extensions).toMatchObject({
      code: 'authentication_error',
      details: { reason: 'client_revoked' },
    });
    expect((await graphql(t.url, ISSUE, { id: clientId, secret })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
  }, 120_000);
});
