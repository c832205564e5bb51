import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { graphql } from '../../test/kit/http.js';
import { seedCaller, seedTree } from '../../test/kit/seed.js';

describe('GraphQL tenant tree', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it('tells the viewer who it is', async () => {
    const res = await graphql(t.url, '{ viewer { customerId clientId scopes } viewerTenant { customerId type isMsp } }', {}, tree.mspCaller.token);
    expect(res.data).toEqual({
      viewer: { customerId: tree.msp.id, clientId: tree.mspCaller.clientId, scopes: expect.arrayContaining(['p.token.scope.deployment_api']) },
      viewerTenant: { customerId: tree.msp.id, type: 'msp', isMsp: true },
    });
  });

  it("pages the parent's deployments as a Relay connection", async () => {
    const query = `query($after: String) { viewerTenant { deployments(first: 1, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { customerId parentId parent { customerId } deployment { status } } } } } }`;
    const first = await graphql(t.url, query, {}, tree.mspCaller.token);
    const page1 = first.data.viewerTenant.deployments;
    expect(page1.totalCount).toBe(2);
    expect(page1.pageInfo.hasNextPage).toBe(true);
    expect(page1.edges[0].node).toEqual({
      customerId: tree.childA.id,
      parentId: tree.msp.id,
      parent: { customerId: tree.msp.id },
      deployment: { status: 'deployed' },
    });
    const second = await graphql(t.url, query, { after: page1.pageInfo.endCursor }, tree.mspCaller.token);
    expect(second.data.viewerTenant.deployments.edges.map((e: any) => e.node.customerId)).toEqual([tree.childB.id]);
    expect(second.data.viewerTenant.deployments.pageInfo.hasNextPage).toBe(false);
  });

  it.each([
    ['itself', () => tree.mspCaller.token, () => tree.msp.id, true],
    ['its child', () => tree.mspCaller.token, () => tree.childA.id, true],
    ['another tree', () => tree.mspCaller.token, () => other.msp.id, false],
    ["another tree's child", () => tree.mspCaller.token, () => other.childA.id, false],
    ['a missing id', () => tree.mspCaller.token, () => 'cus_missing', false],
    ['its parent (as a child)', () => tree.childACaller.token, () => tree.msp.id, false],
    ['its sibling (as a child)', () => tree.childACaller.token, () => tree.childB.id, false],
  ])('a caller sees %s: %s', async (_name, token, id, visible) => {
    const res = await graphql(t.url, 'query($id: String!) { tenant(customerId: $id) { customerId } }', { id: id() }, token());
    expect(res.errors).toBeUndefined();
    expect(res.data.tenant).toEqual(visible ? { customerId: id() } : null);
  });

  it.each([['search_api'], ['ingest']])('shows a %s-only token its own tenant, and its deployments only with deployment_api', async (scope) => {
    const token = (await seedCaller(t.app, tree.msp.id, [`p.token.scope.${scope}`])).token;
    const own = await graphql(t.url, 'query($id: String!) { viewerTenant { customerId } tenant(customerId: $id) { customerId } }', { id: tree.msp.id }, token);
    expect(own).toEqual({ data: { viewerTenant: { customerId: tree.msp.id }, tenant: { customerId: tree.msp.id } } });
    const refused = { code: 'authorization_error', details: { reason: 'insufficient_scope', required_scope: 'p.token.scope.deployment_api' } };
    const list = await graphql(t.url, '{ viewerTenant { customerId deployments { totalCount edges { node { customerId name } } } } }', {}, token);
    expect(list.data).toEqual({ viewerTenant: { customerId: tree.msp.id, deployments: null } });
    expect(list.errors).toEqual([expect.objectContaining({ path: ['viewerTenant', 'deployments'], extensions: expect.objectContaining(refused) })]);
    const child = await graphql(t.url, 'query($id: String!) { tenant(customerId: $id) { customerId name } }', { id: tree.childA.id }, token);
    expect(child.data).toEqual({ tenant: null });
    expect(child.errors).toEqual([expect.objectContaining({ path: ['tenant'], extensions: expect.objectContaining(refused) })]);
  });

  it("shows a child's own token no parent, so no sibling either", async () => {
    const query = '{ viewerTenant { customerId parentId parent { customerId deployments { edges { node { customerId } } } } } }';
    const res = await graphql(t.url, query, {}, tree.childACaller.token);
    expect(res.errors).toBeUndefined();
    expect(res.data.viewerTenant).toEqual({ customerId: tree.childA.id, parentId: tree.msp.id, parent: null });
    const profile = await graphql(
      t.url,
      'mutation { createProfile(input: { name: "p" }) { profile { customer { customerId parent { customerId } } } } }',
      {},
      tree.childACaller.token,
    );
    expect(profile.data.createProfile.profile.customer).toEqual({ customerId: tree.childA.id, parent: null });
  });

  it("shows a child's own token no parent through a profile read by id or listed either", async () => {
    const created = await graphql(t.url, 'mutation { createProfile(input: { name: "q" }) { profile { profileId } } }', {}, tree.childACaller.token);
    const id = created.data.createProfile.profile.profileId;
    const byId = 'query($id: String!) { profile(profileId: $id) { customer { customerId parent { customerId name } } } }';
    const listed = '{ profiles(first: 100) { edges { node { profileId customer { customerId parent { customerId name } } } } } }';
    expect((await graphql(t.url, byId, { id }, tree.childACaller.token)).data.profile.customer).toEqual({ customerId: tree.childA.id, parent: null });
    const page = await graphql(t.url, listed, {}, tree.childACaller.token);
    expect(page.data.profiles.edges.find((e: any) => e.node.profileId === id).node.customer).toEqual({ customerId: tree.childA.id, parent: null });
    // The parent's own token reads the same profile's parent: itself.
    const fromParent = await graphql(t.url, byId, { id }, tree.mspCaller.token);
    expect(fromParent.data.profile.customer.parent).toEqual({ customerId: tree.msp.id, name: tree.msp.name });
  });

  it('refuses deployments within deployments, the one cycle of the schema that fans out', async () => {
    const query = '{ viewerTenant { deployments { edges { node { customerId parent { deployments { totalCount } } } } } } }';
    const res = await graphql(t.url, query, {}, tree.mspCaller.token);
    expect(res.errors?.[0]).toMatchObject({ message: expect.stringMatching(/within deployments/), extensions: { code: 'invalid_request' } });
    expect(JSON.stringify(res.data)).not.toContain('totalCount');
  });

  it('answers unauthenticated queries with the authentication_error code', async () => {
    const res = await graphql(t.url, '{ viewer { customerId } }');
    expect(res.errors?.[0].extensions).toMatchObject({ code: 'authentication_error' });
  });
});
