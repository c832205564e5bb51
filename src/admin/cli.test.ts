import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { knownScopes } from '../auth/scopes.js';
import { API_CLIENT_LIMITS } from '../modules/api-clients/api-clients.service.js';
import { commandNames } from './commands.js';

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

    const client = await adminCli(
      ['client', 'create', '--customer', msp.json.customer_id, '--scopes', 'p.token.scope.deployment_api', '--description', 'ops'],
      env,
    );
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

  it('prints usage as text and exits 2 for unknown commands, unknown options or missing options', async () => {
    for (const args of [[], ['frobnicate']]) {
      const unknown = await adminCli(args, env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('\n  tenant create --name NAME');
    }
    const missing = await adminCli(['tenant', 'create', '--name', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('--handle is required\nusage:\n  tenant create --name NAME --handle HANDLE [--parent CUSTOMER_ID] [--msp]\n');
    const stray = await adminCli(['tenant', 'list', '--verbose'], env);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/^Unknown option '--verbose'.*\nusage:\n  tenant list\n$/s);
    const valueless = await adminCli(['client', 'list', '--customer'], env);
    expect(valueless.code).toBe(2);
    expect(valueless.stderr).toContain("Option '--customer <value>' argument missing");
  });

  it('refuses unknown scopes, listing the valid ones, and unknown customers, with a JSON error', async () => {
    const bad = await adminCli(['client', 'create', '--customer', 'cus_nope', '--scopes', 'p.token.scope.node_api'], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: 'not_found' });
    const scope = await adminCli(['client', 'create', '--customer', 'cus_nope', '--scopes', 'root,p.token.scope.node_api'], env);
    expect(scope.code).toBe(1);
    expect(JSON.parse(scope.stderr)).toEqual({
      error: 'invalid_request',
      message: `unknown scopes: root; valid scopes: ${knownScopes.join(', ')}`,
    });
  });

  it('holds a tenant to its active API clients, as the console does, and checks the description', async () => {
    const tenant = await adminCli(['tenant', 'create', '--name', 'Full', '--handle', 'full'], env);
    const customerId = tenant.json.customer_id;
    const create = (...extra: string[]) => adminCli(['client', 'create', '--customer', customerId, '--scopes', 'p.token.scope.node_api', ...extra], env);
    expect((await create()).code).toBe(0);
    // The rest up to the limit are planted directly: a CLI process per client would take minutes.
    await t.app.db.prisma.apiClient.createMany({
      data: Array.from({ length: API_CLIENT_LIMITS.activePerTenant - 1 }, (_, i) => ({
        id: `cli_planted_${i}`,
        customerId,
        secretHash: new Uint8Array(32),
        scopes: ['p.token.scope.node_api'],
        kind: 'api',
      })),
    });
    const refused = await create('--description', 'one too many');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: 'client_limit_reached' });

    await adminCli(['client', 'revoke', '--client-id', 'cli_planted_0'], env);
    expect((await create('--description', 'in the freed place')).json).toMatchObject({ description: 'in the freed place' });

    const bidi = await create('--description', 'ops\u202e');
    expect(bidi.code).toBe(1);
    expect(JSON.parse(bidi.stderr)).toMatchObject({ error: 'invalid_request' });
  });
});

describe("README's Admin CLI block", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /## Admin CLI\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

  it('shows every command', () => {
    for (const name of commandNames()) expect(block).toMatch(new RegExp(`^npm run -s admin -- ${name}( |$)`, 'm'));
  });

  it('ties a backfill of H hours to detect run --window-minutes 60 x H', () => {
    expect(block).toContain('detect run --customer cus_… [--window-minutes N]');
    expect(readme).toMatch(/--backfill-hours H`\), run `detect run --window-minutes`\nwith 60 × H/);
  });
});

describe('admin CLI help', () => {
  // Help needs neither configuration nor a database: a wrong DATABASE_URL must not matter.
  const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', LOG_LEVEL: 'silent' };

  it('prints the usage of every command on stdout and exits 0 for --help, -h and help', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const help = await adminCli(args, env);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage: npm run -s admin -- <command> \[options\]\n/);
      for (const name of commandNames()) expect(help.stdout).toContain(`\n  ${name}`);
      expect(help.stdout).not.toContain('\\n');
    }
  });

  it("prints one command's usage for `<command> --help` and `help <command>`", async () => {
    for (const args of [
      ['detect', 'run', '--help'],
      ['help', 'detect', 'run'],
      ['detect', 'run', '--customer', 'cus_x', '-h'],
    ]) {
      const help = await adminCli(args, env);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage:\n  detect run --customer CUSTOMER_ID \[--window-minutes N\]\n/);
      expect(help.stdout).toContain('N = 60 x H');
      expect(help.stdout).not.toContain('tenant create');
    }
    const scopes = await adminCli(['client', 'create', '--help'], env);
    for (const scope of knownScopes) expect(scopes.stdout).toContain(scope);
  });
});
