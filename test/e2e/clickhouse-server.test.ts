import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseHttpServer, startClickHouseHttpServer } from '../../tools/clickhouse-http/server.js';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { insertFlowBatch } from '../../src/flowstore/index.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestDatabase } from '../kit/databases.js';
import { call } from '../kit/http.js';
import { seedCaller, seedTenant } from '../kit/seed.js';

/** Production shape: DATABASE_URL and CLICKHOUSE_URL (a ClickHouse HTTP endpoint on loopback). */
describe('with CLICKHOUSE_URL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-ch-server-'));
  let clickhouse: ClickHouseHttpServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let app: App;

  beforeAll(async () => {
    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch') });
    database = await createTestDatabase();
    const config = loadConfig({ PORT: '0', DATA_DIR: join(dir, 'data'), DATABASE_URL: database.url, CLICKHOUSE_URL: clickhouse.url, LOG_LEVEL: 'silent' });
    app = await buildApp(config, createLogger('silent'));
  });
  afterAll(async () => {
    await app.stop();
    await clickhouse.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("migrates the flow store over HTTP and removes a deleted deployment's flows there", async () => {
    expect(app.flows.kind).toBe('http');
    const msp = await seedTenant(app, { msp: true });
    const child = await seedTenant(app, { parentId: msp.id });
    const caller = await seedCaller(app, msp.id);
    const flow = { '@timestamp': Date.now(), src: { ip: '10.0.0.2' }, dst: { ip: '9.9.9.9', port: 53 } };
    await insertFlowBatch(app.flows, { customerId: child.id, nodeId: 'node_h', batchId: 'b', flows: [flow] });
    const count = async () =>
      (await app.flows.query<{ n: number }>('/* test_count */ SELECT count() AS n FROM flows WHERE customer_id = {c:String}', { c: child.id }))[0].n;
    expect(await count()).toBe(1);
    const res = await call(app.url, 'DELETE', '/rest/deployments/1.0', { token: caller.token, body: { customer_id: child.id, parent_id: msp.id } });
    expect(res.status).toBe(200);
    await expect.poll(count, { timeout: 20_000 }).toBe(0);
  });
});
