/**
 * Deleting a deployment whose collector sent 500 one-flow batches (500 parts: merges are held
 * back, as when a table has not caught up), on a server that is killed with SIGKILL while the
 * deletion runs and started again (issue #25). Production's shape: DATABASE_URL and CLICKHOUSE_URL,
 * so the ClickHouse behind the servers outlives them as a server would, and the test can watch
 * its mutations.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpEngine, insertFlowBatch } from '../../src/flowstore/index.js';
import { type ClickHouseHttpServer, startClickHouseHttpServer } from '../../tools/clickhouse-http/server.js';
import { adminCli } from '../kit/admin-cli.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { createTestDatabase } from '../kit/databases.js';
import { FakeCollector } from '../kit/fake-collector.js';
import { call } from '../kit/http.js';
import { flow } from '../kit/ingest.js';
import { seedTree } from '../kit/seed.js';
import { type ServerProcess, startServerProcess } from '../kit/server-process.js';

const BATCHES = 500;
const INGEST = '/collector/ingest/1.0/flows';
const DEPLOYMENTS = '/rest/deployments/1.0';

describe('deleting a deployment with many small parts, through a crash', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-tenant-deletion-'));
  let clickhouse: ClickHouseHttpServer;
  let engine: HttpEngine;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  let seeder: TestApp;
  let doomed: ServerProcess | undefined;
  let restarted: TestApp | undefined;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  // Every process of the deployment seals and opens its keys with the one key-encryption key.
  const secretsKey = randomBytes(32).toString('base64');
  const env = () => ({ CLICKHOUSE_URL: clickhouse.url, SECRETS_KEY: secretsKey });
  const sql = (name: string, text: string, params: Record<string, unknown> = {}) => engine.query<Record<string, unknown>>(`/* ${name} */ ${text}`, params);
  const flowsOf = async (customerId: string) =>
    Number((await sql('test_count', 'SELECT count() AS n FROM flows WHERE customer_id = {c:String}', { c: customerId }))[0]!.n);
  const mutationsNaming = async (customerId: string) =>
    sql('test_mutations', "SELECT mutation_id, is_done FROM system.mutations WHERE table = 'flows' AND position(command, {c:String}) > 0", {
      c: `'${customerId}'`,
    });
  const job = async () => (await pool.query('SELECT state, steps, finished_at FROM tenant_deletions WHERE customer_id = $1', [tree.childA.id])).rows[0];

  beforeAll(async () => {
    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch') });
    engine = new HttpEngine({ url: clickhouse.url });
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    seeder = await startTestApp({ databaseUrl: database.url, ownFlowEngine: true, env: env() });
    tree = await seedTree(seeder.app);
    await seeder.stop();
  }, 120_000);
  afterAll(async () => {
    doomed?.child.kill('SIGKILL');
    await doomed?.exited;
    await restarted?.stop();
    await pool?.end();
    await engine?.close();
    await clickhouse?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'answers at once, refuses the tenant at once, keeps other tenants searchable, and finishes after a restart with one mutation',
    { timeout: 600_000 },
    async () => {
      doomed = await startServerProcess(database.url, env());
      const server = doomed.url;

      // The collector: enrolled on the doomed server, its channel open, 500 batches of one flow each.
      await engine.command('/* test_stop_merges */ SYSTEM STOP MERGES flows');
      const provisioned = await call(server, 'POST', '/rest/nodes/provision/1.0', { token: tree.mspCaller.token, body: { customer_id: tree.childA.id } });
      const token = await FakeCollector.exchange(server, provisioned.body.access_key);
      const collector = await FakeCollector.connect(server, token, { machine_id: 'doomed-1', hostname: 'doomed-1', os: 'linux', arch: 'amd64' });
      for (let i = 0; i < BATCHES; i++) {
        const res = await call(server, 'POST', INGEST, { token, body: { batch_id: `b-${i}`, flows: [flow(i)] } });
        expect(res.body.accepted).toBe(1);
      }
      expect(await flowsOf(tree.childA.id)).toBe(BATCHES);
      const parts = await sql('test_parts', "SELECT count() AS n FROM system.parts WHERE table = 'flows' AND active");
      expect(Number(parts[0]!.n)).toBeGreaterThanOrEqual(BATCHES);

      // Another tenant's flows, and its analyst searching them from before the deletion to its end.
      await insertFlowBatch(engine, { customerId: tree.childB.id, nodeId: 'node_b', batchId: 'b', flows: [flow(1), flow(2), flow(3)] });
      const window = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() };
      let searchUrl = server;
      const searches: { status: number; ms: number; hits: number }[] = [];
      let searching = true;
      const searchLoop = (async () => {
        while (searching) {
          const started = performance.now();
          const res = await call(searchUrl, 'POST', '/search/records/1.0', {
            token: tree.childBCaller.token,
            body: { instance_ids: [tree.childB.id], module: 'flows', start: { absolute: { date: window.from } }, end: { absolute: { date: window.to } } },
          }).catch(() => ({ status: 0, body: undefined }));
          searches.push({ status: res.status, ms: performance.now() - started, hits: res.body?.[tree.childB.id]?.flows?.length ?? -1 });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();

      const body = { customer_id: tree.childA.id, parent_id: tree.msp.id };
      const started = performance.now();
      const deleted = await call(server, 'DELETE', DEPLOYMENTS, { token: tree.mspCaller.token, body });
      const answeredMs = performance.now() - started;
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({
        status: 'success',
        message: expect.any(String),
        deleted: { customer_id: tree.childA.id, name: tree.childA.name, handle: tree.childA.handle },
      });
      expect(answeredMs).toBeLessThan(2_000);

      // From that moment the tenant is gone for everyone, and its credentials are refused.
      expect((await call(server, 'POST', INGEST, { token, body: { batch_id: 'late', flows: [flow(1)] } })).status).toBe(401);
      expect((await call(server, 'GET', DEPLOYMENTS, { token: tree.childACaller.token })).status).toBe(401);
      await expect.poll(() => collector.closed?.code).toBe(4401);
      const listed = await call(server, 'GET', DEPLOYMENTS, { token: tree.mspCaller.token });
      expect(listed.body.deployments.map((d: { customer_id: string }) => d.customer_id)).toEqual([tree.childB.id]);

      // The removal is under way (ClickHouse may not merge, so it cannot finish); a retry queues nothing.
      await expect.poll(async () => (await job())?.steps?.flows?.mutation_id ?? null).not.toBeNull();
      for (let i = 0; i < 3; i++) expect((await call(server, 'DELETE', DEPLOYMENTS, { token: tree.mspCaller.token, body })).status).toBe(404);
      const progress = await adminCli(['tenant', 'deletions', '--customer', tree.childA.id], { DATABASE_URL: database.url });
      expect(progress.code).toBe(0);
      expect(progress.json).toEqual([
        expect.objectContaining({
          customer_id: tree.childA.id,
          handle: tree.childA.handle,
          state: 'deleting',
          finished_at: null,
          steps: { flows: expect.objectContaining({ done: false, mutation_id: expect.any(String), parts_to_do: expect.any(Number) }) },
        }),
      ]);
      expect(progress.json[0].steps.flows.parts_to_do).toBeGreaterThan(0);
      const [mutation] = await mutationsNaming(tree.childA.id);
      expect(await mutationsNaming(tree.childA.id)).toEqual([{ mutation_id: mutation!.mutation_id, is_done: 0 }]);

      // Killed in the middle; started again, the deletion resumes where it was recorded.
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      doomed = undefined;
      restarted = await startTestApp({ databaseUrl: database.url, ownFlowEngine: true, env: env() });
      searchUrl = restarted.url;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await job()).finished_at).toBeNull();
      await engine.command('/* test_start_merges */ SYSTEM START MERGES flows');
      await expect.poll(async () => (await job()).state, { timeout: 120_000, interval: 250 }).toBe('deleted');

      expect(await flowsOf(tree.childA.id)).toBe(0);
      expect(await mutationsNaming(tree.childA.id)).toEqual([{ mutation_id: mutation!.mutation_id, is_done: 1 }]);
      expect(await restarted.app.db.prisma.tenant.count({ where: { id: tree.childA.id } })).toBe(0);
      expect(await restarted.app.db.prisma.node.count({ where: { customerId: tree.childA.id } })).toBe(0);
      expect(await restarted.app.db.prisma.apiClient.count({ where: { customerId: tree.childA.id } })).toBe(0);
      const finished = await adminCli(['tenant', 'deletions', '--customer', tree.childA.id], { DATABASE_URL: database.url });
      expect(finished.json[0]).toMatchObject({
        state: 'deleted',
        steps: { flows: { done: true, mutation_id: mutation!.mutation_id } },
        finished_at: expect.any(String),
      });

      // The other tenant's search answered throughout (a server being killed aside), with its flows.
      searching = false;
      await searchLoop;
      const answered = searches.filter((s) => s.status !== 0);
      expect(answered.length).toBeGreaterThan(20);
      expect(answered.every((s) => s.status === 200 && s.hits === 3)).toBe(true);
      expect(Math.max(...answered.map((s) => s.ms))).toBeLessThan(5_000);
    },
  );
});
