import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';

describe('admin CLI against DATABASE_URL, while the server runs', () => {
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    env = { DATABASE_URL: t.config.databaseUrl!, LOG_LEVEL: 'silent' };
  });
  afterAll(() => t.stop());

  it('creates an MSP, a child, a client; the client gets tokens; revoking it stops them', async () => {
    const msp = await adminCli(['tenant', 'create', '--name', 'CLI MSP', '--handle', 'CLI MSP', '--msp'], env);
    expect(msp.code).toBe(0);
    expect(msp.json).toMatchObject({ name: 'CLI MSP', handle: 'cli_msp', type: 'msp', parent: null, is_msp: true });
    const child = await adminCli(['tenant', 'create', '--name', 'Kid', '--handle', 'kid', '--parent', msp.json.customer_id], env);
    expect(child.json).toMatchObject({ type: 'child', parent: msp.json.customer_id });

    const client = await adminCli(['client', 'create', '--customer', msp.json.customer_id, '--scopes', 'p.token.scope.deployment_api', '--description', 'ops'], env);
    expect(client.json).toMatchObject({ customer_id: msp.json.customer_id, scopes: ['p.token.scope.deployment_api'], description: 'ops' });
    expect(client.json.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const listed = await adminCli(['client', 'list', '--customer', msp.json.customer_id], env);
    expect(listed.json).toHaveLength(1);
    expect(listed.json[0]).not.toHaveProperty('client_secret');
    expect(JSON.stringify(await t.app.db.prisma.apiClient.findMany())).not.toContain(client.json.client_secret);

    const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: client.json.client_id, client_secret: client.json.client_secret } });
    const list = await call(t.url, 'GET', '/rest/deployments/1.0', { token: token.body.access_token });
    expect(list.body.deployments.map((d: { customer_id: string }) => d.customer_id)).toEqual([child.json.customer_id]);

    const revoked = await adminCli(['client', 'revoke', '--client-id', client.json.client_id], env);
    expect(revoked.json.revoked_at).toEqual(expect.any(String));
    await expect.poll(async () => (await call(t.url, 'GET', '/rest/deployments/1.0', { token: token.body.access_token })).status).toBe(401);

    const tenants = await adminCli(['tenant', 'list'], env);
    expect(tenants.json.map((x: { customer_id: string }) => x.customer_id)).toEqual(expect.arrayContaining([msp.json.customer_id, child.json.customer_id]));
  });

  it('prints usage and exits 2 for unknown commands or missing options', async () => {
    expect((await adminCli(['frobnicate'], env)).code).toBe(2);
    const missing = await adminCli(['tenant', 'create', '--name', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--handle');
  });

  it('refuses unknown scopes and unknown customers with a JSON error', async () => {
    const bad = await adminCli(['client', 'create', '--customer', 'cus_nope', '--scopes', 'p.token.scope.node_api'], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: 'not_found' });
    const scope = await adminCli(['client', 'create', '--customer', 'cus_nope', '--scopes', 'root'], env);
    expect(JSON.parse(scope.stderr)).toMatchObject({ error: 'invalid_request' });
  });
});
