import { gunzipSync, gzipSync } from 'node:zlib';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call, fetchDocumented } from '../../../test/kit/http.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';
import { newId } from '../../infra/ids.js';
import { nodeConnectionTopic } from './hub.js';

const hello = (machineId: string, extra: Record<string, unknown> = {}) => ({
  machine_id: machineId,
  hostname: `host-${machineId}`,
  collector_version: '1.0.0',
  os: 'linux',
  arch: 'amd64',
  local_ip: '10.0.0.7',
  public_ip: '198.51.100.7',
  hardware: { cpus: 2 },
  services: { packet: { enabled: true } },
  ...extra,
});

describe('collector control channel and node commands', () => {
  let a: TestApp;
  let b: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  const open: FakeCollector[] = [];

  /** Provision for child A and connect a fake collector with that credential. */
  const enrol = async (machineId: string, extra: Record<string, unknown> = {}, app = a, profileId?: string) => {
    const provisioned = await call(app.url, 'POST', '/rest/nodes/provision/1.0', {
      token: tree.mspCaller.token,
      body: { customer_id: tree.childA.id, machine_id: machineId, profile_id: profileId },
    });
    const token = await FakeCollector.exchange(app.url, provisioned.body.access_key);
    const collector = await FakeCollector.connect(app.url, token, hello(machineId, extra));
    open.push(collector);
    return { collector, nodeId: collector.welcome.node_id as string, token };
  };

  beforeAll(async () => {
    // Two server processes' worth of app, sharing one database (and one ClickHouse).
    a = await startTestApp({ env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    b = await startTestApp({ databaseUrl: a.config.databaseUrl, env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    tree = await seedTree(a.app);
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await b.stop();
    await a.stop();
  });

  it('refuses an upgrade without a valid ingest token', async () => {
    const statusOf = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(a.url.replace('http', 'ws') + '/collector/control/1.0', { headers });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
    expect(await statusOf({})).toBe(401);
    expect(await statusOf({ authorization: 'Bearer nope' })).toBe(401);
    expect(await statusOf({ authorization: `Bearer ${tree.mspCaller.token}` })).toBe(101);
    const nodeApiOnly = await seedCaller(a.app, tree.msp.id, ['p.token.scope.node_api']);
    expect(await statusOf({ authorization: `Bearer ${nodeApiOnly.token}` })).toBe(403);
  });

  it('welcomes a collector with its node and config, and shows it connected with its reported facts', async () => {
    const { collector, nodeId } = await enrol('ctl-welcome');
    expect(collector.welcome).toMatchObject({ type: 'welcome', status: 'active', heartbeat_interval_s: 15 });
    expect(collector.welcome.config).toMatchObject({ profile_id: null, update_channel: 'stable', services: { packet: { enabled: true } } });
    const node = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}?hardware=true`, { token: tree.mspCaller.token });
    expect(node.body).toMatchObject({
      connection: { control_plane: true },
      health: { status: 'healthy' },
      network: { local_ip: '10.0.0.7', public_ip: '198.51.100.7' },
      collector_version: '1.0.0',
      hardware: { cpus: 2 },
    });
  });

  it('closes a channel whose first frame is not a hello', async () => {
    const provisioned = await call(a.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id } });
    const token = await FakeCollector.exchange(a.url, provisioned.body.access_key);
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(a.url.replace('http', 'ws') + '/collector/control/1.0', { headers: { authorization: `Bearer ${token}` } });
      ws.on('open', () => ws.send(JSON.stringify({ type: 'heartbeat' })));
      ws.on('close', (c) => resolve(c));
    });
    expect(code).toBe(4400);
  });

  describe('a hello the node could not keep', () => {
    const deep = (depth: number) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    it.each([
      ['a NUL in hostname', { hostname: 'a\u0000b' }, 'hostname must not contain control characters'],
      ['a lone surrogate in hostname', { hostname: 'a\ud800' }, 'hostname must not contain control characters'],
      ['a bidi override in hostname', { hostname: 'web\u202Etxt.exe' }, 'hostname must not contain invisible formatting characters (found U+202E)'],
      ['a zero-width space in machine_id', { machine_id: 'm\u200B1' }, 'machine_id must not contain invisible formatting characters (found U+200B)'],
      ['a NUL in a legacy machine_id', { kind: 'legacy', machine_id: 'm\u0000' }, 'machine_id must not contain control characters'],
      ['a NUL inside hardware', { hardware: { x: 'a\u0000' } }, 'hardware must not contain NUL or lone surrogates'],
      ['hardware nested 200 deep', { hardware: { x: deep(200) } }, 'hardware must not nest deeper than 16 levels'],
      ['100 KiB of services', { services: { blob: 'x'.repeat(100 * 1024) } }, 'services must be at most 65536 bytes of JSON'],
      ['a hello of 2 MiB, refused before it is parsed', { hardware: { blob: 'x'.repeat(2 * 1024 * 1024) } }, null],
    ])('closes 4400 naming the field for %s, and stores nothing', async (_name, facts, reason) => {
      const provisioned = await call(a.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id } });
      const token = await FakeCollector.exchange(a.url, provisioned.body.access_key);
      const ingest = await seedCaller(a.app, tree.childA.id, ['p.token.scope.ingest']);
      const legacy = (facts as { kind?: string }).kind === 'legacy';
      const nodesBefore = await a.app.db.prisma.node.count();
      const refusal = reason ? `closed 4400 malformed message: ${reason}` : 'closed 4400 hello must be at most 1048576 bytes';
      await expect(FakeCollector.connect(a.url, legacy ? ingest.token : token, { ...hello('ctl-hostile'), ...facts })).rejects.toThrow(refusal);
      expect(await a.app.db.prisma.node.count()).toBe(nodesBefore);
    });
  });

  describe('diagnostics', () => {
    it("answers with the collector's diagnostics and logs, clamping log_lines to 1..1000", async () => {
      const { collector, nodeId } = await enrol('ctl-diag');
      collector.answer = (cmd) => ({
        ok: true,
        data: { diagnostics: { uptime_s: 5, asked: cmd.args.log_lines }, recent_logs: Array.from({ length: 3 }, (_, i) => `line ${i}`) },
      });
      const res = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics?log_lines=2`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ node_id: nodeId, diagnostics: { uptime_s: 5, asked: 2 }, recent_logs: ['line 1', 'line 2'] });
      for (const [asked, sent] of [
        ['0', 1],
        ['99999999999', 1000],
        ['-5', 1],
      ] as const) {
        const clamped = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics?log_lines=${asked}`, { token: tree.mspCaller.token });
        expect(clamped.body.diagnostics.asked).toBe(sent);
      }
      expect((await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics?log_lines=abc`, { token: tree.mspCaller.token })).status).toBe(400);
    });

    it('reaches a collector connected to another server process', async () => {
      const { collector, nodeId } = await enrol('ctl-relay');
      collector.answer = () => ({ ok: true, data: { diagnostics: { via: 'relay' }, recent_logs: [] } });
      const res = await call(b.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body.diagnostics).toEqual({ via: 'relay' });
    });

    it.each([
      ['nested 200 deep', JSON.parse(`${'['.repeat(200)}1${']'.repeat(200)}`), 'must not nest deeper than 64 levels'],
      ['holding a NUL', 'a\u0000', 'must not contain NUL or lone surrogates'],
    ])('answers 504 at once for an answer %s, here and relayed, and the holder lives on', async (_name, value, problem) => {
      const { collector, nodeId } = await enrol(`ctl-bad-${problem.length}`);
      collector.answer = () => ({ ok: true, data: { diagnostics: { x: value }, recent_logs: [] } });
      for (const app of [a, b]) {
        const res = await call(app.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
        expect(res.status).toBe(504);
        expect(res.body).toMatchObject({ code: 'diagnostic_pull_failed', message: `The collector could not do it: the answer's data ${problem}` });
      }
      collector.answer = () => ({ ok: true, data: { diagnostics: { fine: true }, recent_logs: [] } });
      expect((await call(b.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token })).body.diagnostics).toEqual({ fine: true });
    });

    it('answers 504 when the collector is silent, 409 when it is gone or drops mid-command, 404 outside the tree', async () => {
      const { collector, nodeId } = await enrol('ctl-silent');
      const silent = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(silent.status).toBe(504);
      expect(silent.body.code).toBe('diagnostic_pull_failed');

      collector.answer = () => {
        void collector.close();
        return undefined;
      };
      const dropped = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(dropped.status).toBe(409);
      expect(dropped.body.code).toBe('not_connected');
      await expect.poll(async () => (await a.app.db.prisma.node.findUniqueOrThrow({ where: { id: nodeId } })).controlSession).toBeNull();
      const gone = await call(b.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(gone.status).toBe(409);
      const other = await seedTree(a.app);
      expect((await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: other.mspCaller.token })).status).toBe(404);
    });
  });

  describe('pprof', () => {
    it('returns the gzipped profile as an attachment; validates type; caps duration', async () => {
      const { collector, nodeId } = await enrol('ctl-pprof');
      const profile = gzipSync(Buffer.from('profile-bytes'));
      let duration = -1;
      collector.answer = (cmd) => {
        duration = cmd.args.duration_s as number;
        return { ok: true, data: { profile_b64: profile.toString('base64') } };
      };
      const res = await fetchDocumented(`${a.url}/rest/nodes/1.0/${nodeId}/pprof?type=CPU&duration=600`, {
        headers: { authorization: `Bearer ${tree.mspCaller.token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${nodeId}-cpu.pprof"`);
      expect(gunzipSync(Buffer.from(await res.arrayBuffer())).toString()).toBe('profile-bytes');
      expect(duration).toBe(60);
      const heap = await fetchDocumented(`${a.url}/rest/nodes/1.0/${nodeId}/pprof`, { headers: { authorization: `Bearer ${tree.mspCaller.token}` } });
      expect(heap.headers.get('content-disposition')).toContain('-heap.pprof');
      const bad = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/pprof?type=FLAME`, { token: tree.mspCaller.token });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('invalid_type');
      collector.answer = () => ({ ok: false, error: { code: 'busy', message: 'profiler busy' } });
      const failed = await call(a.url, 'GET', `/rest/nodes/1.0/${nodeId}/pprof?type=HEAP`, { token: tree.mspCaller.token });
      expect(failed.status).toBe(504);
      expect(failed.body.code).toBe('pprof_capture_failed');
    });
  });

  describe('update', () => {
    it('sends the latest release, or says already_current; 502 update_failed when there is none or the collector fails', async () => {
      const { collector, nodeId } = await enrol('ctl-update', { arch: 'arm7' });
      const noRelease = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/update`, { token: tree.mspCaller.token });
      expect(noRelease.status).toBe(502);
      expect(noRelease.body).toMatchObject({ code: 'update_failed', message: 'No stable release for linux/arm7 to update to' });
      const release = await a.app.services.collector.publish({
        file: Buffer.from('binary 1.4.0'),
        version: '1.4.0',
        channel: 'stable',
        os: 'linux',
        arch: 'arm7',
      });
      let sent: Record<string, unknown> = {};
      collector.answer = (cmd) => {
        sent = cmd.args;
        return { ok: true, data: { version: cmd.args.version } };
      };
      const res = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/update`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ node_id: nodeId, update_status: 'update_sent', version: '1.4.0', platform: 'linux_arm7' });
      expect(sent).toMatchObject({ version: '1.4.0', sha256: release.sha256, url: expect.stringContaining(`/rest/collector/assets/1.0/${release.id}/`) });
      expect((await fetch(sent.url as string)).status).toBe(200);
      collector.answer = () => ({ ok: false, error: { code: 'disk_full', message: 'no space left' } });
      const failed = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/update`, { token: tree.mspCaller.token });
      expect(failed.status).toBe(502);
      expect(failed.body.code).toBe('update_failed');
      collector.answer = () => undefined;
      const silent = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/update`, { token: tree.mspCaller.token });
      expect(silent.status).toBe(502);
      expect(silent.body.code).toBe('update_failed');

      const current = await enrol('ctl-current', { arch: 'arm7', collector_version: '1.4.0' });
      const same = await call(a.url, 'POST', `/rest/nodes/1.0/${current.nodeId}/update`, { token: tree.mspCaller.token });
      expect(same.body).toEqual({ node_id: current.nodeId, update_status: 'already_current', version: '1.4.0' });
    });
  });

  describe('manage (legacy)', () => {
    it('validates the operation, relays it to a connected legacy node; 504 timeout when it fails or is silent', async () => {
      const ingest = await seedCaller(a.app, tree.childA.id, ['p.token.scope.ingest']);
      const legacy = await FakeCollector.connect(a.url, ingest.token, hello('legacy-ctl', { kind: 'legacy' }));
      open.push(legacy);
      const nodeId = legacy.welcome.node_id;
      legacy.answer = (cmd) => ({ ok: true, data: { operation: cmd.args.operation, state: 'running' } });
      const ok = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/manage`, { token: tree.mspCaller.token, body: { operation: 'status' } });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ node_id: nodeId, operation: 'status', result: { operation: 'status', state: 'running' } });
      const unknown = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/manage`, { token: tree.mspCaller.token, body: { operation: 'format' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.code).toBe('unknown_operation');
      legacy.answer = () => ({ ok: false, error: { code: 'busy', message: 'a restart is running' } });
      const failed = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/manage`, { token: tree.mspCaller.token, body: { operation: 'pull' } });
      expect(failed.status).toBe(504);
      expect(failed.body).toMatchObject({ code: 'timeout', message: 'The legacy node could not do it: a restart is running' });
      legacy.answer = () => undefined;
      const slow = await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/manage`, { token: tree.mspCaller.token, body: { operation: 'restart' } });
      expect(slow.status).toBe(504);
      expect(slow.body.code).toBe('timeout');
      await legacy.close();
      await expect
        .poll(async () => (await call(a.url, 'POST', `/rest/nodes/1.0/${nodeId}/manage`, { token: tree.mspCaller.token, body: { operation: 'logs' } })).status)
        .toBe(404);
      const missing = await call(a.url, 'POST', `/rest/nodes/1.0/node_missing/manage`, { token: tree.mspCaller.token, body: { operation: 'logs' } });
      expect(missing.body.code).toBe('not_connected');
    });
  });

  describe('a second channel for the same node', () => {
    const sessionOf = async (nodeId: string) => (await a.app.db.prisma.node.findUniqueOrThrow({ where: { id: nodeId } })).controlSession!;
    const reconnect = async (app: TestApp, token: string, machineId: string) => {
      const collector = await FakeCollector.connect(app.url, token, hello(machineId));
      collector.answer = () => ({ ok: true, data: { diagnostics: { channel: 'newer' }, recent_logs: [] } });
      open.push(collector);
      return collector;
    };
    /**
     * Publishes a connect event again, as NOTIFY delivers one late, and waits until every process
     * has it: a marker published after it arrives after it.
     */
    const replayConnect = async (nodeId: string, session: string) => {
      const marker = newId('marker');
      const arrived: Array<Promise<void>> = [];
      const unsubscribes = await Promise.all(
        [a, b].map(({ app }) => {
          let markerSeen!: () => void;
          arrived.push(new Promise((resolve) => (markerSeen = resolve)));
          return app.services.pubsub.subscribe(nodeConnectionTopic, (event) => event.session === marker && markerSeen());
        }),
      );
      const { pubsub } = a.app.services;
      await pubsub.publish(nodeConnectionTopic, { nodeId, customerId: tree.childA.id, session, connected: true });
      await pubsub.publish(nodeConnectionTopic, { nodeId: marker, customerId: tree.childA.id, session: marker, connected: false });
      await Promise.all(arrived);
      unsubscribes.forEach((unsubscribe) => unsubscribe());
    };

    it("replaces the older one in the same process, and the older one's late connect event closes nothing", async () => {
      const older = await enrol('ctl-twice');
      const olderSession = await sessionOf(older.nodeId);
      const newer = await reconnect(a, older.token, 'ctl-twice');
      expect(newer.welcome.node_id).toBe(older.nodeId);
      await expect.poll(() => older.collector.closed?.code).toBe(4409);
      await replayConnect(older.nodeId, olderSession);
      const res = await call(a.url, 'GET', `/rest/nodes/1.0/${older.nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(res.body.diagnostics).toEqual({ channel: 'newer' });
      expect(newer.closed).toBeUndefined();
      expect(await sessionOf(older.nodeId)).not.toBe(olderSession);
    });

    it("replaces the older one held by another process, and the older one's late connect event closes nothing", async () => {
      const older = await enrol('ctl-twice-across');
      const olderSession = await sessionOf(older.nodeId);
      const newer = await reconnect(b, older.token, 'ctl-twice-across');
      await expect.poll(() => older.collector.closed?.code).toBe(4409);
      await replayConnect(older.nodeId, olderSession);
      const res = await call(a.url, 'GET', `/rest/nodes/1.0/${older.nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(res.body.diagnostics).toEqual({ channel: 'newer' });
      expect(newer.closed).toBeUndefined();
    });
  });

  it("pushes the new configuration when the node's profile is deleted", async () => {
    const profile = await a.app.db.prisma.profile.create({
      data: { id: newId('prof'), customerId: tree.childA.id, name: 'temp', services: { netflow: { enabled: true, port: 9995 } } },
    });
    const { collector } = await enrol('ctl-config', {}, a, profile.id);
    expect(collector.welcome.config.services.netflow).toMatchObject({ enabled: true, port: 9995 });
    const res = await call(a.url, 'DELETE', `/rest/profiles/1.0/${profile.id}`, { token: tree.mspCaller.token, headers: { 'content-length': '0' } });
    expect(res.status).toBe(200);
    await expect.poll(() => collector.received.filter((m) => m.type === 'config').length).toBe(1);
    const config = collector.received.find((m) => m.type === 'config')!.config;
    expect(config.profile_id).toBeNull();
    expect(config.services.netflow.port).toBe(2055);
  });

  it('streams connection changes through the nodeStatus subscription, from any process', async () => {
    const { collector, nodeId } = await enrol('ctl-watch');
    const client = createClient({
      url: b.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${tree.mspCaller.token}` },
    });
    const seen: boolean[] = [];
    const done = new Promise<void>((resolve, reject) => {
      client.subscribe(
        { query: 'subscription($id: String!) { nodeStatus(nodeId: $id) { nodeId connection { controlPlane } health { status } } }', variables: { id: nodeId } },
        {
          next: (msg) => {
            const node = (msg.data as any)?.nodeStatus;
            seen.push(node.connection.controlPlane);
            if (seen.length === 1) void collector.close();
            if (seen.length === 2) resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    await done;
    await client.dispose();
    // Connected, then (after the close) the node is reported from its last heartbeat, still within 90 s.
    expect(seen[0]).toBe(true);
  });

  it("closes the channels of a deleted deployment's collectors", async () => {
    const child = await call(a.url, 'POST', '/rest/deployments/1.0', {
      token: tree.mspCaller.token,
      body: { name: 'Short lived', handle: `short_${Date.now()}`, parent_id: tree.msp.id },
    });
    const childId = child.body.deployment.customer.customer_id;
    const provisioned = await call(a.url, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: childId } });
    const token = await FakeCollector.exchange(a.url, provisioned.body.access_key);
    const collector = await FakeCollector.connect(a.url, token, hello('doomed'));
    await call(a.url, 'DELETE', '/rest/deployments/1.0', { token: tree.mspCaller.token, body: { customer_id: childId, parent_id: tree.msp.id } });
    await expect.poll(() => collector.closed?.code).toBe(4401);
  });
});
