import { type Client, createClient } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

const START = `mutation($hostname: String, $machineId: String, $nodeId: String) {
  startDeviceAuthorization(hostname: $hostname, machineId: $machineId, nodeId: $nodeId) { deviceCode userCode authUrl pollInterval expiresIn } }`;
const INFO = `query($code: String) { deviceAuthorization(deviceCode: $code) { deviceCode hostname machineId nodeId status createdAt expiresAt } }`;
const APPROVE = `mutation($code: String, $action: String) { approveDeviceAuthorization(deviceCode: $code, action: $action) { status } }`;
const POLL = `mutation($code: String) { pollDeviceAuthorization(deviceCode: $code) { status accessKey nodeId slowDown pollInterval } }`;
const WATCH = `subscription($code: String) { deviceAuthorizationStatus(deviceCode: $code) { deviceCode hostname machineId status expiresAt } }`;

type Event = { data?: { deviceAuthorizationStatus: { status: string; hostname: string } }; errors?: unknown[] };

/** A graphql-ws subscription as a browser or a device would hold it, recording what arrives. */
function watch(client: Client, code: string, by: 'deviceCode' | 'userCode' = 'deviceCode') {
  const events: Event[] = [];
  let error: unknown;
  let completed = false;
  const dispose = client.subscribe(
    { query: by === 'deviceCode' ? WATCH : WATCH.replaceAll('deviceCode', 'userCode'), variables: { code } },
    {
      next: (value) => void events.push(value as Event),
      error: (e) => void (error = e),
      complete: () => void (completed = true),
    },
  );
  const statuses = () => events.map((e) => e.data?.deviceAuthorizationStatus.status);
  return {
    events,
    statuses,
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
    dispose,
    until: (expected: string[], timeout = 5000) => vi.waitFor(() => expect(statuses()).toEqual(expected), { timeout, interval: 20 }),
  };
}

const wsClient = (t: TestApp) => createClient({ url: `${t.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });

describe('device authorization over GraphQL', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let client: Client;

  const start = async (vars: Record<string, unknown> = { hostname: 'gql-host', machineId: 'gql-machine' }) =>
    (await graphql(t.url, START, vars)).data.startDeviceAuthorization as { deviceCode: string; userCode: string; authUrl: string };

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    client = wsClient(t);
  });
  afterAll(async () => {
    await client.dispose();
    await t.stop();
  });

  it('runs the whole flow through queries and mutations', async () => {
    const grant = await start({ hostname: 'gql', nodeId: 'node-g' });
    expect(grant.authUrl).toBe(`${t.url}/console/device?user_code=${grant.userCode}`);
    const info = await graphql(t.url, INFO, { code: grant.deviceCode });
    expect(info.data.deviceAuthorization).toMatchObject({ hostname: 'gql', machineId: 'node-g', nodeId: 'node-g', status: 'pending' });
    expect((await graphql(t.url, APPROVE, { code: grant.deviceCode }, tree.mspCaller.token)).data.approveDeviceAuthorization).toEqual({
      status: 'approved',
    });
    const polled = await graphql(t.url, POLL, { code: grant.deviceCode });
    expect(polled.data.pollDeviceAuthorization).toMatchObject({ status: 'approved', accessKey: expect.stringMatching(/^cl_.+\..+$/), nodeId: 'node-g' });
    const again = await graphql(t.url, POLL, { code: grant.deviceCode });
    expect(again.data.pollDeviceAuthorization).toMatchObject({ status: 'approved', accessKey: null, slowDown: true, pollInterval: 5 });
  });

  it('looks up, watches and approves by user code without ever revealing the device code', async () => {
    const grant = await start({ hostname: 'gql-user-code', machineId: 'gql-uc' });
    const byUser = `query($code: String) { deviceAuthorization(userCode: $code) { deviceCode userCode hostname status } }`;
    expect((await graphql(t.url, byUser, { code: grant.userCode.toLowerCase() })).data.deviceAuthorization).toEqual({
      deviceCode: null,
      userCode: grant.userCode,
      hostname: 'gql-user-code',
      status: 'pending',
    });
    const sub = watch(client, grant.userCode, 'userCode');
    await sub.until(['pending']);
    const approve = `mutation($code: String) { approveDeviceAuthorization(userCode: $code) { status } }`;
    expect((await graphql(t.url, approve, { code: grant.userCode }, tree.mspCaller.token)).data.approveDeviceAuthorization).toEqual({ status: 'approved' });
    await sub.until(['pending', 'approved']);
    expect(JSON.stringify(sub.events)).not.toContain(grant.deviceCode);
    expect((await graphql(t.url, POLL, { code: grant.userCode })).data.pollDeviceAuthorization).toMatchObject({ status: 'expired', accessKey: null });
  });

  it("names the node of the caller's tenant that already has the machine id, to a signed-in caller only", async () => {
    const machineId = `gql-enrolled-${Math.random().toString(36).slice(2)}`;
    const first = await start({ hostname: 'original', machineId });
    await graphql(t.url, APPROVE, { code: first.deviceCode }, tree.childACaller.token);
    const key = (await graphql(t.url, POLL, { code: first.deviceCode })).data.pollDeviceAuthorization.accessKey as string;
    const dot = key.indexOf('.');
    const deviceToken = (await t.app.services.auth.issueToken(key.slice(0, dot), key.slice(dot + 1))).access_token;
    const deviceSession = (await t.app.services.auth.authenticate(`Bearer ${deviceToken}`))!;
    const node = await t.app.services.nodes.register(deviceSession, { machineId, hostname: 'original' });

    const second = await start({ hostname: 'impostor', machineId });
    const enrolled = `query($code: String) { deviceAuthorization(userCode: $code) { enrolledNode { id hostname } } }`;
    const ask = async (token?: string) => (await graphql(t.url, enrolled, { code: second.userCode }, token)).data.deviceAuthorization.enrolledNode;
    expect(await ask(tree.childACaller.token)).toEqual({ id: node.id, hostname: 'original' });
    expect(await ask()).toBeNull();
    // Another tenant's node is none of this caller's business (and approving there enrols a new node).
    expect(await ask(tree.childBCaller.token)).toBeNull();
  });

  it.each([
    ['start without fields', START, {}, undefined, 'error'],
    ['info without a code', INFO, {}, undefined, 'missing_required_fields'],
    ['info for an unknown code', INFO, { code: 'x'.repeat(32) }, undefined, 'not_found'],
    ['approve without a token', APPROVE, { code: 'x' }, 'none', 'authentication_error'],
    ['approve without a code', APPROVE, {}, 'msp', 'missing_required_fields'],
    ['approve an unknown code', APPROVE, { code: 'x'.repeat(32) }, 'msp', 'not_found'],
    ['poll without a code', POLL, {}, undefined, 'error'],
  ])('answers %s with the REST code', async (_name, doc, variables, who, code) => {
    const res = await graphql(t.url, doc, variables, who === 'msp' ? tree.mspCaller.token : undefined);
    expect(res.errors?.[0].extensions).toMatchObject({ code });
  });

  describe('subscription deviceAuthorizationStatus', () => {
    afterEach(() => vi.useRealTimers());

    it('yields the current status at once, then the approval made over REST, then completes', async () => {
      const grant = await start();
      const sub = watch(client, grant.deviceCode);
      await sub.until(['pending']);
      expect(sub.events[0].data?.deviceAuthorizationStatus).toMatchObject({ hostname: 'gql-host', machineId: 'gql-machine' });
      const res = await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', {
        token: tree.childACaller.token,
        body: { device_code: grant.deviceCode },
      });
      expect(res.status).toBe(200);
      await sub.until(['pending', 'approved']);
      await vi.waitFor(() => expect(sub.completed).toBe(true));
    });

    it('yields a denial made over GraphQL', async () => {
      const grant = await start();
      const sub = watch(client, grant.deviceCode);
      await sub.until(['pending']);
      await graphql(t.url, APPROVE, { code: grant.deviceCode, action: 'deny' }, tree.mspCaller.token);
      await sub.until(['pending', 'denied']);
      await vi.waitFor(() => expect(sub.completed).toBe(true));
    });

    it('yields a final state once and completes when subscribed after the decision', async () => {
      const grant = await start();
      await graphql(t.url, APPROVE, { code: grant.deviceCode }, tree.mspCaller.token);
      const sub = watch(client, grant.deviceCode);
      await sub.until(['approved']);
      await vi.waitFor(() => expect(sub.completed).toBe(true));
    });

    it('tells every subscriber of the same code', async () => {
      const grant = await start();
      const other = wsClient(t);
      const subs = [watch(client, grant.deviceCode), watch(other, grant.deviceCode), watch(client, grant.deviceCode)];
      await Promise.all(subs.map((s) => s.until(['pending'])));
      await graphql(t.url, APPROVE, { code: grant.deviceCode }, tree.mspCaller.token);
      await Promise.all(subs.map((s) => s.until(['pending', 'approved'])));
      await other.dispose();
    });

    it('answers an unknown code with one not_found result, then completes', async () => {
      const sub = watch(client, 'q'.repeat(32));
      await vi.waitFor(() => expect(sub.completed).toBe(true));
      expect(sub.events).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'not_found' }) })] }]);
    });

    it('stops listening when the client unsubscribes', async () => {
      const grant = await start();
      const local = (t.app.services.pubsub as unknown as { local: Map<string, Set<unknown>> }).local;
      const before = local.get('device_authorization_changed')?.size ?? 0;
      const sub = watch(client, grant.deviceCode);
      await sub.until(['pending']);
      expect(local.get('device_authorization_changed')?.size).toBe(before + 1);
      sub.dispose();
      await vi.waitFor(() => expect(local.get('device_authorization_changed')?.size).toBe(before));
    });
  });
});

describe('device authorization subscription: expiry and other processes', () => {
  let a: TestApp;
  let b: TestApp;
  let clientB: Client;

  beforeAll(async () => {
    a = await startTestApp({ env: { DEVICE_CODE_TTL_SECONDS: '2' } });
    b = await startTestApp({ databaseUrl: a.config.databaseUrl, env: { DEVICE_CODE_TTL_SECONDS: '2' } });
    clientB = wsClient(b);
  });
  afterAll(async () => {
    await clientB.dispose();
    await b.stop();
    await a.stop();
  });

  it('pushes `expired` when the lifetime runs out, with no other trigger', async () => {
    const grant = (await graphql(a.url, START, { hostname: 'h', machineId: 'm' })).data.startDeviceAuthorization;
    const sub = watch(clientB, grant.deviceCode);
    await sub.until(['pending']);
    const started = Date.now();
    await sub.until(['pending', 'expired'], 4000);
    expect(Date.now() - started).toBeLessThan(2600);
    await vi.waitFor(() => expect(sub.completed).toBe(true));
  });

  it('delivers an approval made in one process to a subscriber of another', async () => {
    const tree = await seedTree(a.app);
    const grant = (await call(a.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'x-proc', machine_id: 'm' } })).body;
    const sub = watch(clientB, grant.device_code);
    await sub.until(['pending']);
    const res = await call(a.url, 'POST', '/rest/oauth2/device/approve/1.0', {
      token: tree.mspCaller.token,
      body: { device_code: grant.device_code },
    });
    expect(res.status).toBe(200);
    await sub.until(['pending', 'approved'], 3000);
    // The other process sees the same state, and the key is still handed out once across both.
    const polls = await Promise.all(
      [a, b, a, b].map((app) => call(app.url, 'POST', '/rest/oauth2/device/poll/1.0', { body: { device_code: grant.device_code } })),
    );
    expect(polls.filter((p) => p.body.access_key)).toHaveLength(1);
  });
});
