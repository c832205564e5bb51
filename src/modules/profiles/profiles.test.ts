import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { newId } from '../../infra/ids.js';

const PATH = '/rest/profiles/1.0';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** wire.md 12.4: the SDK's lightweight edge preset, exactly as it serializes it. */
const LIGHTWEIGHT = {
  packet: { enabled: true, interface_patterns: ['eth*'], inspection: false, payload: false, lightweight: true, process_ids: false, num_workers: 1 },
};

/** Every field the SDK can send (wire.md 12.4), each set to a non-default value. */
const FULL = {
  packet: {
    enabled: false,
    interface_patterns: ['eth*', 'ens?', 'bond0'],
    inspection: false,
    payload: true,
    lightweight: true,
    ephemeral: true,
    afpacket: true,
    gre: true,
    process_ids: false,
    num_workers: 4,
    num_spoolers: 2,
    packet_buffer_length: 4096,
    afpacket_block_size: 2 * 1024 * 1024,
    afpacket_num_blocks: 32,
    packet_buffer_timeout_ms: 250,
    max_spooled_files: 10,
    max_spooled_file_size: 8 * 1024 * 1024,
    ingest_stream_interval: 30,
  },
  netflow: { enabled: true, port: 9995 },
  suricata_logs: { enabled: true },
  suricata_ids: { enabled: true },
  host_logs: { enabled: true, excluded_sources: ['auth', 'kern'] },
};

const profileShape = {
  profile_id: expect.stringMatching(/^prof_[a-z2-7]+$/),
  customer_id: expect.stringMatching(/^cus_/),
  name: expect.any(String),
  description: null,
  services: {},
  tags: [],
  update_channel: 'stable',
  auto_update: true,
  fleet_staging: false,
  created_at: expect.stringMatching(ISO_MS),
  updated_at: expect.stringMatching(ISO_MS),
};

describe('profiles REST paths', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let otherTree: Awaited<ReturnType<typeof seedTree>>;

  const create = async (token: string, body: Record<string, unknown>) => {
    const res = await call(t.url, 'POST', PATH, { token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.profile as { profile_id: string; customer_id: string; [k: string]: unknown };
  };
  const ids = (body: { profiles: Array<{ profile_id: string }> }) => body.profiles.map((p) => p.profile_id);

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    otherTree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  describe('authentication and scope', () => {
    it.each([
      ['GET', PATH],
      ['POST', PATH],
      ['DELETE', `${PATH}/prof_anything`],
    ])('%s answers 401 authentication_error without a token or with a bad one', async (method, path) => {
      for (const token of [undefined, 'not-a-jwt']) {
        const res = await call(t.url, method, path, { token, body: { name: 'x' } });
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ error: 'authentication_error', code: 'authentication_error', message: expect.any(String) });
      }
    });

    it.each([
      ['GET', PATH],
      ['POST', PATH],
      ['DELETE', `${PATH}/prof_anything`],
    ])('%s answers 403 authorization_error without the node_api scope', async (method, path) => {
      const narrow = await seedCaller(t.app, tree.msp.id, [Scopes.deploymentApi, Scopes.searchApi]);
      const res = await call(t.url, method, path, { token: narrow.token, body: { name: 'x' } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'authorization_error', code: 'authorization_error' });
    });

    it('creates nothing when the scope is missing', async () => {
      const narrow = await seedCaller(t.app, tree.childB.id, [Scopes.deploymentApi]);
      await call(t.url, 'POST', PATH, { token: narrow.token, body: { name: 'never' } });
      expect(await t.app.db.prisma.profile.count({ where: { customerId: tree.childB.id, name: 'never' } })).toBe(0);
    });
  });

  describe('POST', () => {
    it("accepts the SDK's minimal body and answers 201 with the defaults, nothing filled into services", async () => {
      const res = await call(t.url, 'POST', PATH, {
        token: tree.mspCaller.token,
        rawBody: '{"name": "G", "update_channel": "stable", "fleet_staging": false}',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'success', profile: { ...profileShape, name: 'G', customer_id: tree.msp.id } });
      const row = await t.app.db.prisma.profile.findUniqueOrThrow({ where: { id: res.body.profile.profile_id } });
      expect(row.services).toEqual({});
    });

    it('stores the lightweight edge preset exactly as submitted', async () => {
      const profile = await create(tree.mspCaller.token, { name: 'Edge', update_channel: 'stable', fleet_staging: false, services: LIGHTWEIGHT });
      expect(profile.services).toEqual(LIGHTWEIGHT);
      const row = await t.app.db.prisma.profile.findUniqueOrThrow({ where: { id: profile.profile_id } });
      expect(row.services).toEqual(LIGHTWEIGHT);
    });

    it('stores the preset with no interfaces (`[]`) as submitted', async () => {
      const services = { packet: { ...LIGHTWEIGHT.packet, interface_patterns: [] } };
      expect((await create(tree.mspCaller.token, { name: 'Edge, any port', services })).services).toEqual(services);
    });

    it('accepts every field of every block, and every top-level field', async () => {
      const body = {
        name: 'Full ☃ profile',
        update_channel: 'pinned',
        fleet_staging: true,
        description: 'Line one\nLine two\twith a tab — ünïcödé',
        services: FULL,
        tags: ['edge', 'site:zürich', '☃'],
        auto_update: false,
      };
      const profile = await create(tree.mspCaller.token, body);
      expect(profile).toEqual({
        ...profileShape,
        customer_id: tree.msp.id,
        name: body.name,
        description: body.description,
        services: FULL,
        tags: body.tags,
        update_channel: 'pinned',
        auto_update: false,
        fleet_staging: true,
      });
    });

    it('keeps empty blocks and explicit zeros (key order is not kept: PostgreSQL jsonb normalises it)', async () => {
      const services = { host_logs: {}, packet: { num_workers: 0, enabled: true } };
      const profile = await create(tree.mspCaller.token, { name: 'Order', services });
      expect(profile.services).toStrictEqual(services);
    });

    it.each(['stable', 'dev', 'pinned'])('accepts update_channel %s', async (channel) => {
      expect((await create(tree.mspCaller.token, { name: `ch ${channel}`, update_channel: channel })).update_channel).toBe(channel);
    });

    it('trims the name and accepts 200 characters counted as code points', async () => {
      expect((await create(tree.mspCaller.token, { name: '  padded  ' })).name).toBe('padded');
      expect((await create(tree.mspCaller.token, { name: '☃'.repeat(200) })).name).toBe('☃'.repeat(200));
      expect((await create(tree.mspCaller.token, { name: '😀'.repeat(200) })).name).toHaveLength(400);
    });

    it('treats null optional fields as absent', async () => {
      const profile = await create(tree.mspCaller.token, {
        name: 'Nulls',
        description: null,
        services: null,
        tags: null,
        update_channel: null,
        fleet_staging: null,
        auto_update: null,
        customer_id: null,
      });
      expect(profile).toEqual({ ...profileShape, name: 'Nulls', customer_id: tree.msp.id });
    });

    it('ignores unknown top-level fields', async () => {
      const profile = await create(tree.mspCaller.token, { name: 'Extra', colour: 'blue' });
      expect(profile).not.toHaveProperty('colour');
    });

    describe('customer_id', () => {
      it('creates for a child of the caller, and defaults to the caller', async () => {
        expect((await create(tree.mspCaller.token, { name: 'For A', customer_id: tree.childA.id })).customer_id).toBe(tree.childA.id);
        expect((await create(tree.mspCaller.token, { name: 'For me', customer_id: tree.msp.id })).customer_id).toBe(tree.msp.id);
        expect((await create(tree.childACaller.token, { name: 'Mine' })).customer_id).toBe(tree.childA.id);
      });

      it.each([
        ['a child for its parent', () => tree.childACaller.token, () => tree.msp.id],
        ['a child for its sibling', () => tree.childACaller.token, () => tree.childB.id],
        ['a parent for another tree', () => tree.mspCaller.token, () => otherTree.msp.id],
        ["a parent for another tree's child", () => tree.mspCaller.token, () => otherTree.childA.id],
        ['a missing customer', () => tree.mspCaller.token, () => 'cus_missing'],
        ['a unicode id', () => tree.mspCaller.token, () => 'cüs_☃'],
      ])('answers 403 unauthorized for %s', async (_name, token, customerId) => {
        const res = await call(t.url, 'POST', PATH, { token: token(), body: { name: 'Nope', customer_id: customerId() } });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ error: 'unauthorized', code: 'unauthorized', message: expect.any(String) });
      });
    });

    it.each([
      ['an empty body', {}],
      ['null', { name: null }],
      ['empty', { name: '' }],
      ['blank', { name: ' \t ' }],
      ['absent with everything else set', { update_channel: 'stable', fleet_staging: false, services: LIGHTWEIGHT }],
    ])('answers 400 missing_required_fields for a name that is %s', async (_name, body) => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'missing_required_fields', code: 'missing_required_fields', message: expect.stringContaining('name') });
    });

    it('answers a body-less POST with missing_required_fields', async () => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, headers: { 'content-length': '0' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('missing_required_fields');
    });

    const big = 'x'.repeat(300);
    it.each<[string, Record<string, unknown>, string]>([
      // Top-level types (refused by GraphQL input coercion or by the validator).
      ['a numeric name', { name: 5 }, 'name'],
      ['an array name', { name: ['a'] }, 'name'],
      ['an object name', { name: { a: 1 } }, 'name'],
      ['a boolean name', { name: true }, 'name'],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name must be at most 200 characters'],
      ['a name with a control character', { name: 'a\u0007b' }, 'name must not contain control characters'],
      ['a name with a newline', { name: 'a\nb' }, 'name must not contain control characters'],
      ['a name with a lone surrogate', { name: 'a\ud800b' }, 'name must not contain control characters'],
      ['a numeric description', { name: 'n', description: 5 }, 'description'],
      ['a description over 2000 characters', { name: 'n', description: 'd'.repeat(2001) }, 'description must be at most 2000 characters'],
      ['a description with a control character', { name: 'n', description: 'a\u001b' }, 'description must not contain control characters'],
      ['a numeric tag', { name: 'n', tags: [1] }, 'tags'],
      ['a null tag', { name: 'n', tags: ['a', null] }, 'tags'],
      ['an object for tags', { name: 'n', tags: { a: 1 } }, 'tags'],
      ['51 tags', { name: 'n', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags must have at most 50 entries'],
      ['a 65-character tag', { name: 'n', tags: ['ok', 't'.repeat(65)] }, 'tags[1] must be a non-empty string of at most 64'],
      ['an empty tag', { name: 'n', tags: [''] }, 'tags[0] must be a non-empty string'],
      ['a tag with NUL', { name: 'n', tags: ['a\u0000'] }, 'tags[0]'],
      ['an unknown update_channel', { name: 'n', update_channel: 'beta' }, 'update_channel must be one of stable, dev, pinned'],
      ['an upper-case update_channel', { name: 'n', update_channel: 'STABLE' }, 'update_channel must be one of'],
      ['a numeric update_channel', { name: 'n', update_channel: 1 }, 'update_channel must be a string'],
      ['a string fleet_staging', { name: 'n', fleet_staging: 'false' }, 'fleet_staging must be a boolean'],
      ['a numeric fleet_staging', { name: 'n', fleet_staging: 0 }, 'fleet_staging must be a boolean'],
      ['a string auto_update', { name: 'n', auto_update: 'yes' }, 'auto_update must be a boolean'],
      ['a numeric customer_id', { name: 'n', customer_id: 7 }, 'customer_id must be a string'],
      ['a single string for tags', { name: 'n', tags: 'edge' }, 'tags must be an array'],
      ['a number among the tags', { name: 'n', tags: ['a', 2] }, 'tags[1] must be a string'],
      // services
      ['a string services', { name: 'n', services: 'packet' }, 'services must be an object, not a string'],
      ['an array services', { name: 'n', services: [] }, 'services must be an object, not an array'],
      ['a numeric services', { name: 'n', services: 3 }, 'services must be an object, not a number'],
      ['an unknown service', { name: 'n', services: { packets: {} } }, 'services.packets is not a known service'],
      ['a prototype-named service', { name: 'n', services: { toString: {} } }, 'services.toString is not a known service'],
      ['a block that is a string', { name: 'n', services: { packet: 'on' } }, 'services.packet must be an object, not a string'],
      ['a null block', { name: 'n', services: { netflow: null } }, 'services.netflow must be an object, not null'],
      ['a block that is a boolean', { name: 'n', services: { suricata_ids: true } }, 'services.suricata_ids must be an object, not a boolean'],
      ['an unknown packet field', { name: 'n', services: { packet: { interfaces: ['eth0'] } } }, 'services.packet.interfaces is not a known field of packet'],
      ['a prototype-named field', { name: 'n', services: { packet: { constructor: true } } }, 'services.packet.constructor is not a known field'],
      ['a netflow field on suricata_logs', { name: 'n', services: { suricata_logs: { port: 1 } } }, 'services.suricata_logs.port is not a known field'],
      ['a string boolean', { name: 'n', services: { packet: { enabled: 'true' } } }, 'services.packet.enabled must be a boolean'],
      ['a numeric boolean', { name: 'n', services: { host_logs: { enabled: 1 } } }, 'services.host_logs.enabled must be a boolean'],
      ['a null field', { name: 'n', services: { packet: { inspection: null } } }, 'services.packet.inspection must be a boolean'],
      ['a negative num_workers', { name: 'n', services: { packet: { num_workers: -1 } } }, 'services.packet.num_workers must be a non-negative integer'],
      ['a fractional num_workers', { name: 'n', services: { packet: { num_workers: 1.5 } } }, 'services.packet.num_workers must be a non-negative integer'],
      ['a string num_workers', { name: 'n', services: { packet: { num_workers: '4' } } }, 'services.packet.num_workers must be a non-negative integer'],
      [
        'a huge num_workers',
        { name: 'n', services: { packet: { num_workers: 1e9 } } },
        'services.packet.num_workers must be a non-negative integer between 0 and 256',
      ],
      [
        'a zero afpacket_num_blocks',
        { name: 'n', services: { packet: { afpacket_num_blocks: 0 } } },
        'services.packet.afpacket_num_blocks must be an integer between 1 and 65536',
      ],
      [
        'an oversize max_spooled_file_size',
        { name: 'n', services: { packet: { max_spooled_file_size: 2 ** 31 } } },
        'services.packet.max_spooled_file_size must be an integer between',
      ],
      ['a netflow port of 0', { name: 'n', services: { netflow: { port: 0 } } }, 'services.netflow.port must be an integer between 1 and 65535'],
      ['a netflow port of 65536', { name: 'n', services: { netflow: { port: 65536 } } }, 'services.netflow.port must be an integer between 1 and 65535'],
      [
        'a string interface_patterns',
        { name: 'n', services: { packet: { interface_patterns: 'eth0' } } },
        'services.packet.interface_patterns must be an array of strings',
      ],
      [
        'a numeric pattern',
        { name: 'n', services: { packet: { interface_patterns: ['eth0', 1] } } },
        'services.packet.interface_patterns[1] must be a non-empty string',
      ],
      ['an empty pattern', { name: 'n', services: { packet: { interface_patterns: [''] } } }, 'services.packet.interface_patterns[0]'],
      [
        'a 129-character pattern',
        { name: 'n', services: { packet: { interface_patterns: ['e'.repeat(129)] } } },
        'services.packet.interface_patterns[0] must be a non-empty string of at most 128',
      ],
      [
        '33 patterns',
        { name: 'n', services: { packet: { interface_patterns: Array.from({ length: 33 }, (_, i) => `eth${i}`) } } },
        'services.packet.interface_patterns must have at most 32 entries',
      ],
      ['a pattern with NUL', { name: 'n', services: { packet: { interface_patterns: ['eth\u00000'] } } }, 'services.packet.interface_patterns[0]'],
      [
        'a string excluded_sources',
        { name: 'n', services: { host_logs: { excluded_sources: 'auth' } } },
        'services.host_logs.excluded_sources must be an array of strings',
      ],
      ['an over-long unknown key', { name: 'n', services: { [big]: {} } }, `services.${'x'.repeat(64)}… is not a known service`],
    ])('answers 400 invalid_request for %s', async (_name, body, message) => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
      expect(res.body.message).toContain(message);
      expect(res.body.message).not.toContain(big);
    });

    it('refuses the whole request when the body names `__proto__` as a service', async () => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, rawBody: '{"name":"p","services":{"__proto__":{"enabled":true}}}' });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('services.__proto__ is not a known service');
    });

    it('reports every problem at once, capped at 20', async () => {
      const res = await call(t.url, 'POST', PATH, {
        token: tree.mspCaller.token,
        body: { name: 'n', update_channel: 'beta', tags: [''], services: { packet: { enabled: 1, num_workers: -1 }, bogus: {} } },
      });
      expect(res.status).toBe(400);
      for (const field of ['update_channel', 'tags[0]', 'services.packet.enabled', 'services.packet.num_workers', 'services.bogus']) {
        expect(res.body.message).toContain(field);
      }
      const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`s${i}`, {}]));
      const capped = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { name: 'n', services: many } });
      expect(capped.status).toBe(400);
      expect(capped.body.message.split('; ')).toHaveLength(21);
      expect(capped.body.message).toMatch(/and 10 more$/);
    });

    it('answers 400 for a body that is not a JSON object', async () => {
      for (const rawBody of ['{"name":', '["name"]', '"G"', 'null']) {
        const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, rawBody });
        expect(res.status, rawBody).toBe(400);
      }
    });

    it('never stores a rejected profile', async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      await call(t.url, 'POST', PATH, { token: caller.token, body: { name: 'bad', services: { packet: { num_workers: -1 } } } });
      const list = await call(t.url, 'GET', PATH, { token: caller.token });
      expect(list.body).toEqual({ status: 'success', profiles: [], count: 0 });
    });
  });

  describe('GET', () => {
    let own: string;
    let childA: string;
    let childB: string;
    let foreign: string;

    beforeAll(async () => {
      own = (await create(tree.mspCaller.token, { name: 'List own' })).profile_id;
      childA = (await create(tree.childACaller.token, { name: 'List A' })).profile_id;
      childB = (await create(tree.mspCaller.token, { name: 'List B', customer_id: tree.childB.id })).profile_id;
      foreign = (await create(otherTree.mspCaller.token, { name: 'List foreign' })).profile_id;
    });

    it("lists the caller's and its children's profiles, oldest first, with the count", async () => {
      const res = await call(t.url, 'GET', PATH, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      expect(ids(res.body)).toEqual(expect.arrayContaining([own, childA, childB]));
      expect(ids(res.body)).not.toContain(foreign);
      expect(res.body.count).toBe(res.body.profiles.length);
      const order = ids(res.body);
      expect(order.indexOf(own)).toBeLessThan(order.indexOf(childA));
      expect(order.indexOf(childA)).toBeLessThan(order.indexOf(childB));
      const times = res.body.profiles.map((p: { created_at: string }) => p.created_at);
      expect([...times].sort()).toEqual(times);
      for (const profile of res.body.profiles) expect(profile).toEqual({ ...profileShape, ...profile, created_at: expect.stringMatching(ISO_MS) });
      for (const profile of res.body.profiles) expect(Object.keys(profile).sort()).toEqual(Object.keys(profileShape).sort());
    });

    it("gives a child only its own profiles (not its parent's or its sibling's)", async () => {
      const res = await call(t.url, 'GET', PATH, { token: tree.childACaller.token });
      expect(ids(res.body)).toContain(childA);
      expect(ids(res.body)).not.toContain(own);
      expect(ids(res.body)).not.toContain(childB);
      expect(res.body.profiles.every((p: { customer_id: string }) => p.customer_id === tree.childA.id)).toBe(true);
    });

    it('gives another tree none of them', async () => {
      const res = await call(t.url, 'GET', PATH, { token: otherTree.mspCaller.token });
      expect(ids(res.body)).toContain(foreign);
      expect(ids(res.body).some((id: string) => [own, childA, childB].includes(id))).toBe(false);
    });

    it('answers an empty list (never null) for a tenant without profiles, tolerating a JSON content type and a query string', async () => {
      const lone = await seedTenant(t.app);
      const caller = await seedCaller(t.app, lone.id);
      const res = await call(t.url, 'GET', `${PATH}?services=true`, { token: caller.token, headers: { 'content-length': '0' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'success', profiles: [], count: 0 });
    });
  });

  describe('DELETE', () => {
    it('deletes an own profile (200 with the id), after which it is gone', async () => {
      const { profile_id } = await create(tree.mspCaller.token, { name: 'Doomed' });
      const res = await call(t.url, 'DELETE', `${PATH}/${profile_id}`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'success', deleted: { profile_id } });
      expect(ids((await call(t.url, 'GET', PATH, { token: tree.mspCaller.token })).body)).not.toContain(profile_id);
      const again = await call(t.url, 'DELETE', `${PATH}/${profile_id}`, { token: tree.mspCaller.token });
      expect(again.status).toBe(404);
      expect(again.body).toMatchObject({ error: 'not_found', code: 'not_found', message: expect.any(String) });
    });

    it("takes the SDK's body-less DELETE: Content-Type application/json with Content-Length 0", async () => {
      const { profile_id } = await create(tree.mspCaller.token, { name: 'Body-less' });
      const res = await call(t.url, 'DELETE', `${PATH}/${profile_id}`, {
        token: tree.mspCaller.token,
        headers: { 'content-type': 'application/json', 'content-length': '0' },
      });
      expect(res.status).toBe(200);
      expect(res.body.deleted.profile_id).toBe(profile_id);
    });

    it("lets a parent delete a child's profile", async () => {
      const { profile_id } = await create(tree.childACaller.token, { name: 'Child owned' });
      expect((await call(t.url, 'DELETE', `${PATH}/${profile_id}`, { token: tree.mspCaller.token })).status).toBe(200);
    });

    it.each([
      ["a child deleting its parent's profile", () => tree.childACaller.token, () => tree.mspCaller.token],
      ["a child deleting its sibling's profile", () => tree.childACaller.token, () => tree.childBCaller.token],
      ["a parent deleting another tree's profile", () => tree.mspCaller.token, () => otherTree.mspCaller.token],
      ["a parent deleting another tree's child's profile", () => tree.mspCaller.token, () => otherTree.childACaller.token],
    ])('answers 404 not_found for %s, and leaves it in place', async (_name, token, ownerToken) => {
      const { profile_id } = await create(ownerToken(), { name: 'Not yours' });
      const res = await call(t.url, 'DELETE', `${PATH}/${profile_id}`, { token: token() });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
      expect(await t.app.db.prisma.profile.count({ where: { id: profile_id } })).toBe(1);
    });

    it.each([
      ['a missing id', 'prof_missing'],
      ['a unicode id', encodeURIComponent('prof_☃')],
      ['an id with an encoded NUL', 'prof_%00'],
      ['an encoded slash', 'a%2Fb'],
      ['a very long id', 'p'.repeat(4000)],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const res = await call(t.url, 'DELETE', `${PATH}/${id}`, { token: tree.mspCaller.token });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    });

    it('answers 405 for DELETE without an id', async () => {
      const res = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token });
      expect(res.status).toBe(405);
    });

    it('leaves nodes and enrolment credentials that used the profile in place, without a profile', async () => {
      const { profile_id } = await create(tree.mspCaller.token, { name: 'In use' });
      const prisma = t.app.db.prisma;
      const client = await t.app.services.clients.create({ customerId: tree.childA.id, scopes: [] });
      await prisma.enrolmentCredential.create({
        data: { clientId: client.client_id, customerId: tree.childA.id, kind: 'provision', profileId: profile_id },
      });
      const node = await prisma.node.create({
        data: { id: newId('node'), customerId: tree.childA.id, status: 'active', profileId: profile_id },
      });
      expect((await call(t.url, 'DELETE', `${PATH}/${profile_id}`, { token: tree.mspCaller.token })).status).toBe(200);
      expect((await prisma.node.findUniqueOrThrow({ where: { id: node.id } })).profileId).toBeNull();
      expect((await prisma.enrolmentCredential.findUniqueOrThrow({ where: { clientId: client.client_id } })).profileId).toBeNull();
    });
  });
});
