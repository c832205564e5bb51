import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { insertFlowBatch } from '../../flowstore/index.js';

const PATH = '/rest/deployments/1.0';
const flow = { '@timestamp': Date.now(), src: { ip: '10.0.0.1' }, dst: { ip: '8.8.8.8', port: 53 } };
const deploymentShape = {
  customer_id: expect.stringMatching(/^cus_/),
  name: expect.any(String),
  handle: expect.stringMatching(/^[a-z0-9_]+$/),
  type: 'child',
  parent: expect.any(String),
  subdomain: null,
  org_code: expect.stringMatching(/^org_/),
  deployment: { status: 'deployed' },
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
};

describe('deployments REST paths', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let otherTree: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    otherTree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  const count = async (customerId: string) =>
    (await t.app.flows.query<{ n: number }>('/* test_count */ SELECT count() AS n FROM flows WHERE customer_id = {c:String}', { c: customerId }))[0].n;
  const mutationsNaming = async (customerId: string) =>
    (
      await t.app.flows.query<{ n: number }>(
        "/* test_mutations */ SELECT count() AS n FROM system.mutations WHERE table = 'flows' AND position(command, {c:String}) > 0",
        {
          c: `'${customerId}'`,
        },
      )
    )[0].n;

  describe('GET', () => {
    it("lists the caller's children with the parent summary and count", async () => {
      const res = await call(t.url, 'GET', PATH, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        parent: { customer_id: tree.msp.id, name: tree.msp.name, handle: tree.msp.handle },
        deployments: [
          { ...deploymentShape, customer_id: tree.childA.id, parent: tree.msp.id },
          { ...deploymentShape, customer_id: tree.childB.id, parent: tree.msp.id },
        ],
        count: 2,
      });
    });

    it('accepts parent_id equal to the caller, and an empty JSON body with the JSON content type', async () => {
      const res = await call(t.url, 'GET', `${PATH}?parent_id=${tree.msp.id}`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(2);
    });

    it('gives a child (not a parent) an empty list of its own', async () => {
      const res = await call(t.url, 'GET', PATH, { token: tree.childACaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ parent: { customer_id: tree.childA.id }, deployments: [], count: 0 });
    });

    it.each([
      ['a child of the caller', () => tree.childA.id],
      ['another tree', () => otherTree.msp.id],
      ['a missing customer', () => 'cus_missing'],
      ['a unicode id', () => 'cüs_☃'],
    ])('answers 403 unauthorized for parent_id of %s', async (_name, id) => {
      const res = await call(t.url, 'GET', `${PATH}?parent_id=${encodeURIComponent(id())}`, { token: tree.mspCaller.token });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'unauthorized', code: 'unauthorized', message: expect.any(String) });
    });

    it("answers 403 to a child asking for its parent's list", async () => {
      const res = await call(t.url, 'GET', `${PATH}?parent_id=${tree.msp.id}`, { token: tree.childACaller.token });
      expect(res.status).toBe(403);
    });
  });

  describe('POST', () => {
    it('creates a child with a slugged handle, org_code and the org summary (201)', async () => {
      const res = await call(t.url, 'POST', PATH, {
        token: tree.mspCaller.token,
        body: { name: 'Café Zürich Ltd.', handle: '  Café Zürich -- Ltd. ', parent_id: tree.msp.id, subdomain: 'cafe-zurich' },
      });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('success');
      expect(res.body.deployment.customer).toEqual({
        ...deploymentShape,
        name: 'Café Zürich Ltd.',
        handle: 'cafe_zurich_ltd',
        parent: tree.msp.id,
        subdomain: 'cafe-zurich',
      });
      const { customer, org } = res.body.deployment;
      expect(org).toEqual({ code: customer.org_code, name: 'Café Zürich Ltd.', handle: 'cafe_zurich_ltd' });
      const list = await call(t.url, 'GET', PATH, { token: tree.mspCaller.token });
      expect(list.body.deployments.map((d: { customer_id: string }) => d.customer_id)).toContain(customer.customer_id);
    });

    it.each([
      [{}, ['name', 'handle', 'parent_id']],
      [{ name: 'x' }, ['handle', 'parent_id']],
      [{ name: '', handle: 'h', parent_id: 'p' }, ['name']],
      [{ name: '   ', handle: 'h' }, ['name', 'parent_id']],
      [{ name: 'n', handle: 'h', parent_id: null }, ['parent_id']],
    ])('answers 400 missing_required_fields for %j', async (body, fields) => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'missing_required_fields', code: 'missing_required_fields' });
      for (const f of fields) expect(res.body.message).toContain(f);
    });

    it.each([
      ['wrong types', { name: 5, handle: 'h', parent_id: 'p' }, 'invalid_request'],
      ['array name', { name: ['a'], handle: 'h', parent_id: 'p' }, 'invalid_request'],
      ['oversize name', { name: 'n'.repeat(201), handle: 'h', parent_id: '$self' }, 'invalid_request'],
      ['oversize handle', { name: 'n', handle: 'h'.repeat(64), parent_id: '$self' }, 'invalid_request'],
      ['handle without letters', { name: 'n', handle: '☃☃ --', parent_id: '$self' }, 'invalid_request'],
      ['bad subdomain', { name: 'n', handle: 'h_sub', parent_id: '$self', subdomain: 'not a label!' }, 'invalid_request'],
      ['name with escape and newline', { name: 'a\u001b[31mred\nline', handle: 'h_ctl', parent_id: '$self' }, 'invalid_request'],
      ['name with DEL', { name: 'a\u007fb', handle: 'h_del', parent_id: '$self' }, 'invalid_request'],
      ['name with a lone surrogate', { name: 'a\ud800b', handle: 'h_sur', parent_id: '$self' }, 'invalid_request'],
      ['name of 201 emoji', { name: '😀'.repeat(201), handle: 'h_emoji', parent_id: '$self' }, 'invalid_request'],
    ])('answers 400 for %s', async (_name, body, code) => {
      const payload = { ...body, parent_id: body.parent_id === '$self' ? tree.msp.id : body.parent_id };
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: payload });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(code);
    });

    it('counts name length in code points, as profile names do', async () => {
      const name = '😀'.repeat(150);
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { name, handle: 'emoji_150', parent_id: tree.msp.id } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.deployment.customer.name).toBe(name);
    });

    it('answers 409 handle_taken for a handle the parent already uses', async () => {
      const body = { name: 'Dup', handle: 'dup_handle', parent_id: tree.msp.id };
      expect((await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body })).status).toBe(201);
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { ...body, handle: 'Dup Handle' } });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('handle_taken');
    });

    it('answers 403 unauthorized for a foreign parent_id, a child parent_id, and a caller that is not a parent', async () => {
      const body = (parent_id: string) => ({ name: 'n', handle: 'h_x', parent_id });
      for (const [token, parent] of [
        [tree.mspCaller.token, otherTree.msp.id],
        [tree.mspCaller.token, tree.childA.id],
        [tree.childACaller.token, tree.childA.id],
        [tree.childACaller.token, tree.msp.id],
      ]) {
        const res = await call(t.url, 'POST', PATH, { token, body: body(parent) });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('unauthorized');
      }
    });

    it('answers 403 authorization_error without the deployment scope and 401 without a token', async () => {
      const narrow = await seedCaller(t.app, tree.msp.id, ['p.token.scope.node_api']);
      const body = { name: 'n', handle: 'h', parent_id: tree.msp.id };
      expect((await call(t.url, 'POST', PATH, { token: narrow.token, body })).body.code).toBe('authorization_error');
      expect((await call(t.url, 'POST', PATH, { body })).status).toBe(401);
    });
  });

  describe('DELETE', () => {
    it('deletes a child, answering 200 with the deleted summary; its clients are refused at once and go with it', async () => {
      const child = await seedTenant(t.app, { parentId: tree.msp.id, name: 'Doomed' });
      const childCaller = await seedCaller(t.app, child.id);
      const res = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: child.id, parent_id: tree.msp.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        message: expect.any(String),
        deleted: { customer_id: child.id, name: 'Doomed', handle: child.handle },
      });
      expect((await call(t.url, 'GET', PATH, { token: childCaller.token })).status).toBe(401);
      const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: childCaller.clientId, client_secret: childCaller.clientSecret } });
      expect(token.status).toBe(401);
      expect(await t.app.db.prisma.apiClient.count({ where: { customerId: child.id, revokedAt: null } })).toBe(0);
      const again = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: child.id, parent_id: tree.msp.id } });
      expect(again.status).toBe(404);
      expect(again.body.code).toBe('deployment_not_found');
      await expect.poll(() => t.app.db.prisma.tenant.count({ where: { id: child.id } }), { timeout: 20_000 }).toBe(0);
      expect(await t.app.db.prisma.apiClient.count({ where: { customerId: child.id } })).toBe(0);
    });

    it('hides a deleting child from lists and lookups at once, and frees its handle', async () => {
      const child = await seedTenant(t.app, { parentId: tree.msp.id });
      // Its flows keep the deletion busy while the child is looked for.
      await t.app.flows.command('/* test_stop_merges */ SYSTEM STOP MERGES flows');
      try {
        await insertFlowBatch(t.app.flows, { customerId: child.id, nodeId: 'node_h', batchId: 'b1', flows: [flow] });
        const res = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: child.id, parent_id: tree.msp.id } });
        expect(res.status).toBe(200);
        expect(await t.app.db.prisma.tenant.count({ where: { id: child.id } })).toBe(1);
        const list = await call(t.url, 'GET', PATH, { token: tree.mspCaller.token });
        expect(list.body.deployments.map((d: { customer_id: string }) => d.customer_id)).not.toContain(child.id);
        expect(list.body.count).toBe(list.body.deployments.length);
        const lookup = await graphql(t.url, 'query($id: String!) { tenant(customerId: $id) { customerId } }', { id: child.id }, tree.mspCaller.token);
        expect(lookup.data.tenant).toBeNull();
        const provision = await call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: child.id } });
        expect(provision.status).toBe(404);
        const reused = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { name: 'Again', handle: child.handle, parent_id: tree.msp.id } });
        expect(reused.status).toBe(201);
        expect(reused.body.deployment.customer.customer_id).not.toBe(child.id);
      } finally {
        await t.app.flows.command('/* test_start_merges */ SYSTEM START MERGES flows');
      }
      await expect.poll(() => t.app.db.prisma.tenant.count({ where: { id: child.id } }), { timeout: 20_000 }).toBe(0);
    });

    it('answers concurrent deletions of one child with one 200 and 404s for the rest, and removes its flows with one mutation', async () => {
      const child = await seedTenant(t.app, { parentId: tree.msp.id });
      await insertFlowBatch(t.app.flows, { customerId: child.id, nodeId: 'node_x', batchId: 'b1', flows: [flow, flow] });
      const body = { customer_id: child.id, parent_id: tree.msp.id };
      const answers = await Promise.all(Array.from({ length: 6 }, () => call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 404, 404, 404, 404, 404]);
      expect(answers.filter((a) => a.status === 404).every((a) => a.body.code === 'deployment_not_found')).toBe(true);
      await expect.poll(() => t.app.db.prisma.tenant.count({ where: { id: child.id } }), { timeout: 20_000 }).toBe(0);
      expect(await mutationsNaming(child.id)).toBe(1);
    });

    it("deletes the child's flows from ClickHouse, and no one else's", async () => {
      const child = await seedTenant(t.app, { parentId: tree.msp.id });
      await insertFlowBatch(t.app.flows, { customerId: child.id, nodeId: 'node_x', batchId: 'b1', flows: [flow, flow] });
      await insertFlowBatch(t.app.flows, { customerId: tree.childA.id, nodeId: 'node_y', batchId: 'b1', flows: [flow] });
      expect(await count(child.id)).toBe(2);
      await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: child.id, parent_id: tree.msp.id } });
      await expect.poll(() => count(child.id), { timeout: 20_000 }).toBe(0);
      expect(await count(tree.childA.id)).toBe(1);
      await expect.poll(async () => (await t.app.db.prisma.tenantDeletion.findUniqueOrThrow({ where: { customerId: child.id } })).state).toBe('deleted');
    });

    it('runs every registered tenant-deletion step until it is done, recording its progress', async () => {
      const child = await seedTenant(t.app, { parentId: tree.msp.id });
      const seen: unknown[] = [];
      t.app.services.deletionHooks.register(`probe_${child.id}`, async (id, last) => {
        if (id !== child.id) return { done: true, calls: 0 };
        seen.push(last);
        return { done: seen.length === 2, calls: seen.length };
      });
      await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: child.id, parent_id: tree.msp.id } });
      await expect.poll(() => t.app.db.prisma.tenant.count({ where: { id: child.id } }), { timeout: 20_000 }).toBe(0);
      expect(seen).toEqual([undefined, { done: false, calls: 1 }]);
      const job = await t.app.db.prisma.tenantDeletion.findUniqueOrThrow({ where: { customerId: child.id } });
      expect(job.steps).toMatchObject({ [`probe_${child.id}`]: { done: true, calls: 2 }, flows: { done: true } });
    });

    it.each([
      ["a sibling's child", () => otherTree.childA.id],
      ['the caller itself', () => tree.msp.id],
      ['a missing customer', () => 'cus_missing'],
    ])('answers 404 deployment_not_found for %s', async (_name, id) => {
      const res = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: id(), parent_id: tree.msp.id } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'deployment_not_found', code: 'deployment_not_found' });
    });

    it('answers 400 missing_required_fields without customer_id or parent_id, also for a body-less DELETE', async () => {
      const res = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, headers: { 'content-length': '0' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('missing_required_fields');
      const partial = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { customer_id: tree.childA.id } });
      expect(partial.body.message).toContain('parent_id');
    });

    it('answers 403 unauthorized when parent_id is not the caller', async () => {
      const res = await call(t.url, 'DELETE', PATH, { token: tree.childACaller.token, body: { customer_id: tree.childB.id, parent_id: tree.msp.id } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('unauthorized');
      expect(await t.app.services.tenants.find(tree.childB.id)).not.toBeNull();
    });
  });
});
