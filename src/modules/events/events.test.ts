import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { topicNames } from './topics.js';

const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const unique = () => Math.random().toString(36).slice(2);
const topicsPath = (customerId: string) => `/rest/events/1.0/${encodeURIComponent(customerId)}`;
const recordsPath = (customerId: string, topic: string, query = '') =>
  `/rest/events/1.0/${encodeURIComponent(customerId)}/${encodeURIComponent(topic)}${query ? `?${query}` : ''}`;

describe('events', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let otherTree: Awaited<ReturnType<typeof seedTree>>;

  /** A fresh child of the tree's MSP with `count` detection events, oldest first. */
  const tenantWithDetections = async (count: number) => {
    const tenant = await seedTenant(t.app, { parentId: tree.msp.id });
    for (let i = 0; i < count; i++) {
      await t.app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_completed', data: { seq: i } });
    }
    return tenant;
  };

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    otherTree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  describe('produced by real activity', () => {
    it("records a device approval and a denial for the approver's tenant", async () => {
      const grant = async (hostname: string) =>
        (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname, machine_id: `m-${hostname}` } })).body.device_code as string;
      const approved = await grant(`approve-${unique()}`);
      const denied = await grant(`deny-${unique()}`);
      expect((await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', { token: tree.childACaller.token, body: { device_code: approved } })).status).toBe(
        200,
      );
      expect(
        (await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', { token: tree.childACaller.token, body: { device_code: denied, action: 'deny' } }))
          .status,
      ).toBe(200);
      const res = await call(t.url, 'GET', recordsPath(tree.childA.id, 'device_approvals'), { token: tree.childACaller.token });
      expect(res.status).toBe(200);
      expect(res.body.events.map((e: { kind: string }) => e.kind)).toEqual(['device_denied', 'device_approved']);
      expect(res.body.events[1]).toEqual({
        event_id: expect.stringMatching(/^evt_/),
        customer_id: tree.childA.id,
        topic: 'device_approvals',
        kind: 'device_approved',
        subject: expect.stringMatching(/^dva_/),
        data: {
          device_authorization_id: res.body.events[1].subject,
          hostname: expect.stringMatching(/^approve-/),
          machine_id: expect.stringMatching(/^m-approve-/),
          node_id: null,
          decided_by: tree.childACaller.clientId,
          decided_by_kind: 'client',
        },
        created_at: iso,
      });
      // The device code itself never appears in an event.
      expect(JSON.stringify(res.body)).not.toContain(approved);
    });

    it('records enrolment, connection and disconnection of a collector', async () => {
      const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childB.id } });
      const token = await FakeCollector.exchange(t.url, provisioned.body.access_key);
      const machineId = `ev-${unique()}`;
      const collector = await FakeCollector.connect(t.url, token, {
        machine_id: machineId,
        hostname: 'sensor-ev',
        collector_version: '1.0.0',
        os: 'linux',
        arch: 'amd64',
      });
      const nodeId = collector.welcome.node_id as string;
      const kinds = async () =>
        (await call(t.url, 'GET', recordsPath(tree.childB.id, 'node_lifecycle'), { token: tree.mspCaller.token })).body.events.map(
          (e: { kind: string; subject: string }) => `${e.kind}:${e.subject}`,
        );
      // Recorded right after the welcome.
      await expect.poll(kinds).toEqual([`node_connected:${nodeId}`, `node_enrolled:${nodeId}`]);
      const connected = (await call(t.url, 'GET', recordsPath(tree.childB.id, 'node_lifecycle', 'kind=node_connected'), { token: tree.mspCaller.token })).body;
      expect(connected.events[0].data).toEqual({ node_id: nodeId, hostname: 'sensor-ev', collector_version: '1.0.0', os: 'linux', arch: 'amd64' });
      await collector.close();
      await expect.poll(kinds).toEqual([`node_disconnected:${nodeId}`, `node_connected:${nodeId}`, `node_enrolled:${nodeId}`]);
    });
  });

  describe('GET /rest/events/1.0/{customerId}', () => {
    it("lists every topic with the tenant's count and latest time", async () => {
      const tenant = await tenantWithDetections(3);
      const caller = await seedCaller(t.app, tenant.id);
      const res = await call(t.url, 'GET', topicsPath(tenant.id), { token: caller.token });
      expect(res.status).toBe(200);
      expect(res.body.customer_id).toBe(tenant.id);
      expect(res.body.count).toBe(topicNames.length);
      expect(res.body.topics.map((x: { topic: string }) => x.topic)).toEqual(topicNames);
      const byTopic = Object.fromEntries(res.body.topics.map((x: { topic: string }) => [x.topic, x]));
      expect(byTopic.detections).toEqual({
        topic: 'detections',
        description: expect.any(String),
        kinds: ['detection_run_completed', 'detection_run_failed'],
        count: 3,
        latest_at: iso,
      });
      expect(byTopic.investigations).toMatchObject({ count: 0, latest_at: null });
    });
  });

  describe('GET /rest/events/1.0/{customerId}/{topic}', () => {
    it('pages newest first by limit and offset', async () => {
      const tenant = await tenantWithDetections(7);
      const page = (query: string) => call(t.url, 'GET', recordsPath(tenant.id, 'detections', query), { token: tree.mspCaller.token });
      const first = await page('limit=3');
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ customer_id: tenant.id, topic: 'detections', total: 7, limit: 3, offset: 0, next_cursor: expect.any(String) });
      expect(first.body.events.map((e: { data: { seq: number } }) => e.data.seq)).toEqual([6, 5, 4]);
      const last = await page('limit=3&offset=6');
      expect(last.body).toMatchObject({ total: 7, offset: 6, next_cursor: null });
      expect(last.body.events.map((e: { data: { seq: number } }) => e.data.seq)).toEqual([0]);
      expect((await page('offset=50')).body).toMatchObject({ events: [], total: 7, offset: 50, next_cursor: null });
      expect((await page('')).body.limit).toBe(50);
      expect((await page('limit=0')).body.limit).toBe(1);
      expect((await page('limit=100000')).body.limit).toBe(200);
    });

    it('pages by cursor without skipping or repeating, also while events are added', async () => {
      const tenant = await tenantWithDetections(5);
      const seen: number[] = [];
      let cursor: string | null = null;
      let offsets: number[] = [];
      for (let i = 0; i < 5 && (i === 0 || cursor); i++) {
        const res: { status: number; body: any } = await call(
          t.url,
          'GET',
          recordsPath(tenant.id, 'detections', `limit=2${cursor ? `&cursor=${cursor}` : ''}`),
          {
            token: tree.mspCaller.token,
          },
        );
        expect(res.status).toBe(200);
        seen.push(...res.body.events.map((e: { data: { seq: number } }) => e.data.seq));
        offsets.push(res.body.offset);
        cursor = res.body.next_cursor;
        // A newer event does not shift the pages that follow a cursor.
        if (i === 0) await t.app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_failed', data: { seq: 99 } });
      }
      expect(seen).toEqual([4, 3, 2, 1, 0]);
      // Offsets count what comes before the page now (the added event included).
      expect(offsets).toEqual([0, 3, 5]);
    });

    it('filters by kind', async () => {
      const tenant = await tenantWithDetections(2);
      await t.app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_failed', data: { error: 'x' } });
      const res = await call(t.url, 'GET', recordsPath(tenant.id, 'detections', 'kind=detection_run_failed'), { token: tree.mspCaller.token });
      expect(res.body).toMatchObject({ total: 1, events: [{ kind: 'detection_run_failed', data: { error: 'x' } }] });
    });

    it.each([
      ['limit=abc', 'invalid_request'],
      ['limit=1.5x', 'invalid_request'],
      ['offset=-1', 'invalid_request'],
      ['offset=abc', 'invalid_request'],
      ['cursor=not-a-cursor', 'invalid_cursor'],
      ['cursor=%E2%9C%93', 'invalid_cursor'],
      [`cursor=${Buffer.from('123:../../etc').toString('base64url')}`, 'invalid_cursor'],
      [`cursor=${'a'.repeat(1000)}`, 'invalid_cursor'],
      ['kind=node_connected', 'invalid_request'],
      ['kind=%00', 'invalid_request'],
    ])('answers 400 for %s', async (query, code) => {
      const res = await call(t.url, 'GET', recordsPath(tree.childA.id, 'detections', query), { token: tree.childACaller.token });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ error: code, code, message: expect.any(String) });
    });

    it('refuses a cursor together with an offset', async () => {
      const tenant = await tenantWithDetections(3);
      const first = await call(t.url, 'GET', recordsPath(tenant.id, 'detections', 'limit=1'), { token: tree.mspCaller.token });
      const res = await call(t.url, 'GET', recordsPath(tenant.id, 'detections', `cursor=${first.body.next_cursor}&offset=2`), { token: tree.mspCaller.token });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/cursor or offset/);
    });

    it('answers 404 for an unknown topic', async () => {
      for (const topic of ['nope', 'DETECTIONS', '__proto__', 'x'.repeat(300)]) {
        const res = await call(t.url, 'GET', recordsPath(tree.childA.id, topic), { token: tree.childACaller.token });
        expect(res.status, topic).toBe(404);
        expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
      }
    });
  });

  describe('tenant isolation, authentication and scope on both paths', () => {
    const paths = (customerId: string) => [topicsPath(customerId), recordsPath(customerId, 'node_lifecycle')];

    it("serves the caller's own tenant and, to a parent, its children", async () => {
      for (const [caller, customerId] of [
        [tree.childACaller, tree.childA.id],
        [tree.mspCaller, tree.msp.id],
        [tree.mspCaller, tree.childA.id],
      ] as const) {
        for (const path of paths(customerId)) expect((await call(t.url, 'GET', path, { token: caller.token })).status, path).toBe(200);
      }
    });

    it('answers 404 for a parent (from a child), a sibling, another tree and a missing tenant', async () => {
      for (const customerId of [tree.msp.id, tree.childB.id, otherTree.msp.id, otherTree.childA.id, 'cus_missing', ' ', '%00', 'x'.repeat(500)]) {
        for (const path of paths(customerId)) {
          const res = await call(t.url, 'GET', path, { token: tree.childACaller.token });
          expect(res.status, path).toBe(404);
          expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
        }
      }
    });

    it('needs a token (401) with the search_api scope (403)', async () => {
      const nodeOnly = await seedCaller(t.app, tree.childA.id, [Scopes.nodeApi]);
      for (const path of paths(tree.childA.id)) {
        expect((await call(t.url, 'GET', path)).status).toBe(401);
        expect((await call(t.url, 'GET', path, { token: 'garbage' })).status).toBe(401);
        const forbidden = await call(t.url, 'GET', path, { token: nodeOnly.token });
        expect(forbidden.status).toBe(403);
        expect(forbidden.body.code).toBe('authorization_error');
      }
    });

    it('does not serve other methods', async () => {
      expect((await call(t.url, 'POST', topicsPath(tree.childA.id), { token: tree.childACaller.token })).status).toBe(405);
    });
  });

  describe('GraphQL', () => {
    it('answers eventTopics and eventRecords like the REST paths', async () => {
      const tenant = await tenantWithDetections(2);
      const res = await graphql(
        t.url,
        `
          query ($c: String!) {
            eventTopics(customerId: $c) {
              customerId
              topics {
                topic
                count
              }
            }
            eventRecords(customerId: $c, topic: "detections", limit: 1) {
              total
              limit
              offset
              nextCursor
              events {
                kind
                data
              }
            }
          }
        `,
        { c: tenant.id },
        tree.mspCaller.token,
      );
      expect(res.errors).toBeUndefined();
      expect(res.data.eventTopics.topics.find((x: { topic: string }) => x.topic === 'detections').count).toBe(2);
      expect(res.data.eventRecords).toMatchObject({ total: 2, limit: 1, offset: 0, nextCursor: expect.any(String), events: [{ data: { seq: 1 } }] });
      const outside = await graphql(t.url, '{ eventTopics(customerId: "cus_nope") { customerId } }', {}, tree.mspCaller.token);
      expect(outside.errors?.[0].extensions).toMatchObject({ code: 'not_found' });
    });

    it('streams new events of a tenant (optionally one topic) to a subscriber', async () => {
      const tenant = await seedTenant(t.app, { parentId: tree.msp.id });
      const client = createClient({
        url: t.url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { authorization: `Bearer ${tree.mspCaller.token}` },
      });
      const received: Array<{ kind: string; customerId: string; data: { n: number } }> = [];
      const subscribed = new Promise<void>((resolve, reject) => {
        client.subscribe(
          {
            query: 'subscription($c: String!) { events(customerId: $c, topic: "detections") { eventId customerId topic kind data createdAt } }',
            variables: { c: tenant.id },
          },
          { next: (msg) => received.push((msg.data as any).events), error: reject, complete: () => undefined },
        );
        // Subscription setup has no acknowledgement: record until one arrives.
        const tick = setInterval(() => {
          if (received.length) {
            clearInterval(tick);
            resolve();
          } else void t.app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_completed', data: { n: 0 } });
        }, 100);
      });
      await subscribed;
      const before = received.length;
      // Another topic, another tenant: not delivered. The last one is.
      await t.app.services.events.record({ customerId: tenant.id, topic: 'investigations', kind: 'investigation_opened', data: { n: 1 } });
      await t.app.services.events.record({ customerId: tree.childA.id, topic: 'detections', kind: 'detection_run_completed', data: { n: 2 } });
      await t.app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_failed', data: { n: 3 } });
      await expect.poll(() => received.at(-1)?.data.n).toBe(3);
      expect(
        received
          .slice(before)
          .map((e) => e.data.n)
          .filter((n) => n !== 0),
      ).toEqual([3]);
      expect(received.at(-1)).toMatchObject({ customerId: tenant.id, kind: 'detection_run_failed' });
      await client.dispose();
    });

    it("refuses a subscription to a tenant outside the caller's tree", async () => {
      const client = createClient({
        url: t.url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { authorization: `Bearer ${tree.childACaller.token}` },
      });
      const errors = await new Promise<any>((resolve) => {
        client.subscribe(
          { query: 'subscription($c: String!) { events(customerId: $c) { eventId } }', variables: { c: tree.childB.id } },
          { next: (msg) => resolve(msg.errors), error: resolve, complete: () => undefined },
        );
      });
      expect(JSON.stringify(errors)).toContain('not_found');
      await client.dispose();
    });
  });

  it('never fails the producer: a bad event is logged and dropped', async () => {
    const events = t.app.services.events;
    expect(await events.record({ customerId: 'cus_missing', topic: 'detections', kind: 'detection_run_completed' })).toBeUndefined();
    expect(await events.record({ customerId: tree.childA.id, topic: 'detections', kind: 'nope' as never })).toBeUndefined();
    expect(
      await events.record({ customerId: tree.childA.id, topic: 'detections', kind: 'detection_run_completed', data: { big: 'x'.repeat(20_000) } }),
    ).toBeUndefined();
  });
});
