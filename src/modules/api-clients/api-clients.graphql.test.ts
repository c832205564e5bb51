import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { type Person, asPerson, seedPerson, signedIn } from '../../../test/kit/people.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { roleScopes } from '../../auth/actions.js';
import { Scopes } from '../../auth/scopes.js';
import { hashSecret } from '../../auth/secrets.js';
import { newId } from '../../infra/ids.js';
import { createLogger } from '../../infra/logger.js';
import { API_CLIENT_LIMITS } from './api-clients.service.js';

const LIST = 'query($c: String!) { apiClients(customerId: $c) { clientId customerId description scopes kind nodeIds createdAt revokedAt } }';
const FILTERED = 'query($c: String!, $kind: ApiClientKind, $active: Boolean) { apiClients(customerId: $c, kind: $kind, active: $active) { clientId } }';
const CREATE =
  'mutation($i: CreateApiClientInput!) { createApiClient(input: $i) { accessKey client { clientId customerId description scopes kind revokedAt } } }';
const REVOKE = 'mutation($id: String!) { revokeApiClient(clientId: $id) { clientId revokedAt } }';
const AUDIT = 'query($c: String!) { auditLog(customerId: $c, first: 500) { edges { node { action field target result actor { kind id } } } } }';
/** Any call that needs a valid token (tenants.read: no scope). */
const VIEWER = '{ viewerTenant { customerId } }';

type Answer = Awaited<ReturnType<typeof graphql>>;
const code = (res: Answer) => res.errors?.[0]?.extensions?.code;

/** The REST token endpoint, as an SDK calls it with an access key's two halves. */
const exchange = (url: string, accessKey: string) => {
  const dot = accessKey.indexOf('.');
  return call(url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: accessKey.slice(0, dot), client_secret: accessKey.slice(dot + 1) } });
};

describe('API clients for admins', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let admin: Person;
  let adminCookie: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ logger: createLogger('debug', {}, (line) => logLines.push(line)) });
    tree = await seedTree(t.app);
    admin = await seedPerson(t.app, tree.msp.id, 'admin');
    adminCookie = await signedIn(t.url, admin);
  });
  afterAll(() => t?.stop());

  const asAdmin = (query: string, variables: Record<string, unknown>) => asPerson(t.url, adminCookie, query, variables);
  const create = (input: Record<string, unknown>, token?: string) => (token ? graphql(t.url, CREATE, { i: input }, token) : asAdmin(CREATE, { i: input }));

  it('creates a client whose secret is shown once and works at the token endpoint; revoking it refuses its token at once', async () => {
    const res = await create({ customerId: tree.childA.id, description: '  CI exporter  ', scopes: [Scopes.searchApi, Scopes.searchApi] });
    expect(res.errors).toBeUndefined();
    const { accessKey, client } = res.data.createApiClient;
    expect(client).toEqual({
      clientId: expect.stringMatching(/^cl_/),
      customerId: tree.childA.id,
      description: 'CI exporter',
      scopes: [Scopes.searchApi],
      kind: 'api',
      revokedAt: null,
    });
    expect(accessKey).toMatch(new RegExp(`^${client.clientId}\\.[A-Za-z0-9_-]{43}$`));

    const listed = (await asAdmin(LIST, { c: tree.childA.id })).data.apiClients;
    expect(listed[0]).toMatchObject({ clientId: client.clientId, kind: 'api', nodeIds: [], revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(accessKey.split('.')[1]);

    const issued = await exchange(t.url, accessKey);
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    expect((await graphql(t.url, VIEWER, {}, token)).data).toEqual({ viewerTenant: { customerId: tree.childA.id } });

    const revoked = await asAdmin(REVOKE, { id: client.clientId });
    expect(revoked.data.revokeApiClient).toEqual({ clientId: client.clientId, revokedAt: expect.any(String) });
    const refused = await graphql(t.url, VIEWER, {}, token);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'authentication_error', details: { reason: 'client_revoked' } });
    expect(await exchange(t.url, accessKey)).toMatchObject({ status: 401, body: { code: 'invalid_credentials' } });
    // Revoking again changes nothing: the first revocation's time stays.
    expect((await asAdmin(REVOKE, { id: client.clientId })).data.revokeApiClient).toEqual(revoked.data.revokeApiClient);
    expect((await asAdmin(LIST, { c: tree.childA.id })).data.apiClients[0].revokedAt).toBe(revoked.data.revokeApiClient.revokedAt);
  });

  it('answers 404 for a tenant or a client outside the caller tree, as if it did not exist', async () => {
    const other = await seedCaller(t.app, tree.childB.id);
    const { clientId } = await seedCaller(t.app, tree.childA.id);
    const childA = tree.childACaller.token;
    expect(code(await graphql(t.url, LIST, { c: tree.childB.id }, childA))).toBe('not_found');
    expect(code(await create({ customerId: tree.childB.id, description: 'x', scopes: [Scopes.nodeApi] }, childA))).toBe('not_found');
    const outside = await graphql(t.url, REVOKE, { id: other.clientId }, childA);
    expect(outside.errors?.[0]).toMatchObject({ message: `API client ${other.clientId} was not found`, extensions: { code: 'not_found' } });
    expect(code(await graphql(t.url, REVOKE, { id: 'cl_nosuchclient' }, childA))).toBe('not_found');
    expect(code(await graphql(t.url, REVOKE, { id: 'x'.repeat(5000) }, childA))).toBe('not_found');
    // The other tenant's client still works; the MSP reaches its child's client.
    expect((await graphql(t.url, VIEWER, {}, other.token)).errors).toBeUndefined();
    expect((await graphql(t.url, REVOKE, { id: clientId }, tree.mspCaller.token)).data.revokeApiClient.clientId).toBe(clientId);
  });

  it.each([
    ['an empty description', { description: '' }, 'description must not be empty: say who or what uses the client'],
    ['a blank description', { description: ' \t ' }, 'description must not be empty: say who or what uses the client'],
    ['a description too long', { description: 'd'.repeat(API_CLIENT_LIMITS.description + 1) }, 'description must be at most 200 characters'],
    ['a control character', { description: 'ci\u0007' }, 'description must not contain control characters'],
    ['no scopes', { scopes: [] }, 'scopes must name at least one scope'],
    ['an unknown scope', { scopes: ['p.token.scope.root'] }, `unknown scopes: p.token.scope.root; valid scopes: ${Object.values(Scopes).join(', ')}`],
  ])('refuses %s with 400 invalid_request', async (_name, change, message) => {
    const res = await create({ customerId: tree.msp.id, description: 'ok', scopes: [Scopes.nodeApi], ...change });
    expect(res.errors?.[0]).toMatchObject({ message, extensions: { code: 'invalid_request' } });
  });

  it('takes a description of exactly the limit', async () => {
    const res = await create({ customerId: tree.msp.id, description: 'd'.repeat(API_CLIENT_LIMITS.description), scopes: [Scopes.nodeApi] });
    expect(res.errors).toBeUndefined();
  });

  it('never lets a caller grant a scope it does not hold itself', async () => {
    const nodeOnly = await seedCaller(t.app, tree.msp.id, [Scopes.nodeApi]);
    const wider = await create({ customerId: tree.childA.id, description: 'wider', scopes: [Scopes.nodeApi, Scopes.searchApi, Scopes.ingest] }, nodeOnly.token);
    expect(wider.errors?.[0]).toMatchObject({
      message: `You cannot grant scopes you do not hold yourself: ${Scopes.searchApi}, ${Scopes.ingest}`,
      extensions: { code: 'authorization_error', details: { reason: 'scope_not_held', scopes: [Scopes.searchApi, Scopes.ingest] } },
    });
    const same = await create({ customerId: tree.childA.id, description: 'same', scopes: [Scopes.nodeApi] }, nodeOnly.token);
    expect(same.data.createApiClient.client.scopes).toEqual([Scopes.nodeApi]);
    // A person holds what their role allows: an admin every scope, an analyst search only, a viewer none.
    expect(roleScopes('admin')).toEqual(Object.values(Scopes));
    expect(roleScopes('analyst')).toEqual([Scopes.searchApi]);
    expect(roleScopes('viewer')).toEqual([]);
    const everything = await create({ customerId: tree.msp.id, description: 'all', scopes: Object.values(Scopes) });
    expect(everything.data.createApiClient.client.scopes).toEqual(Object.values(Scopes));
    const analyst = await signedIn(t.url, await seedPerson(t.app, tree.msp.id, 'analyst'));
    const refused = await asPerson(t.url, analyst, CREATE, { i: { customerId: tree.msp.id, description: 'x', scopes: [Scopes.searchApi] } });
    expect(refused.errors?.[0]?.extensions?.details).toMatchObject({ reason: 'insufficient_role', required_role: 'admin' });
    expect((await asPerson(t.url, analyst, LIST, { c: tree.msp.id })).errors?.[0]?.extensions?.details?.reason).toBe('insufficient_role');
  });

  it('refuses to revoke the client the request is made with, and lets another revoke it', async () => {
    const self = await seedCaller(t.app, tree.childA.id, [Scopes.nodeApi]);
    const res = await graphql(t.url, REVOKE, { id: self.clientId }, self.token);
    expect(res.errors?.[0]).toMatchObject({
      message: 'You cannot revoke the API client this request is made with; revoke it with another client or in the console',
      extensions: { code: 'invalid_request' },
    });
    expect((await graphql(t.url, VIEWER, {}, self.token)).errors).toBeUndefined();
    expect((await asAdmin(REVOKE, { id: self.clientId })).errors).toBeUndefined();
    expect(code(await graphql(t.url, VIEWER, {}, self.token))).toBe('authentication_error');
  });

  it("lists a collector's enrolment credential with its node, and revoking it cuts the collector off", async () => {
    const tenant = await seedTenant(t.app);
    const { token: provisioner } = await seedCaller(t.app, tenant.id);
    const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: provisioner, body: { customer_id: tenant.id, machine_id: 'm-1' } });
    const collectorToken = (await exchange(t.url, provisioned.body.access_key)).body.access_token as string;
    const registered = await graphql(
      t.url,
      'mutation($i: CollectorFactsInput!) { registerCollector(input: $i) { nodeId } }',
      { i: { hostname: 'edge-1', machineId: 'm-1', collectorVersion: '1.0.0', os: 'linux', arch: 'amd64' } },
      collectorToken,
    );
    const { nodeId } = registered.data.registerCollector;
    const clientId = provisioned.body.access_key.split('.')[0];
    const listed = (await graphql(t.url, LIST, { c: tenant.id }, provisioner)).data.apiClients;
    expect(listed.find((c: { clientId: string }) => c.clientId === clientId)).toMatchObject({ kind: 'provision', scopes: [Scopes.ingest], nodeIds: [nodeId] });
    expect((await graphql(t.url, REVOKE, { id: clientId }, provisioner)).errors).toBeUndefined();
    expect(code(await graphql(t.url, VIEWER, {}, collectorToken))).toBe('authentication_error');
  });

  it(`holds ${API_CLIENT_LIMITS.activePerTenant} active clients per tenant under concurrent creates; revoked and collector ones do not count`, async () => {
    const tenant = await seedTenant(t.app, { parentId: tree.msp.id });
    const row = (kind: string, revokedAt: Date | null = null) => ({
      id: newId('cl'),
      customerId: tenant.id,
      secretHash: hashSecret(newId('s')),
      scopes: [Scopes.nodeApi],
      description: 'filler',
      kind,
      revokedAt,
    });
    await t.app.db.prisma.apiClient.createMany({
      data: [
        ...Array.from({ length: API_CLIENT_LIMITS.activePerTenant - 3 }, () => row('api')),
        ...Array.from({ length: 5 }, () => row('api', new Date())),
        ...Array.from({ length: 5 }, () => row('provision')),
      ],
    });
    const racers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create({ customerId: tenant.id, description: `racer ${i}`, scopes: [Scopes.nodeApi] })),
    );
    expect(racers.filter((r) => !r.errors).length).toBe(3);
    const refusals = racers.filter((r) => r.errors).map((r) => r.errors![0]);
    expect(refusals).toEqual(
      Array(3).fill(
        expect.objectContaining({
          message: 'A tenant may have at most 100 active API clients; revoke one it no longer needs',
          extensions: expect.objectContaining({ code: 'client_limit_reached' }),
        }),
      ),
    );
    const active = () => t.app.db.prisma.apiClient.count({ where: { customerId: tenant.id, kind: 'api', revokedAt: null } });
    expect(await active()).toBe(API_CLIENT_LIMITS.activePerTenant);
    const created = racers.find((r) => !r.errors)!.data.createApiClient.client.clientId;
    expect((await asAdmin(REVOKE, { id: created })).errors).toBeUndefined();
    expect((await create({ customerId: tenant.id, description: 'after a revocation', scopes: [Scopes.nodeApi] })).errors).toBeUndefined();
    expect(await active()).toBe(API_CLIENT_LIMITS.activePerTenant);
  });

  it(`lists at most ${API_CLIENT_LIMITS.listed} clients, newest first; by kind and state, an admin's clients are never crowded out`, async () => {
    const tenant = await seedTenant(t.app, { parentId: tree.msp.id });
    const base = Date.UTC(2026, 0, 1);
    // Two API clients older than a big fleet's collector credentials, one of them revoked.
    await t.app.db.prisma.apiClient.createMany({
      data: [
        { id: 'cl_script', createdAt: new Date(base - 2000) },
        { id: 'cl_retired', createdAt: new Date(base - 1000), revokedAt: new Date(base) },
      ].map((c) => ({ ...c, customerId: tenant.id, secretHash: hashSecret(newId('s')), scopes: [Scopes.searchApi], kind: 'api' })),
    });
    await t.app.db.prisma.apiClient.createMany({
      data: Array.from({ length: API_CLIENT_LIMITS.listed + 1 }, (_, i) => ({
        id: `cl_list${String(i).padStart(4, '0')}`,
        customerId: tenant.id,
        secretHash: hashSecret(newId('s')),
        scopes: [Scopes.ingest],
        kind: 'provision',
        createdAt: new Date(base + i * 1000),
      })),
    });
    const listed = (await asAdmin(LIST, { c: tenant.id })).data.apiClients.map((c: { clientId: string }) => c.clientId);
    expect(listed).toHaveLength(API_CLIENT_LIMITS.listed);
    expect(listed[0]).toBe(`cl_list${String(API_CLIENT_LIMITS.listed).padStart(4, '0')}`);
    expect(listed).not.toContain('cl_list0000');

    const ids = async (filter: Record<string, unknown>) =>
      (await asAdmin(FILTERED, { c: tenant.id, ...filter })).data.apiClients.map((c: { clientId: string }) => c.clientId);
    expect(await ids({ kind: 'api' })).toEqual(['cl_retired', 'cl_script']);
    expect(await ids({ kind: 'api', active: true })).toEqual(['cl_script']);
    expect(await ids({ kind: 'api', active: false })).toEqual(['cl_retired']);
    expect(await ids({ kind: 'device' })).toEqual([]);
    expect(await ids({ kind: 'provision', active: true })).toHaveLength(API_CLIENT_LIMITS.listed);
    expect(code(await asAdmin(FILTERED, { c: tenant.id, kind: 'root' }))).toBe('invalid_request');
  });

  it('records creations and revocations in the audit log, and never the secret there or in the logs', async () => {
    const created = (await create({ customerId: tree.childB.id, description: 'audited', scopes: [Scopes.nodeApi] })).data.createApiClient;
    await asAdmin(REVOKE, { id: created.client.clientId });
    await t.app.services.audit.flush();
    const entries = (await asAdmin(AUDIT, { c: tree.childB.id })).data.auditLog.edges.map((e: { node: unknown }) => e.node);
    expect(entries).toContainEqual({
      action: 'clients.manage',
      field: 'createApiClient',
      target: { 'input.customerId': tree.childB.id },
      result: 'ok',
      actor: { kind: 'USER', id: admin.userId },
    });
    // A revocation names no tenant: it is filed under the caller's own.
    const own = (await asAdmin(AUDIT, { c: tree.msp.id })).data.auditLog.edges.map((e: { node: unknown }) => e.node);
    expect(own).toContainEqual(expect.objectContaining({ action: 'clients.manage', field: 'revokeApiClient', target: { clientId: created.client.clientId } }));
    const secret = created.accessKey.split('.')[1];
    expect(JSON.stringify(await t.app.db.prisma.auditEntry.findMany({ select: { target: true, field: true, result: true } }))).not.toContain(secret);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(secret);
  });
});
