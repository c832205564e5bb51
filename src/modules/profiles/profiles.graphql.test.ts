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
    const parents = await createAs(tree.mspCaller.token, { name: 'Parent\'s' });
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

  it('pages through the tree\'s profiles oldest first, with the total count', async () => {
    const caller = await seedTree(t.app);
    const made: string[] = [];
    for (const [token, name] of [
      [caller.mspCaller.token, 'p1'],
      [caller.childACaller.token, 'p2'],
      [caller.childBCaller.token, 'p3'],
      [caller.mspCaller.token, 'p4'],
      [caller.mspCaller.token, 'p5'],
    ]) made.push((await createAs(token, { name })).profileId);
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
