import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

const create = `mutation($input: CreateDeploymentInput!) { createDeployment(input: $input) {
  customer { customerId handle type parentId orgCode deployment { status } } org { code name handle } } }`;
const remove = `mutation($input: DeleteDeploymentInput!) { deleteDeployment(input: $input) { message deleted { customerId name handle } } }`;

describe('GraphQL deployment mutations follow the REST rules', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it('creates and deletes a deployment', async () => {
    const created = await graphql(t.url, create, { input: { name: 'GQL Child', handle: 'GQL Child', parentId: tree.msp.id } }, tree.mspCaller.token);
    const customer = created.data.createDeployment.customer;
    expect(customer).toMatchObject({ handle: 'gql_child', type: 'child', parentId: tree.msp.id, deployment: { status: 'deployed' } });
    expect(created.data.createDeployment.org).toEqual({ code: customer.orgCode, name: 'GQL Child', handle: 'gql_child' });
    const deleted = await graphql(t.url, remove, { input: { customerId: customer.customerId, parentId: tree.msp.id } }, tree.mspCaller.token);
    expect(deleted.data.deleteDeployment.deleted).toEqual({ customerId: customer.customerId, name: 'GQL Child', handle: 'gql_child' });
  });

  it.each([
    ['missing fields', create, { input: {} }, 'missing_required_fields'],
    ['a foreign parent', create, { input: { name: 'n', handle: 'h', parentId: 'cus_other' } }, 'unauthorized'],
    ['deleting a missing child', remove, { input: { customerId: 'cus_missing', parentId: '$self' } }, 'deployment_not_found'],
  ])('answers %s with the same code as REST', async (_name, doc, variables, code) => {
    const input = { ...variables.input } as Record<string, unknown>;
    if (input.parentId === '$self') input.parentId = tree.msp.id;
    const res = await graphql(t.url, doc, { input }, tree.mspCaller.token);
    expect(res.errors?.[0].extensions).toMatchObject({ code });
  });

  it('issues tokens through the issueToken mutation', async () => {
    const res = await graphql(t.url, 'mutation($id: String, $s: String) { issueToken(clientId: $id, clientSecret: $s) { accessToken tokenType expiresIn } }', {
      id: tree.mspCaller.clientId,
      s: tree.mspCaller.clientSecret,
    });
    expect(res.data.issueToken).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600 });
  });
});
