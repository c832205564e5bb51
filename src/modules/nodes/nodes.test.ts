import DataLoader from 'dataloader';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJwt } from 'jose';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { newId } from '../../infra/ids.js';
import { deliveredServices } from '../profiles/services-defaults.js';

const PROVISION = '/rest/nodes/provision/1.0';
const register = `mutation($input: CollectorFactsInput!) { registerCollector(input: $input) { nodeId status machineId customerId } }`;

describe('nodes and provisioning', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;

  const profile = (customerId: string, data: { fleetStaging?: boolean; updateChannel?: string } = {}) =>
    t.app.db.prisma.profile.create({ data: { id: newId('prf'), customerId, name: `profile ${customerId}`, ...data } });

  /** Provision over REST, exchange the key, and register as a collector would. */
  const enrol = async (body: Record<string, unknown>, facts: Record<string, unknown> = {}) => {
    const provisioned = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body });
    expect(provisioned.status).toBe(201);
    const [clientId, ...rest] = provisioned.body.access_key.split('.');
    const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: clientId, client_secret: rest.join('.') } });
    const res = await graphql(
      t.url,
      register,
      { input: { hostname: 'edge-1', collectorVersion: '1.0.0', os: 'linux', arch: 'amd64', ...facts } },
      token.body.access_token,
    );
    return { provisioned: provisioned.body, token: token.body.access_token as string, res };
  };

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  describe('POST /rest/nodes/provision/1.0', () => {
    it('mints a one-time ingest credential for a child, bound to a machine and a parent profile', async () => {
      const parentProfile = await profile(tree.msp.id);
      const res = await call(t.url, 'POST', PROVISION, {
        token: tree.mspCaller.token,
        body: { customer_id: tree.childA.id, machine_id: 'bc43bcea-37a7-5c97-9815-727fba52b452', description: 'SN-0042', profile_id: parentProfile.id },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        status: 'success',
        access_key: expect.stringMatching(/^cl_[a-z2-7]+\.[A-Za-z0-9_-]{43}$/),
        customer_id: tree.childA.id,
        machine_id: 'bc43bcea-37a7-5c97-9815-727fba52b452',
        profile_id: parentProfile.id,
      });
      const [clientId, secret] = res.body.access_key.split('.');
      const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: clientId, client_secret: secret } });
      expect(decodeJwt(token.body.access_token)).toMatchObject({ aud: tree.childA.id, scopes: ['p.token.scope.ingest'] });
    });

    it('answers 400 missing_required_fields without customer_id', async () => {
      const res = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body: { machine_id: 'm' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('missing_required_fields');
    });

    it.each([
      ['wrong type', { customer_id: 12 }],
      ['oversize machine_id', { customer_id: '$child', machine_id: 'm'.repeat(300) }],
      ['object description', { customer_id: '$child', description: { a: 1 } }],
    ])('answers 400 for %s', async (_name, body) => {
      const payload = { ...body, customer_id: body.customer_id === '$child' ? tree.childA.id : body.customer_id };
      const res = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body: payload });
      expect(res.status).toBe(400);
    });

    it("answers 404 deployment_not_found for a customer outside the parent's tree", async () => {
      for (const id of [other.childA.id, 'cus_missing']) {
        const res = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body: { customer_id: id } });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('deployment_not_found');
      }
    });

    it('answers 403 unauthorized when a child provisions for its parent or sibling', async () => {
      for (const id of [tree.msp.id, tree.childB.id]) {
        const res = await call(t.url, 'POST', PROVISION, { token: tree.childACaller.token, body: { customer_id: id } });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('unauthorized');
      }
    });

    it('answers 404 profile_not_found for a missing, sibling or foreign profile', async () => {
      const sibling = await profile(tree.childB.id);
      const foreign = await profile(other.msp.id);
      for (const id of ['prf_missing', sibling.id, foreign.id]) {
        const res = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body: { customer_id: tree.childA.id, profile_id: id } });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('profile_not_found');
      }
    });

    it('checks the token and the node_api scope', async () => {
      const narrow = await seedCaller(t.app, tree.msp.id, ['p.token.scope.deployment_api']);
      expect((await call(t.url, 'POST', PROVISION, { token: narrow.token, body: { customer_id: tree.msp.id } })).body.code).toBe('authorization_error');
      expect((await call(t.url, 'POST', PROVISION, { body: { customer_id: tree.msp.id } })).status).toBe(401);
    });
  });

  describe('enrolment', () => {
    it('creates an active node on first registration, listed with every Node field', async () => {
      const prof = await profile(tree.childA.id, { updateChannel: 'dev' });
      const { res } = await enrol(
        { customer_id: tree.childA.id, machine_id: 'machine-list', description: 'SN-1', profile_id: prof.id },
        { localIp: '10.0.0.5', publicIp: '203.0.113.9', hardware: { cpu_cores: 4 } },
      );
      expect(res.data.registerCollector).toMatchObject({ status: 'active', machineId: 'machine-list', customerId: tree.childA.id });
      const list = await call(t.url, 'GET', '/rest/nodes/1.0', { token: tree.mspCaller.token });
      const node = list.body.nodes.find((n: { machine_id: string }) => n.machine_id === 'machine-list');
      expect(node).toEqual({
        node_id: res.data.registerCollector.nodeId,
        machine_id: 'machine-list',
        customer_id: tree.childA.id,
        customer_name: tree.childA.name,
        description: 'SN-1',
        status: 'active',
        profile_id: prof.id,
        profile_name: prof.name,
        network: { local_ip: '10.0.0.5', public_ip: '203.0.113.9' },
        connection: { control_plane: true, ingest: false },
        health: { status: 'healthy', last_seen_at: expect.any(String) },
        collector_version: '1.0.0',
        update_channel: 'dev',
        update_available: false,
        latest_version: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const withHardware = await call(t.url, 'GET', `/rest/nodes/1.0/${node.node_id}?hardware=true`, { token: tree.childACaller.token });
      expect(withHardware.body.hardware).toEqual({ cpu_cores: 4 });
      expect(withHardware.body).not.toHaveProperty('services');
      const withServices = await call(t.url, 'GET', `/rest/nodes/1.0?services=true`, { token: tree.childACaller.token });
      const delivered = withServices.body.nodes.find((n: { node_id: string }) => n.node_id === node.node_id).services;
      expect(delivered).toEqual(deliveredServices(prof.services));
      expect(delivered.packet.enabled).toEqual(expect.any(Boolean));
    });

    it('starts nodes of a fleet-staging profile as staged', async () => {
      const prof = await profile(tree.childA.id, { fleetStaging: true });
      const { res } = await enrol({ customer_id: tree.childA.id, machine_id: 'machine-staged', profile_id: prof.id });
      expect(res.data.registerCollector.status).toBe('staged');
    });

    it('enrols exactly one node when two collectors race with one credential', async () => {
      const provisioned = await call(t.url, 'POST', PROVISION, { token: tree.mspCaller.token, body: { customer_id: tree.childB.id } });
      const [clientId, secret] = provisioned.body.access_key.split('.');
      const token = (await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: clientId, client_secret: secret } })).body.access_token;
      const results = await Promise.all(
        ['race-a', 'race-b', 'race-a', 'race-b'].map((machineId) => graphql(t.url, register, { input: { machineId, hostname: machineId } }, token)),
      );
      const enrolled = results.filter((r) => r.data?.registerCollector).map((r) => r.data.registerCollector.machineId);
      expect(new Set(enrolled).size).toBe(1);
      expect(results.filter((r) => r.errors).every((r) => r.errors![0].extensions!.code === 'machine_mismatch')).toBe(true);
      const nodes = await t.app.db.prisma.node.findMany({ where: { customerId: tree.childB.id, machineId: { in: ['race-a', 'race-b'] } } });
      expect(nodes).toHaveLength(1);
    });

    it('refuses a credential bound to another machine, and tokens that are not enrolment credentials', async () => {
      const { res } = await enrol({ customer_id: tree.childA.id, machine_id: 'bound' }, { machineId: 'other' });
      expect(res.errors?.[0].extensions?.code).toBe('machine_mismatch');
      const plain = await seedCaller(t.app, tree.childA.id, ['p.token.scope.ingest']);
      const denied = await graphql(t.url, register, { input: { machineId: 'x' } }, plain.token);
      expect(denied.errors?.[0].extensions?.code).toBe('authorization_error');
    });
  });

  describe('GET /rest/nodes/1.0/{node_id}', () => {
    it("answers 404 not_found with error_type outside the caller's tree", async () => {
      const { res } = await enrol({ customer_id: tree.childA.id, machine_id: 'private' });
      const id = res.data.registerCollector.nodeId;
      expect((await call(t.url, 'GET', `/rest/nodes/1.0/${id}`, { token: tree.childACaller.token })).status).toBe(200);
      for (const [token, path] of [
        [other.mspCaller.token, id],
        [tree.childBCaller.token, id],
        [tree.mspCaller.token, 'node_missing'],
      ]) {
        const miss = await call(t.url, 'GET', `/rest/nodes/1.0/${path}`, { token });
        expect(miss.status).toBe(404);
        expect(miss.body).toMatchObject({ error: 'Node not found', error_type: 'not_found', code: 'not_found' });
      }
      const list = await call(t.url, 'GET', '/rest/nodes/1.0', { token: other.mspCaller.token });
      expect(list.body.nodes.map((n: { node_id: string }) => n.node_id)).not.toContain(id);
    });
  });

  describe('GET /rest/nodes/1.0/outdated', () => {
    it('lists nodes behind the latest release of their channel', async () => {
      const mk = (version: string) =>
        t.app.services.collector.publish({ file: Buffer.from(`binary ${version}`), version, channel: 'stable', os: 'linux', arch: 'arm7' });
      await mk('2.0.0');
      await mk('2.1.0');
      const { res } = await enrol({ customer_id: tree.childB.id, machine_id: 'old-arm' }, { arch: 'arm7', collectorVersion: '2.0.0' });
      await enrol({ customer_id: tree.childB.id, machine_id: 'new-arm' }, { arch: 'arm7', collectorVersion: '2.1.0' });
      const out = await call(t.url, 'GET', '/rest/nodes/1.0/outdated', { token: tree.mspCaller.token });
      expect(out.status).toBe(200);
      expect(out.body.nodes).toEqual([
        {
          node_id: res.data.registerCollector.nodeId,
          customer_id: tree.childB.id,
          status: 'active',
          collector_version: '2.0.0',
          latest_version: '2.1.0',
          update_channel: 'stable',
          arch: 'arm7',
          // Registered and heard from, but no control channel open: no update can be sent now.
          control_plane: false,
          health_status: 'healthy',
        },
      ]);
      expect(out.body.count).toBe(1);
      await t.app.db.prisma.node.update({ where: { id: res.data.registerCollector.nodeId }, data: { controlConnectedAt: new Date() } });
      const connected = await call(t.url, 'GET', '/rest/nodes/1.0/outdated', { token: tree.mspCaller.token });
      expect(connected.body.nodes[0].control_plane).toBe(true);
      expect((await call(t.url, 'GET', '/rest/nodes/1.0/outdated', { token: other.mspCaller.token })).body).toEqual({ count: 0, nodes: [] });
    });

    it('takes a release differing only in build metadata as the version the node runs', async () => {
      await t.app.services.collector.publish({
        file: Buffer.from('binary 1.2.0+build.5'),
        version: '1.2.0+build.5',
        channel: 'stable',
        os: 'darwin',
        arch: 'arm64',
      });
      const { res } = await enrol({ customer_id: tree.childA.id, machine_id: 'build-meta' }, { os: 'darwin', arch: 'arm64', collectorVersion: '1.2.0' });
      const nodeId = res.data.registerCollector.nodeId;
      const node = await call(t.url, 'GET', `/rest/nodes/1.0/${nodeId}`, { token: tree.mspCaller.token });
      expect(node.body).toMatchObject({ collector_version: '1.2.0', latest_version: '1.2.0+build.5', update_available: false });
      const outdated = await call(t.url, 'GET', '/rest/nodes/1.0/outdated', { token: tree.mspCaller.token });
      expect(outdated.body.nodes.map((n: { node_id: string }) => n.node_id)).not.toContain(nodeId);
      const update = await call(t.url, 'POST', `/rest/nodes/1.0/${nodeId}/update`, { token: tree.mspCaller.token });
      expect(update.body).toEqual({ node_id: nodeId, update_status: 'already_current', version: '1.2.0' });
    });
  });

  describe('POST /rest/oauth2/register/1.0 (legacy)', () => {
    it('returns the same legacy node for the same machine, and keeps legacy nodes out of the managed list', async () => {
      const ingest = await seedCaller(t.app, other.childB.id, ['p.token.scope.ingest']);
      const first = await call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: ingest.token, body: { machine_id: 'legacy-1', hostname: 'old' } });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ node_id: expect.stringMatching(/^node_/) });
      const again = await call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: ingest.token, body: { machine_id: 'legacy-1', hostname: 'renamed' } });
      expect(again.body.node_id).toBe(first.body.node_id);
      // The first registration is an enrolment (docs/events.md); the second is not.
      const events = await t.app.db.prisma.event.findMany({ where: { customerId: other.childB.id, subject: first.body.node_id } });
      expect(events.map((e) => [e.kind, (e.data as { enrolment?: string }).enrolment])).toEqual([['node_enrolled', 'legacy']]);
      const list = await call(t.url, 'GET', '/rest/nodes/1.0', { token: other.mspCaller.token });
      expect(list.body.nodes.map((n: { node_id: string }) => n.node_id)).not.toContain(first.body.node_id);
    });

    it('answers 400, 401 and 403 as documented', async () => {
      const ingest = await seedCaller(t.app, other.childB.id, ['p.token.scope.ingest']);
      const missing = await call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: ingest.token, body: { machine_id: 'x' } });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe('missing_required_fields');
      expect((await call(t.url, 'POST', '/rest/oauth2/register/1.0', { body: { machine_id: 'x', hostname: 'h' } })).status).toBe(401);
      const nodeApiOnly = await seedCaller(t.app, other.msp.id, ['p.token.scope.node_api']);
      const denied = await call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: nodeApiOnly.token, body: { machine_id: 'x', hostname: 'h' } });
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe('authorization_error');
    });

    it('refuses a machine_id or hostname with a lone surrogate or a control character, which would collapse into another', async () => {
      const ingest = await seedCaller(t.app, other.childB.id, ['p.token.scope.ingest']);
      for (const body of [
        { machine_id: 'm\ud800', hostname: 'h' },
        { machine_id: 'm', hostname: 'h\u0007' },
      ]) {
        const res = await call(t.url, 'POST', '/rest/oauth2/register/1.0', { token: ingest.token, body });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          code: 'invalid_request',
          message: expect.stringMatching(/^(machine_id|hostname) must not contain control characters/),
        });
      }
    });
  });

  it("lists one tenant of the caller's tree with collectorNodes(customerId:), 404 outside it", async () => {
    const own = await seedTree(t.app);
    const seed = (customerId: string, machineId: string) =>
      t.app.db.prisma.node.create({ data: { id: newId('node'), customerId, machineId, status: 'active' } });
    const [inMsp, inA, inB] = [await seed(own.msp.id, 'msp-1'), await seed(own.childA.id, 'a-1'), await seed(own.childB.id, 'b-1')];
    const LIST = 'query ($customerId: String) { collectorNodes(customerId: $customerId) { edges { node { nodeId } } } }';
    const ids = async (customerId?: string) => {
      const res = await graphql(t.url, LIST, customerId === undefined ? {} : { customerId }, own.mspCaller.token);
      expect(res.errors).toBeUndefined();
      return res.data.collectorNodes.edges.map((e: { node: { nodeId: string } }) => e.node.nodeId).sort();
    };
    expect(await ids(own.childA.id)).toEqual([inA.id]);
    // The parent named alone is the parent's own nodes, not its children's.
    expect(await ids(own.msp.id)).toEqual([inMsp.id]);
    expect(await ids()).toEqual([inMsp.id, inA.id, inB.id].sort());
    for (const [token, customerId] of [
      [own.mspCaller.token, other.childA.id],
      [own.childACaller.token, own.childB.id],
      [own.childACaller.token, own.msp.id],
      [own.mspCaller.token, 'cus_missing'],
    ]) {
      const miss = await graphql(t.url, LIST, { customerId }, token);
      expect(miss.errors?.[0]?.extensions?.code).toBe('not_found');
    }
  });

  it('lists 1,000 nodes over 20 children in one statement, their details read with them', async () => {
    const msp = await seedTenant(t.app, { msp: true });
    const caller = await seedCaller(t.app, msp.id);
    const children = await Promise.all(Array.from({ length: 20 }, () => seedTenant(t.app, { parentId: msp.id })));
    const profiles = await Promise.all(children.map((c, i) => profile(c.id, { updateChannel: i % 2 ? 'dev' : 'stable' })));
    const seedNodes = (count: number, offset: number) =>
      t.app.db.prisma.node.createMany({
        data: Array.from({ length: count }, (_, i) => ({
          id: newId('node'),
          customerId: children[(offset + i) % 20].id,
          machineId: `bulk-${offset + i}`,
          status: 'active',
          profileId: profiles[(offset + i) % 20].id,
          os: 'linux',
          arch: 'amd64',
          collectorVersion: '1.0.0',
        })),
      });
    const loads = vi.spyOn(DataLoader.prototype, 'load');
    const statementsFor = async (path: string) => {
      const before = t.app.db.stats.queries;
      loads.mockClear();
      const res = await call(t.url, 'GET', path, { token: caller.token });
      expect(res.status).toBe(200);
      return { statements: t.app.db.stats.queries - before, count: res.body.nodes.length, lookups: loads.mock.calls.length };
    };
    try {
      await seedNodes(10, 0);
      await statementsFor('/rest/nodes/1.0'); // warms the process-wide tenant tree cache
      const small = await statementsFor('/rest/nodes/1.0?services=true&hardware=true');
      await seedNodes(990, 10);
      const large = await statementsFor('/rest/nodes/1.0?services=true&hardware=true');
      expect(small.count).toBe(10);
      expect(large.count).toBe(1000);
      expect(small.statements).toBe(1);
      expect(large.statements).toBe(1);
      // Each field awaiting its own profile and release lookups was ~10 lookups per node, most of the list's time.
      expect(large.lookups).toBe(0);
    } finally {
      loads.mockRestore();
    }
  });
});
