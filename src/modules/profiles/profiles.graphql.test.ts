import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { defaultServices } from './services-defaults.js';

const fields = `id profileId customerId name description services deliveredServices tags updateChannel autoUpdate fleetStaging createdAt updatedAt customer { customerId }`;
const create = `mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { ${fields} } } }`;
const remove = `mutation($id: String!) { deleteProfile(profileId: $id) { deleted { profileId } } }`;
const one = `query($id: String!) { profile(profileId: $id) { ${fields} } }`;
const list = `query($first: Int, $after: String) { profiles(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } edges { cursor node { profileId customerId } } } }`;
const page = `query($first: Int, $after: String, $last: Int, $before: String) {
  profiles(first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasPreviousPage hasNextPage startCursor endCursor } edges { cursor node { profileId } } } }`;
const node = `query($id: ID!) { node(id: $id) { id ... on Profile { profileId } } }`;

describe('GraphQL profiles follow the REST rules', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let otherTree: Awaited<ReturnType<typeof seedTree>>;

  const createAs = async (token: string, input: Record<string, unknown>) => {
    const res = await graphql(t.url, create, { input }, token);
    expect(res.errors).toBeUndefined();
    return res.data.createProfile.profile;
  };

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    otherTree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it('creates a profile with stored and delivered services side by side', async () => {
    const services = { packet: { lightweight: true, num_workers: 1, interface_patterns: [] }, netflow: { enabled: true } };
    const profile = await createAs(tree.mspCaller.token, { name: 'GQL', services, tags: ['a'], customerId: tree.childA.id });
    const expected = defaultServices();
    Object.assign(expected.packet, { lightweight: true, num_workers: 1 });
    expected.netflow.enabled = true;
    expect(profile).toMatchObject({
      profileId: expect.stringMatching(/^prof_/),
      customerId: tree.childA.id,
      name: 'GQL',
      description: null,
      services,
      deliveredServices: expected,
      tags: ['a'],
      updateChannel: 'stable',
      autoUpdate: true,
      fleetStaging: false,
      customer: { customerId: tree.childA.id },
    });
    expect(profile.deliveredServices.packet.interface_patterns).toEqual(['*']);
  });

  it('reads a profile as REST does: the same fields under camelCase names', async () => {
    const rest = await call(t.url, 'POST', '/rest/profiles/1.0', {
      token: tree.mspCaller.token,
      body: { name: 'Parity', description: 'd', tags: ['x'], services: { suricata_ids: { enabled: true } }, update_channel: 'dev', fleet_staging: true },
    });
    const p = rest.body.profile;
    const res = await graphql(t.url, one, { id: p.profile_id }, tree.mspCaller.token);
    expect(res.data.profile).toMatchObject({
      profileId: p.profile_id,
      customerId: p.customer_id,
      name: p.name,
      description: p.description,
      services: p.services,
      tags: p.tags,
      updateChannel: p.update_channel,
      autoUpdate: p.auto_update,
      fleetStaging: p.fleet_staging,
      createdAt: p.created_at,
      updatedAt: p.updated_at,
    });
  });

  it('answers profile(profileId) with null outside the tree and for missing ids', async () => {
    const foreign = await createAs(otherTree.mspCaller.token, { name: 'Foreign' });
    const parents = await createAs(tree.mspCaller.token, { name: "Parent's" });
    for (const [token, id] of [
      [tree.mspCaller.token, foreign.profileId],
      [tree.childACaller.token, parents.profileId],
      [tree.mspCaller.token, 'prof_missing'],
    ]) {
      const res = await graphql(t.url, one, { id }, token);
      expect(res.errors).toBeUndefined();
      expect(res.data.profile).toBeNull();
    }
    // An id with a NUL is refused at the door (graphql/nul-text.ts) instead.
    const nul = await graphql(t.url, one, { id: 'prof_\u0000' }, tree.mspCaller.token);
    expect(nul.errors?.[0].extensions).toMatchObject({ code: 'invalid_request' });
  });

  it('offers no global node(id) lookup that could bypass the tree', async () => {
    const res = await graphql(t.url, node, { id: 'UHJvZmlsZTpwcm9mX3g=' }, tree.mspCaller.token);
    expect(res.errors?.[0].message).toMatch(/Cannot query field "node"/);
  });

  it("pages through the tree's profiles oldest first, with the total count", async () => {
    const caller = await seedTree(t.app);
    const made: string[] = [];
    for (const [token, name] of [
      [caller.mspCaller.token, 'p1'],
      [caller.childACaller.token, 'p2'],
      [caller.childBCaller.token, 'p3'],
      [caller.mspCaller.token, 'p4'],
      [caller.mspCaller.token, 'p5'],
    ])
      made.push((await createAs(token, { name })).profileId);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await graphql(t.url, list, { first: 2, after }, caller.mspCaller.token);
      expect(res.errors).toBeUndefined();
      expect(res.data.profiles.totalCount).toBe(5);
      seen.push(...res.data.profiles.edges.map((e: { node: { profileId: string } }) => e.node.profileId));
      if (!res.data.profiles.pageInfo.hasNextPage) break;
      after = res.data.profiles.pageInfo.endCursor;
    }
    expect(seen).toEqual(made);
    const child = await graphql(t.url, list, {}, caller.childACaller.token);
    expect(child.data.profiles.totalCount).toBe(1);
  });

  describe('the profiles connection pages by position, not by row', () => {
    type Page = {
      totalCount: number;
      pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean; startCursor: string | null; endCursor: string | null };
      edges: Array<{ cursor: string; node: { profileId: string } }>;
    };
    const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

    /** A tree of its own with `n` profiles; their ids and cursors in list order. */
    const seedProfiles = async (n: number) => {
      const caller = await seedTree(t.app);
      for (let i = 0; i < n; i += 1) await createAs(caller.mspCaller.token, { name: `d${i}` });
      const read = async (variables: Record<string, unknown>) => {
        const res = await graphql<{ profiles: Page }>(t.url, page, variables, caller.mspCaller.token);
        expect(res.errors).toBeUndefined();
        const { edges, ...rest } = res.data!.profiles;
        return { ...rest, ids: edges.map((e) => e.node.profileId), edges };
      };
      const all = await read({});
      expect(all.ids).toHaveLength(n);
      return { caller, read, ids: all.ids, cursors: all.edges.map((e) => e.cursor) };
    };

    it('pages forward and backward with the right page info and total count', async () => {
      const { read, ids } = await seedProfiles(5);
      const everything = await read({});
      expect(everything).toMatchObject({ totalCount: 5, pageInfo: { hasPreviousPage: false, hasNextPage: false } });

      const f1 = await read({ first: 2 });
      expect(f1).toMatchObject({ ids: ids.slice(0, 2), totalCount: 5, pageInfo: { hasPreviousPage: false, hasNextPage: true } });
      expect(f1.pageInfo.startCursor).toBe(f1.edges[0].cursor);
      expect(f1.pageInfo.endCursor).toBe(f1.edges[1].cursor);
      const f2 = await read({ first: 2, after: f1.pageInfo.endCursor });
      expect(f2).toMatchObject({ ids: ids.slice(2, 4), totalCount: 5, pageInfo: { hasPreviousPage: true, hasNextPage: true } });
      const f3 = await read({ first: 2, after: f2.pageInfo.endCursor });
      expect(f3).toMatchObject({ ids: ids.slice(4), totalCount: 5, pageInfo: { hasPreviousPage: true, hasNextPage: false } });

      const b1 = await read({ last: 2 });
      expect(b1).toMatchObject({ ids: ids.slice(3), totalCount: 5, pageInfo: { hasPreviousPage: true, hasNextPage: false } });
      const b2 = await read({ last: 2, before: b1.pageInfo.startCursor });
      expect(b2).toMatchObject({ ids: ids.slice(1, 3), totalCount: 5, pageInfo: { hasPreviousPage: true, hasNextPage: true } });
      const b3 = await read({ last: 2, before: b2.pageInfo.startCursor });
      expect(b3).toMatchObject({ ids: ids.slice(0, 1), totalCount: 5, pageInfo: { hasPreviousPage: false, hasNextPage: true } });

      const none = await read({ first: 0 });
      expect(none).toMatchObject({ ids: [], pageInfo: { hasNextPage: true, startCursor: null, endCursor: null } });
    });

    it('continues past a cursor whose profile was deleted, forward and backward', async () => {
      const { caller, read, ids, cursors } = await seedProfiles(5);
      const [d0, d1, d2, d3, d4] = ids;
      const first = await read({ first: 2 });
      expect(first.ids).toEqual([d0, d1]);
      for (const id of [d1, d3]) expect((await graphql(t.url, remove, { id }, caller.mspCaller.token)).errors).toBeUndefined();

      // `after` a deleted profile: the rows strictly after where it stood.
      expect(await read({ first: 2, after: first.pageInfo.endCursor })).toMatchObject({
        ids: [d2, d4],
        totalCount: 3,
        pageInfo: { hasPreviousPage: true, hasNextPage: false },
      });
      expect(await read({ first: 1, after: cursors[1] })).toMatchObject({ ids: [d2], pageInfo: { hasNextPage: true } });
      // `before` a deleted profile: the rows strictly before where it stood.
      expect(await read({ last: 2, before: cursors[3] })).toMatchObject({
        ids: [d0, d2],
        totalCount: 3,
        pageInfo: { hasPreviousPage: false, hasNextPage: true },
      });
      expect(await read({ last: 1, before: cursors[3] })).toMatchObject({ ids: [d2], pageInfo: { hasPreviousPage: true } });

      // With nothing left on the cursor's far side, the page info says so.
      expect((await graphql(t.url, remove, { id: d0 }, caller.mspCaller.token)).errors).toBeUndefined();
      expect(await read({ first: 10, after: cursors[0] })).toMatchObject({
        ids: [d2, d4],
        totalCount: 2,
        pageInfo: { hasPreviousPage: false, hasNextPage: false },
      });
      expect(await read({ last: 10, before: cursors[1] })).toMatchObject({
        ids: [],
        totalCount: 2,
        pageInfo: { hasPreviousPage: false, hasNextPage: true },
      });
    });

    const good = base64('profile:2026-01-02T03:04:05.678Z:prof_xy'); // 40 bytes: padded
    it.each([
      ['a number', base64('GPC:N:5')],
      ['a null', base64('GPC:Z:')],
      ['an object', base64('GPC:O:{"id":"prof_x"}')],
      ['a date', base64('GPC:D:1')],
      ['a bigint', base64('GPC:I:5')],
      ['a tuple', base64('GPC:T:[]')],
      ['bytes', base64('GPC:B:AAEC')],
      ['an id alone (the cursor `t.prismaConnection` handed out)', base64('GPC:S:prof_x')],
      ['an impossible date', base64('profile:2026-13-02T03:04:05.678Z:prof_x')],
      ['a date without milliseconds', base64('profile:2026-01-02T03:04:05Z:prof_x')],
      ['no id', base64('profile:2026-01-02T03:04:05.678Z:')],
      ['a NUL in the id', base64('profile:2026-01-02T03:04:05.678Z:prof_\u0000')],
      ['bytes that are not UTF-8', Buffer.from([0x70, 0xff, 0xfe]).toString('base64')],
      ['a good cursor with stray base64 characters', `${good}!`],
      ['a good cursor without its padding', good.replace(/=+$/, '')],
      ['no base64 at all', 'zzz'],
    ])('answers a cursor holding %s with 400 invalid_request, before or after', async (_name, cursor) => {
      for (const variables of [
        { first: 2, after: cursor },
        { last: 2, before: cursor },
      ]) {
        const res = await call(t.url, 'POST', '/graphql', { token: tree.mspCaller.token, body: { query: page, variables } });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'invalid_request' });
      }
    });

    it.each([
      ['a negative first', { first: -1 }],
      ['a negative last', { last: -1 }],
      ['both cursors', { after: 'x', before: 'y' }],
      ['first with before', { first: 1, before: 'x' }],
      ['last with after', { last: 1, after: 'x' }],
    ])('answers %s with invalid_request', async (_name, variables) => {
      const res = await graphql(t.url, page, variables, tree.mspCaller.token);
      expect(res.errors?.[0].extensions).toMatchObject({ code: 'invalid_request' });
    });
  });

  it.each([
    ['a missing name', create, { input: {} }, 'missing_required_fields'],
    ['a bad service field', create, { input: { name: 'n', services: { packet: { num_workers: -1 } } } }, 'invalid_request'],
    ['an unknown service', create, { input: { name: 'n', services: { bogus: {} } } }, 'invalid_request'],
    ['an unknown update channel', create, { input: { name: 'n', updateChannel: 'beta' } }, 'invalid_request'],
    ['an owner outside the tree', create, { input: { name: 'n', customerId: 'cus_other' } }, 'unauthorized'],
    ['deleting a missing profile', remove, { id: 'prof_missing' }, 'not_found'],
  ])('answers %s with the same code as REST', async (_name, doc, variables, code) => {
    const res = await graphql(t.url, doc, variables, tree.mspCaller.token);
    expect(res.errors?.[0].extensions).toMatchObject({ code });
  });

  it("lists one tenant of the caller's tree with profiles(customerId:), 404 outside it", async () => {
    const own = await seedTree(t.app);
    const [inMsp, inA, inB] = await Promise.all([
      createAs(own.mspCaller.token, { name: 'Parent' }),
      createAs(own.mspCaller.token, { name: 'Child A', customerId: own.childA.id }),
      createAs(own.mspCaller.token, { name: 'Child B', customerId: own.childB.id }),
    ]);
    const ofTenant = `query($customerId: String) { profiles(customerId: $customerId) { totalCount edges { node { profileId } } } }`;
    const listed = async (customerId?: string) => {
      const res = await graphql(t.url, ofTenant, customerId === undefined ? {} : { customerId }, own.mspCaller.token);
      expect(res.errors).toBeUndefined();
      const ids = res.data.profiles.edges.map((e: { node: { profileId: string } }) => e.node.profileId).sort();
      return { total: res.data.profiles.totalCount, ids };
    };
    expect(await listed(own.childA.id)).toEqual({ total: 1, ids: [inA.profileId] });
    expect(await listed(own.msp.id)).toEqual({ total: 1, ids: [inMsp.profileId] });
    expect(await listed()).toEqual({ total: 3, ids: [inMsp.profileId, inA.profileId, inB.profileId].sort() });
    for (const [token, customerId] of [
      [own.mspCaller.token, otherTree.childA.id],
      [own.childACaller.token, own.childB.id],
      [own.mspCaller.token, 'cus_missing'],
    ]) {
      const miss = await graphql(t.url, ofTenant, { customerId }, token);
      expect(miss.errors?.[0]?.extensions?.code).toBe('not_found');
    }
  });

  it('names the field at fault in the message', async () => {
    const res = await graphql(t.url, create, { input: { name: 'n', services: { packet: { num_workers: 'four' } } } }, tree.mspCaller.token);
    expect(res.errors?.[0].message).toBe('services.packet.num_workers must be a non-negative integer');
    expect(res.errors?.[0].extensions?.details).toEqual({
      errors: [{ field: 'services.packet.num_workers', message: 'services.packet.num_workers must be a non-negative integer' }],
    });
  });

  it('deletes a profile in the tree, then answers not_found', async () => {
    const doomed = await createAs(tree.childACaller.token, { name: 'Doomed' });
    const res = await graphql(t.url, remove, { id: doomed.profileId }, tree.mspCaller.token);
    expect(res.data.deleteProfile).toEqual({ deleted: { profileId: doomed.profileId } });
    const again = await graphql(t.url, remove, { id: doomed.profileId }, tree.mspCaller.token);
    expect(again.errors?.[0].extensions).toMatchObject({ code: 'not_found' });
  });

  it('requires the node_api scope for every operation', async () => {
    const narrow = await seedCaller(t.app, tree.msp.id, [Scopes.deploymentApi]);
    for (const [doc, variables] of [
      [list, {}],
      [one, { id: 'prof_x' }],
      [create, { input: { name: 'n' } }],
      [remove, { id: 'prof_x' }],
    ] as const) {
      const res = await graphql(t.url, doc, variables, narrow.token);
      expect(res.errors?.[0].extensions).toMatchObject({ code: 'authorization_error' });
    }
  });
});
