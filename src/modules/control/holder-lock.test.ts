import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, sharedSecretsKey, startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';
import { startServerProcess } from '../../../test/kit/server-process.js';

/** The `application_name` of the killed server's database connections (node-postgres reads PGAPPNAME). */
const DOOMED = 'doomed-server';

/** The doomed server, with no launcher in between, so that SIGKILL kills what holds the channels. */
const startDoomedServer = (databaseUrl: string, secretsKey: { SECRETS_KEY: string }) => startServerProcess(databaseUrl, { PGAPPNAME: DOOMED, ...secretsKey });

describe('control channels of a server process that dies', () => {
  let a: TestApp;
  let restarted: TestApp | undefined;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  const open: FakeCollector[] = [];

  const enrol = async (url: string, machineId: string) => {
    const provisioned = await call(a.url, 'POST', '/rest/nodes/provision/1.0', {
      token: tree.mspCaller.token,
      body: { customer_id: tree.childA.id, machine_id: machineId },
    });
    const token = await FakeCollector.exchange(url, provisioned.body.access_key);
    const collector = await FakeCollector.connect(url, token, { machine_id: machineId, hostname: machineId, os: 'linux', arch: 'amd64' });
    collector.answer = () => ({ ok: true, data: { diagnostics: { machine: machineId }, recent_logs: [] } });
    open.push(collector);
    return collector.welcome.node_id as string;
  };
  const get = (app: TestApp, path: string) => call(app.url, 'GET', path, { token: tree.mspCaller.token });
  const backendsOf = async (applicationName: string) => {
    const { rows } = await a.app.db.pool.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
      applicationName,
    ]);
    return rows[0].n as number;
  };

  beforeAll(async () => {
    a = await startTestApp({ env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    tree = await seedTree(a.app);
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await restarted?.stop();
    await a.stop();
  });

  it('are released: its nodes show disconnected and commands answer 409 at once, while other processes keep theirs', { timeout: 120_000 }, async () => {
    const doomed = await startDoomedServer(a.config.databaseUrl!, sharedSecretsKey(a.config.dataDir));
    let heldByDoomed: string[];
    let heldByLive: string;
    try {
      heldByDoomed = [await enrol(doomed.url, 'crash-1'), await enrol(doomed.url, 'crash-2')];
      heldByLive = await enrol(a.url, 'crash-live');
      // As reported: last heard from minutes ago, so only the channel itself made the nodes connected.
      await a.app.db.prisma.node.updateMany({ where: { id: { in: [...heldByDoomed, heldByLive] } }, data: { lastSeenAt: new Date(Date.now() - 5 * 60_000) } });
    } finally {
      doomed.child.kill('SIGKILL');
      await doomed.exited;
    }
    // PostgreSQL has seen the dead process's connections go (it takes milliseconds).
    await expect.poll(() => backendsOf(DOOMED)).toBe(0);

    // A process that stayed up finds the holder gone when asked for a command.
    const started = Date.now();
    const diagnostics = await get(a, `/rest/nodes/1.0/${heldByDoomed[1]}/diagnostics`);
    expect(diagnostics.status).toBe(409);
    expect(diagnostics.body.code).toBe('not_connected');
    expect(Date.now() - started).toBeLessThan(1000);

    // The process started again releases the rest before it serves anything.
    restarted = await startTestApp({ databaseUrl: a.config.databaseUrl, env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    for (const nodeId of heldByDoomed) {
      const node = await get(restarted, `/rest/nodes/1.0/${nodeId}`);
      expect(node.body).toMatchObject({ connection: { control_plane: false }, health: { status: 'degraded' } });
      const res = await get(restarted, `/rest/nodes/1.0/${nodeId}/diagnostics`);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('not_connected');
    }
    const live = await get(restarted, `/rest/nodes/1.0/${heldByLive}`);
    expect(live.body.connection.control_plane).toBe(true);
    const relayed = await get(restarted, `/rest/nodes/1.0/${heldByLive}/diagnostics`);
    expect(relayed.status).toBe(200);
    expect(relayed.body.diagnostics).toEqual({ machine: 'crash-live' });
  });

  it('are closed when their process loses its lock, and come back under a new one', async () => {
    const nodeId = await enrol(a.url, 'lock-lost');
    const channel = open.at(-1)!;
    const holderKey = async () => (await a.app.db.prisma.node.findUniqueOrThrow({ where: { id: nodeId } })).controlSession?.split('.')[0] ?? null;
    const before = await holderKey();
    // As when the connection holding the lock drops (a PostgreSQL restart, a network failure).
    await a.app.db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND objid::text = $1", [before]);
    await expect.poll(() => channel.closed?.code).toBe(1012);
    await expect.poll(holderKey).toBeNull();
    expect(await enrol(a.url, 'lock-lost')).toBe(nodeId);
    expect(await holderKey()).not.toBe(before);
    expect((await get(a, `/rest/nodes/1.0/${nodeId}/diagnostics`)).status).toBe(200);
  });
});
