import { createHmac, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call, graphql } from '../../../test/kit/http.js';
import { type Caller, seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { newId } from '../../infra/ids.js';
import { expectRuleLimitHeldUnderRace } from './automation.fixtures.js';

const PATH = '/rest/automation/1.0';
const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

/** A webhook receiver on loopback that answers each path with the statuses it is given, in order (then 200). */
class Receiver {
  readonly requests: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  readonly statuses = new Map<string, number[]>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(this.statuses.get(req.url ?? '')?.shift() ?? 200, { 'content-type': 'text/plain' });
        res.end('thanks');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  answer(path: string, ...statuses: number[]) {
    this.statuses.set(path, statuses);
  }

  on(path: string) {
    return this.requests.filter((r) => r.path === path);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** What a receiver does with `X-Signature`: recompute HMAC-SHA256 over "<t>.<body>" and compare. */
function verifySignature(secret: string, header: string, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest();
  return Math.abs(Date.now() / 1000 - Number(match[1])) < 300 && timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}

describe('automation', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let otherTree: Awaited<ReturnType<typeof seedTree>>;
  let receiver: Receiver;
  let path = 0;
  /** A receiver path of its own for each rule, so tests never see each other's deliveries. */
  const hook = () => `/hook-${++path}`;

  const save = async (caller: Caller, body: Record<string, unknown>) => {
    const res = await call(t.url, 'POST', PATH, { token: caller.token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { status: string; created: boolean; secret?: string; rule: { rule_id: string; [k: string]: unknown } };
  };
  const webhookRule = (target: string, match: Record<string, unknown> = { topic: 'detections' }, extra: Record<string, unknown> = {}) => ({
    name: `rule ${target}`,
    match,
    action: { type: 'webhook', url: receiver.url + target },
    ...extra,
  });
  const runsOf = async (ruleId: string, caller = tree.mspCaller) => {
    const res = await call(t.url, 'GET', `${PATH}?rule_id=${ruleId}`, { token: caller.token });
    expect(res.status).toBe(200);
    return res.body.rule.recent_runs as Array<Record<string, any>>;
  };
  const detection = (customerId: string, data: Record<string, unknown> = {}) =>
    t.app.services.events.record({ customerId, topic: 'detections', kind: 'detection_run_completed', data });

  beforeAll(async () => {
    receiver = await new Receiver().start();
    t = await startTestApp({ env: { AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true', AUTOMATION_RETRY_BASE_MS: '100', COMMAND_TIMEOUT_SCALE: '0.2' } });
    tree = await seedTree(t.app);
    otherTree = await seedTree(t.app);
  });
  afterAll(async () => {
    await t.stop();
    await receiver.stop();
  });

  describe('webhooks', () => {
    it('delivers the event with a verifiable signature, and records the run', async () => {
      const target = hook();
      const saved = await save(tree.childACaller, webhookRule(target, { topic: 'detections', kinds: ['detection_run_completed'] }));
      expect(saved).toMatchObject({ status: 'success', created: true, secret: expect.stringMatching(/^whsec_/) });
      expect(saved.rule).toEqual({
        rule_id: expect.stringMatching(/^rule_/),
        customer_id: tree.childA.id,
        name: `rule ${target}`,
        enabled: true,
        match: { topic: 'detections', kinds: ['detection_run_completed'], conditions: [] },
        action: { type: 'webhook', url: receiver.url + target },
        created_at: iso,
        updated_at: iso,
      });
      const event = await detection(tree.childA.id, { opened: 2 });
      await expect.poll(() => receiver.on(target).length).toBe(1);
      const [request] = receiver.on(target);
      expect(request.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': 'breach-detection-automation/1.0',
        'x-event-id': event!.id,
        'x-event-topic': 'detections',
        'x-event-kind': 'detection_run_completed',
        'x-delivery-attempt': '1',
      });
      expect(verifySignature(saved.secret!, request.headers['x-signature'] as string, request.body)).toBe(true);
      expect(verifySignature('whsec_wrong', request.headers['x-signature'] as string, request.body)).toBe(false);
      expect(JSON.parse(request.body)).toEqual({
        delivery_id: request.headers['x-delivery-id'],
        rule_id: saved.rule.rule_id,
        event: {
          event_id: event!.id,
          customer_id: tree.childA.id,
          topic: 'detections',
          kind: 'detection_run_completed',
          subject: null,
          data: { opened: 2 },
          created_at: iso,
        },
      });
      await expect.poll(async () => (await runsOf(saved.rule.rule_id))[0]?.status).toBe('succeeded');
      const [run] = await runsOf(saved.rule.rule_id);
      expect(run).toMatchObject({
        run_id: request.headers['x-delivery-id'],
        event_id: event!.id,
        attempts: 1,
        response_code: 200,
        error: null,
        next_attempt_at: null,
        finished_at: iso,
        attempt_log: [{ attempt: 1, response_code: 200, error: null, at: iso }],
      });
      // The run is an event too, for the rule's tenant.
      const runEvents = async () =>
        (await call(t.url, 'GET', `/rest/events/1.0/${tree.childA.id}/automation_runs`, { token: tree.childACaller.token })).body.events;
      await expect.poll(async () => (await runEvents()).length).toBeGreaterThan(0);
      expect((await runEvents())[0]).toMatchObject({
        kind: 'run_succeeded',
        subject: run.run_id,
        data: { rule_id: saved.rule.rule_id, attempts: 1, response_code: 200 },
      });
      // The secret is stored sealed, never in the clear.
      const { rows } = await t.app.db.pool.query('SELECT * FROM automation_rules WHERE id = $1', [saved.rule.rule_id]);
      expect(JSON.stringify(rows[0])).not.toContain(saved.secret!.slice(6));
    });

    it('retries after a 500 with backoff until delivered (at least once), keeping every attempt', async () => {
      const target = hook();
      const { rule } = await save(tree.mspCaller, webhookRule(target));
      receiver.answer(target, 500, 503);
      await detection(tree.msp.id);
      await expect.poll(async () => (await runsOf(rule.rule_id))[0]?.status, { timeout: 5000 }).toBe('succeeded');
      const [run] = await runsOf(rule.rule_id);
      expect(run.attempts).toBe(3);
      expect(run.attempt_log.map((a: { response_code: number }) => a.response_code)).toEqual([500, 503, 200]);
      expect(run.attempt_log[0].error).toBe('the receiver answered 500');
      const deliveries = receiver.on(target);
      expect(deliveries.map((d) => d.headers['x-delivery-attempt'])).toEqual(['1', '2', '3']);
      // The same delivery each time: one id, one body, a fresh signature.
      expect(new Set(deliveries.map((d) => d.headers['x-delivery-id'])).size).toBe(1);
      expect(new Set(deliveries.map((d) => d.body)).size).toBe(1);
    });

    it('fails a run at once on a 4xx answer', async () => {
      const target = hook();
      const { rule } = await save(tree.mspCaller, webhookRule(target));
      receiver.answer(target, 410);
      await detection(tree.msp.id);
      await expect.poll(async () => (await runsOf(rule.rule_id))[0]?.status).toBe('failed');
      expect((await runsOf(rule.rule_id))[0]).toMatchObject({ attempts: 1, response_code: 410, error: 'the receiver answered 410' });
      // The run_failed event is recorded just after the run's status is written.
      const failedEvents = async () =>
        (await call(t.url, 'GET', `/rest/events/1.0/${tree.msp.id}/automation_runs?kind=run_failed`, { token: tree.mspCaller.token })).body.events;
      await expect.poll(async () => (await failedEvents()).length).toBeGreaterThan(0);
      expect((await failedEvents())[0].data).toMatchObject({ rule_id: rule.rule_id, status: 'failed', response_code: 410 });
    });

    it('retries transport errors (connection refused)', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      const { rule } = await save(caller, {
        name: 'nobody home',
        match: { topic: 'detections' },
        action: { type: 'webhook', url: `http://127.0.0.1:${port}/` },
      });
      await detection(tenant.id);
      await expect.poll(async () => (await runsOf(rule.rule_id, caller))[0]?.attempts).toBeGreaterThanOrEqual(2);
      const [run] = await runsOf(rule.rule_id, caller);
      expect(run.attempt_log[0]).toMatchObject({ attempt: 1, response_code: null, error: 'delivery failed: ECONNREFUSED' });
      expect(['retrying', 'running']).toContain(run.status);
      await call(t.url, 'DELETE', PATH, { token: caller.token, body: { rule_id: rule.rule_id } });
    });

    it("reacts only to matching events: kinds, conditions, and a parent's rules cover its children", async () => {
      const target = hook();
      const { rule } = await save(tree.mspCaller, {
        name: 'page on malicious',
        match: { topic: 'investigations', kinds: ['investigation_opened'], conditions: [{ field: 'disposition', op: 'eq', value: 'malicious' }] },
        action: { type: 'webhook', url: receiver.url + target },
      });
      const investigation = (customerId: string, kind: 'investigation_opened' | 'investigation_closed', disposition: string) =>
        t.app.services.events.record({ customerId, topic: 'investigations', kind, subject: newId('inv'), data: { disposition } });
      await investigation(tree.childB.id, 'investigation_opened', 'benign');
      await investigation(tree.childB.id, 'investigation_closed', 'malicious');
      await investigation(otherTree.childA.id, 'investigation_opened', 'malicious');
      await investigation(tree.childB.id, 'investigation_opened', 'malicious');
      await expect.poll(() => receiver.on(target).length).toBe(1);
      expect(JSON.parse(receiver.on(target)[0].body).event).toMatchObject({
        customer_id: tree.childB.id,
        kind: 'investigation_opened',
        data: { disposition: 'malicious' },
      });
      expect(await runsOf(rule.rule_id)).toHaveLength(1);
      // A child's rules do not see its parent's or siblings' events.
      const childTarget = hook();
      await save(tree.childACaller, webhookRule(childTarget));
      await detection(tree.msp.id);
      await detection(tree.childB.id);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.on(childTarget)).toHaveLength(0);
    });

    it('stops delivering when the rule is deleted, and when it is disabled', async () => {
      const target = hook();
      const { rule } = await save(tree.mspCaller, webhookRule(target));
      receiver.answer(target, 500, 500, 500, 500, 500, 500);
      await detection(tree.msp.id);
      await expect.poll(() => receiver.on(target).length).toBeGreaterThanOrEqual(1);
      const deleted = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { rule_id: rule.rule_id } });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ status: 'success', deleted: { rule_id: rule.rule_id } });
      const after = receiver.on(target).length;
      await new Promise((r) => setTimeout(r, 800));
      // At most an attempt already in flight at the delete.
      expect(receiver.on(target).length).toBeLessThanOrEqual(after + 1);
      expect(await t.app.db.prisma.automationRun.count({ where: { ruleId: rule.rule_id } })).toBe(0);

      const quiet = hook();
      const disabled = await save(tree.mspCaller, webhookRule(quiet, { topic: 'detections' }, { enabled: false }));
      await detection(tree.msp.id);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.on(quiet)).toHaveLength(0);
      expect(await runsOf(disabled.rule.rule_id)).toHaveLength(0);
    });

    it('updates a rule in place; a secret is shown only when issued', async () => {
      const target = hook();
      const first = await save(tree.mspCaller, webhookRule(target));
      const renamed = await save(tree.mspCaller, { rule_id: first.rule.rule_id, name: 'renamed', enabled: false });
      expect(renamed).toMatchObject({
        created: false,
        rule: { rule_id: first.rule.rule_id, name: 'renamed', enabled: false, action: { url: receiver.url + target } },
      });
      expect(renamed.secret).toBeUndefined();
      const rotated = await save(tree.mspCaller, { rule_id: first.rule.rule_id, rotate_secret: true, enabled: true });
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(first.secret);
      await detection(tree.msp.id);
      await expect.poll(() => receiver.on(target).length).toBe(1);
      const request = receiver.on(target)[0];
      expect(verifySignature(rotated.secret!, request.headers['x-signature'] as string, request.body)).toBe(true);
      expect(verifySignature(first.secret!, request.headers['x-signature'] as string, request.body)).toBe(false);
      const switched = await save(tree.mspCaller, { rule_id: first.rule.rule_id, action: { type: 'collector_update' } });
      expect(switched.rule.action).toEqual({ type: 'collector_update', url: null });
      const back = await save(tree.mspCaller, { rule_id: first.rule.rule_id, action: { type: 'webhook', url: receiver.url + target } });
      expect(back.secret).toMatch(/^whsec_/);
    });
  });

  describe('runner', () => {
    it('shares the work between server processes, delivering each run once', async () => {
      const b = await startTestApp({ databaseUrl: t.config.databaseUrl, env: { AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true', AUTOMATION_RETRY_BASE_MS: '100' } });
      try {
        const tenant = await seedTenant(t.app);
        const caller = await seedCaller(t.app, tenant.id);
        const target = hook();
        await save(caller, { name: 'shared', match: { topic: 'detections' }, action: { type: 'webhook', url: receiver.url + target } });
        // Events recorded by both processes; both runners are woken by each.
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? b : t).app.services.events.record({ customerId: tenant.id, topic: 'detections', kind: 'detection_run_completed', data: { i } }),
          ),
        );
        await expect.poll(() => receiver.on(target).length, { timeout: 5000 }).toBe(20);
        await new Promise((r) => setTimeout(r, 200));
        const ids = receiver.on(target).map((r) => r.headers['x-delivery-id']);
        expect(new Set(ids).size).toBe(20);
        expect(receiver.on(target)).toHaveLength(20);
      } finally {
        await b.stop();
      }
    });

    it('takes over a run whose claimant died (its lease expired)', async () => {
      const target = hook();
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      const { rule } = await save(caller, {
        name: 'orphan',
        match: { topic: 'detections', kinds: ['detection_run_failed'] },
        action: { type: 'webhook', url: receiver.url + target },
      });
      // A run another process claimed and never finished, as left behind by a crash.
      const event = await t.app.db.prisma.event.create({
        data: { id: newId('evt'), customerId: tenant.id, topic: 'detections', kind: 'detection_run_completed' },
      });
      await t.app.db.prisma.automationRun.create({
        data: {
          id: newId('run'),
          ruleId: rule.rule_id,
          customerId: tenant.id,
          eventId: event.id,
          status: 'running',
          attempts: 1,
          leaseUntil: new Date(Date.now() - 1000),
        },
      });
      await detection(tenant.id); // only wakes the runner: this rule ignores detection_run_completed
      await expect.poll(async () => (await runsOf(rule.rule_id, caller))[0]?.status, { timeout: 8000 }).toBe('succeeded');
      expect((await runsOf(rule.rule_id, caller))[0]).toMatchObject({ attempts: 2 });
      expect(receiver.on(target)[0].headers['x-delivery-attempt']).toBe('2');
    });
  });

  describe('collector_update', () => {
    it("pushes the latest release to the event's node through its control channel", async () => {
      const arch = `evt${Date.now() % 100000}`;
      await t.app.db.prisma.collectorRelease.create({
        data: {
          id: newId('rel'),
          version: '2.0.0',
          channel: 'stable',
          os: 'linux',
          arch,
          sha256: 'cd',
          size: 1,
          filename: 'c_2.0.0',
          asset: { create: { content: Buffer.from([1]) } },
        },
      });
      const { rule } = await save(tree.mspCaller, {
        customer_id: tree.childA.id,
        name: 'update on connect',
        match: { topic: 'node_lifecycle', kinds: ['node_connected'] },
        action: { type: 'collector_update' },
      });
      expect(rule).toMatchObject({ customer_id: tree.childA.id, action: { type: 'collector_update', url: null } });
      const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id } });
      const token = await FakeCollector.exchange(t.url, provisioned.body.access_key);
      const connected = await FakeCollector.connect(t.url, token, { machine_id: `au-${arch}`, hostname: 'h', collector_version: '1.0.0', os: 'linux', arch });
      // Set before the next frame is read: the update follows the welcome's node_connected event.
      connected.answer = (cmd) => (cmd.name === 'update' ? { ok: true, data: { version: cmd.args.version } } : undefined);
      try {
        await expect
          .poll(() => connected.received.find((m) => m.type === 'command' && m.name === 'update')?.args, { timeout: 5000 })
          .toMatchObject({
            version: '2.0.0',
            platform: `linux_${arch}`,
          });
        await expect.poll(async () => (await runsOf(rule.rule_id))[0]?.status, { timeout: 5000 }).toBe('succeeded');
        expect((await runsOf(rule.rule_id))[0].result).toEqual({
          nodes: [{ node_id: connected.welcome.node_id, update_status: 'update_sent', version: '2.0.0' }],
        });
      } finally {
        await connected.close();
      }
    });

    it("acts with the rule tenant's authority only: a node outside its tree fails the run", async () => {
      const { rule } = await save(tree.childACaller, { name: 'u', match: { topic: 'detections' }, action: { type: 'collector_update' } });
      const foreign = await t.app.db.prisma.node.create({
        data: { id: newId('node'), customerId: tree.childB.id, machineId: 'x', status: 'active', os: 'linux', arch: 'amd64' },
      });
      await detection(tree.childA.id, { node_id: foreign.id });
      await expect.poll(async () => (await runsOf(rule.rule_id))[0]?.status).toBe('failed');
      expect((await runsOf(rule.rule_id))[0]).toMatchObject({ attempts: 1, error: expect.stringMatching(/^not_found/) });
      await detection(tree.childA.id, { unrelated: true });
      await expect.poll(async () => (await runsOf(rule.rule_id)).length).toBe(2);
      await expect.poll(async () => (await runsOf(rule.rule_id))[0]?.error).toMatch(/names no node/);
    });
  });

  describe('GET, POST and DELETE /rest/automation/1.0: tenant isolation', () => {
    let childARule: string;
    let childBRule: string;
    let otherRule: string;

    beforeAll(async () => {
      childARule = (await save(tree.childACaller, webhookRule(hook()))).rule.rule_id;
      childBRule = (await save(tree.mspCaller, { ...webhookRule(hook()), customer_id: tree.childB.id })).rule.rule_id;
      otherRule = (await save(otherTree.mspCaller, webhookRule(hook()))).rule.rule_id;
    });

    it("lists the caller's own rules, and a parent's whole tree (or one tenant of it)", async () => {
      const ids = async (caller: Caller, query = '') => {
        const res = await call(t.url, 'GET', `${PATH}${query}`, { token: caller.token });
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(res.body.rules.length);
        return res.body.rules.map((r: { rule_id: string }) => r.rule_id) as string[];
      };
      const own = await ids(tree.childACaller);
      expect(own).toContain(childARule);
      expect(own).not.toContain(childBRule);
      expect(await ids(tree.mspCaller)).toEqual(expect.arrayContaining([childARule, childBRule]));
      const onlyB = await ids(tree.mspCaller, `?customer_id=${tree.childB.id}`);
      expect(onlyB).toEqual([childBRule]);
      expect(await ids(otherTree.mspCaller)).not.toContain(childARule);
      const fresh = await seedTenant(t.app, { parentId: tree.msp.id });
      expect(await ids(tree.mspCaller, `?customer_id=${fresh.id}`)).toEqual([]);
    });

    it("fetches one rule of the tree by rule_id (404 for a sibling's, another tree's or a missing one)", async () => {
      expect((await call(t.url, 'GET', `${PATH}?rule_id=${childARule}`, { token: tree.childACaller.token })).body.rule.rule_id).toBe(childARule);
      expect((await call(t.url, 'GET', `${PATH}?rule_id=${childARule}`, { token: tree.mspCaller.token })).status).toBe(200);
      for (const ruleId of [childBRule, otherRule, 'rule_missing', '', 'x'.repeat(500)]) {
        const res = await call(t.url, 'GET', `${PATH}?rule_id=${ruleId}`, { token: tree.childACaller.token });
        expect(res.status, ruleId).toBe(404);
        expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
      }
      // Text with a NUL is refused at the door (graphql/nul-text.ts), before any lookup.
      const nul = await call(t.url, 'GET', `${PATH}?rule_id=%00`, { token: tree.childACaller.token });
      expect([nul.status, nul.body.error]).toEqual([400, 'invalid_request']);
    });

    it('answers 404 for a customer_id outside the tree, on list and create', async () => {
      for (const customerId of [tree.msp.id, tree.childB.id, otherTree.msp.id, 'cus_missing', 'x'.repeat(500)]) {
        const list = await call(t.url, 'GET', `${PATH}?customer_id=${customerId}`, { token: tree.childACaller.token });
        expect(list.status, customerId).toBe(404);
        const create = await call(t.url, 'POST', PATH, { token: tree.childACaller.token, body: { ...webhookRule(hook()), customer_id: customerId } });
        expect(create.status, customerId).toBe(404);
        expect(create.body.code).toBe('not_found');
      }
    });

    it('updates and deletes only rules of the tree', async () => {
      for (const ruleId of [childBRule, otherRule, 'rule_missing']) {
        const update = await call(t.url, 'POST', PATH, { token: tree.childACaller.token, body: { rule_id: ruleId, name: 'stolen' } });
        expect(update.status).toBe(404);
        const remove = await call(t.url, 'DELETE', PATH, { token: tree.childACaller.token, body: { rule_id: ruleId } });
        expect(remove.status).toBe(404);
      }
      const moved = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { rule_id: childARule, customer_id: tree.childB.id } });
      expect(moved.status).toBe(400);
      const movedOut = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { rule_id: childARule, customer_id: otherTree.msp.id } });
      expect(movedOut.status).toBe(404);
      expect((await call(t.url, 'GET', `${PATH}?rule_id=${childBRule}`, { token: tree.mspCaller.token })).body.rule.name).not.toBe('stolen');
      // A parent deletes its child's rule; rule_id may come in the query.
      const victim = (await save(tree.childACaller, webhookRule(hook()))).rule.rule_id;
      const res = await call(t.url, 'DELETE', `${PATH}?rule_id=${victim}`, { token: tree.mspCaller.token, headers: { 'content-length': '0' } });
      expect(res.status).toBe(200);
      expect((await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { rule_id: victim } })).status).toBe(404);
    });

    it('needs a token (401) with the node_api scope (403)', async () => {
      const searchOnly = await seedCaller(t.app, tree.childA.id, [Scopes.searchApi]);
      for (const method of ['GET', 'POST', 'DELETE']) {
        expect((await call(t.url, method, PATH, { body: {} })).status).toBe(401);
        const res = await call(t.url, method, PATH, { token: searchOnly.token, body: { rule_id: childARule } });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('authorization_error');
      }
    });
  });

  describe('bad input answers 4xx with a message naming the field', () => {
    const valid = () => webhookRule(hook());
    it.each([
      ['name missing', { name: undefined }, 400, /name/],
      ['name blank', { name: '   ' }, 400, /name/],
      ['name not a string', { name: 42 }, 400, /^name must be a string$/],
      ['name too long', { name: 'x'.repeat(201) }, 400, /name must be at most 200/],
      ['name with control characters', { name: 'a\u0007b' }, 400, /control characters/],
      ['name with a C1 control character', { name: 'a\u0085b' }, 400, /control characters/],
      ['name of 201 characters outside the BMP', { name: '🙂'.repeat(201) }, 400, /name must be at most 200/],
      ['enabled not a boolean', { enabled: 'yes' }, 400, /^enabled must be a boolean$/],
      ['customer_id not a string', { customer_id: 7 }, 400, /^customer_id must be a string$/],
      ['rule_id not a string', { rule_id: ['x'] }, 400, /^rule_id must be a string$/],
      ['match missing', { match: undefined }, 400, /match.topic/],
      ['match not an object', { match: 'detections' }, 400, /^match must be an object$/],
      ['match with an unknown field', { match: { topic: 'detections', topics: ['x'] } }, 400, /topics/],
      ['match.topic unknown', { match: { topic: 'weather' } }, 400, /match.topic must be one of/],
      ['match.kinds not a list of strings', { match: { topic: 'detections', kinds: [1] } }, 400, /^match\.kinds\[0\] must be a string$/],
      ['match.kinds of another topic', { match: { topic: 'detections', kinds: ['node_connected'] } }, 400, /not a kind of detections/],
      ['match.conditions not a list', { match: { topic: 'detections', conditions: 'x' } }, 400, /^match\.conditions must be an array$/],
      ['condition without op', { match: { topic: 'detections', conditions: [{ field: 'a' }] } }, 400, /match.conditions\[0\].op/],
      ['condition op unknown', { match: { topic: 'detections', conditions: [{ field: 'a', op: 'regex', value: '.' }] } }, 400, /op must be one of/],
      ['condition field not a path', { match: { topic: 'detections', conditions: [{ field: 'a b', op: 'eq', value: 1 }] } }, 400, /dotted path/],
      ['condition value of the wrong type', { match: { topic: 'detections', conditions: [{ field: 'a', op: 'gte', value: 'high' }] } }, 400, /number/],
      ['action missing', { action: undefined }, 400, /action.type/],
      ['action not an object', { action: 'webhook' }, 400, /^action must be an object$/],
      ['action.type unknown', { action: { type: 'email' } }, 400, /action.type must be one of/],
      ['webhook without url', { action: { type: 'webhook' } }, 400, /action.url/],
      ['url not http', { action: { type: 'webhook', url: 'ftp://example.com/x' } }, 400, /http or https/],
      ['url relative', { action: { type: 'webhook', url: '/hook' } }, 400, /absolute/],
      ['url with credentials', { action: { type: 'webhook', url: 'https://u:p@example.com/' } }, 400, /credentials/],
      ['url too long', { action: { type: 'webhook', url: `https://example.com/${'a'.repeat(2100)}` } }, 400, /at most 2048/],
      ['url on collector_update', { action: { type: 'collector_update', url: 'https://example.com/' } }, 400, /webhook actions only/],
      ['rotate_secret on collector_update', { action: { type: 'collector_update' }, rotate_secret: true }, 400, /webhook actions only/],
    ])('%s', async (_label, change, status, message) => {
      const body: Record<string, unknown> = { ...valid(), ...change };
      for (const [k, v] of Object.entries(change)) if (v === undefined) delete body[k];
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.message).toMatch(message);
      expect(res.body.code).toEqual(res.body.error);
    });

    it('counts a name in characters: 200 outside the BMP are taken', async () => {
      const res = await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, body: { ...valid(), name: '🙂'.repeat(200) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.rule.name).toBe('🙂'.repeat(200));
    });

    it('refuses a malformed JSON body, a bad runs count and a DELETE without rule_id', async () => {
      expect((await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, rawBody: '{"name":' })).status).toBe(400);
      expect((await call(t.url, 'POST', PATH, { token: tree.mspCaller.token, rawBody: '[1]' })).status).toBe(400);
      expect((await call(t.url, 'GET', `${PATH}?rule_id=x&runs=abc`, { token: tree.mspCaller.token })).status).toBe(400);
      const missing = await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, headers: { 'content-length': '0' } });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe('missing_required_fields');
      expect((await call(t.url, 'DELETE', PATH, { token: tree.mspCaller.token, body: { rule_id: 12 } })).status).toBe(400);
    });

    it('limits the rules of a tenant', async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      await t.app.db.prisma.automationRule.createMany({
        data: Array.from({ length: 100 }, (_, i) => ({
          id: `rule_lim${i}_${tenant.id}`,
          customerId: tenant.id,
          name: 'n',
          topic: 'detections',
          action: 'collector_update',
        })),
      });
      const res = await call(t.url, 'POST', PATH, {
        token: caller.token,
        body: { name: 'one too many', match: { topic: 'detections' }, action: { type: 'collector_update' } },
      });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('rule_limit_reached');
    });

    it('keeps the rule limit under concurrent creates', () => expectRuleLimitHeldUnderRace(t));
  });

  describe('GraphQL', () => {
    it('saves, lists with recent runs, and deletes rules', async () => {
      const target = hook();
      const saved = await graphql(
        t.url,
        `
          mutation ($input: SaveAutomationRuleInput!) {
            saveAutomationRule(input: $input) {
              created
              secret
              rule {
                ruleId
                match {
                  topic
                }
                action {
                  type
                  url
                }
              }
            }
          }
        `,
        { input: { name: 'gql', match: { topic: 'detections' }, action: { type: 'webhook', url: receiver.url + target } } },
        tree.childBCaller.token,
      );
      expect(saved.errors).toBeUndefined();
      const ruleId = saved.data.saveAutomationRule.rule.ruleId;
      await detection(tree.childB.id);
      await detection(tree.childB.id);
      await expect.poll(() => receiver.on(target).length).toBe(2);
      let runStatements = 0;
      t.app.db.prisma.$on('query', (e) => {
        if (e.query.includes('automation.recent_runs')) runStatements++;
      });
      const listed = await graphql(
        t.url,
        `
          {
            automationRules {
              ruleId
              runs(limit: 1) {
                status
                attempts
              }
            }
          }
        `,
        {},
        tree.mspCaller.token,
      );
      expect(listed.errors).toBeUndefined();
      // Runs of every rule come from one statement, however many rules are listed.
      expect(listed.data.automationRules.length).toBeGreaterThan(5);
      expect(runStatements).toBe(1);
      expect(listed.data.automationRules.find((r: { ruleId: string }) => r.ruleId === ruleId).runs).toHaveLength(1);
      const removed = await graphql(
        t.url,
        'mutation($id: String) { deleteAutomationRule(ruleId: $id) { deleted { ruleId } } }',
        { id: ruleId },
        tree.childBCaller.token,
      );
      expect(removed.data.deleteAutomationRule.deleted.ruleId).toBe(ruleId);
    });
  });
});

describe('automation without AUTOMATION_ALLOW_PRIVATE_TARGETS', () => {
  let t: TestApp;
  let receiver: Receiver;
  let caller: Caller;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    t = await startTestApp();
    const tenant = await seedTenant(t.app);
    caller = await seedCaller(t.app, tenant.id);
  });
  afterAll(async () => {
    await t.stop();
    await receiver.stop();
  });

  it.each([
    ['loopback', () => `${receiver.url}/x`],
    ['localhost by name', () => 'http://localhost:9/x'],
    ['IPv6 loopback', () => 'http://[::1]:9/x'],
    ['IPv4-mapped loopback', () => 'http://[::ffff:127.0.0.1]/x'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data'],
    ['private network', () => 'https://10.0.0.5/'],
    ['decimal loopback', () => 'http://2130706433/'],
    ['hex IPv4-mapped loopback', () => 'http://[::ffff:7f00:1]/x'],
    ['IPv4-translated loopback', () => 'http://[::ffff:0:127.0.0.1]/x'],
    ['IPv4-translated private network', () => 'http://[::ffff:0:a00:5]/x'],
    ['IPv4-compatible loopback', () => 'http://[::127.0.0.1]/x'],
    ['NAT64 private network', () => 'http://[64:ff9b::10.0.0.5]/x'],
    ['6to4 loopback', () => 'http://[2002:7f00:1::1]/x'],
    ['Teredo', () => 'http://[2001:0:4136:e378::1]/x'],
    ['unique local', () => 'http://[fd00::1]/x'],
    ['IPv6 link-local', () => 'http://[fe80::1]/x'],
    ['IPv6 site-local', () => 'http://[fec0::1]/x'],
    ['IPv6 unspecified', () => 'http://[::]/x'],
    ['unspecified IPv4', () => 'http://0.0.0.0:9/x'],
  ])('refuses a %s target when the rule is saved', async (_label, url) => {
    const res = await call(t.url, 'POST', PATH, {
      token: caller.token,
      body: { name: 'n', match: { topic: 'detections' }, action: { type: 'webhook', url: url() } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe('target_not_allowed');
  });

  it('refuses at delivery a target that has turned private since (DNS rebinding), without retrying', async () => {
    const saved = await call(t.url, 'POST', PATH, {
      token: caller.token,
      body: { name: 'n', match: { topic: 'detections' }, action: { type: 'webhook', url: 'http://93.184.215.14/hook' } },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const ruleId = saved.body.rule.rule_id;
    // The name now resolves to loopback: as if its DNS record had changed after the check.
    await t.app.db.prisma.automationRule.update({ where: { id: ruleId }, data: { webhookUrl: receiver.url.replace('127.0.0.1', 'localhost') + '/rebound' } });
    await t.app.services.events.record({ customerId: caller.customerId, topic: 'detections', kind: 'detection_run_completed' });
    const runs = async () => (await call(t.url, 'GET', `${PATH}?rule_id=${ruleId}`, { token: caller.token })).body.rule.recent_runs;
    await expect.poll(async () => (await runs())[0]?.status).toBe('failed');
    expect((await runs())[0]).toMatchObject({ attempts: 1, error: expect.stringMatching(/^target_not_allowed/) });
    expect(receiver.requests).toHaveLength(0);
  });
});
