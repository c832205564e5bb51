import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';
import { type ClickHouseHttpServer, startClickHouseHttpServer } from '../../../tools/clickhouse-http/server.js';
import { countFlows, enrolledCollector, flow } from '../../../test/kit/ingest.js';

const PATH = '/collector/ingest/1.0/flows';

// Its own file (and so its own process): the ClickHouse endpoint here holds this process's chDB.
describe('ingest while ClickHouse is down', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-ingest-down-'));
  let clickhouse: ClickHouseHttpServer;
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch') });
    port = clickhouse.port;
    t = await startTestApp({ env: { CLICKHOUSE_URL: clickhouse.url }, ownFlowEngine: true });
  });
  afterAll(async () => {
    await t.stop();
    await clickhouse.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After, then stores the retried batch exactly once', async () => {
    const tree = await seedTree(t.app);
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-down');
    await clickhouse.close();
    const down = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'retry-me', flows: [flow(1), flow(2)] } });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.body.code).toBe('store_unavailable');
    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch'), port });
    const up = await call(t.url, 'POST', PATH, { token, body: { batch_id: 'retry-me', flows: [flow(1), flow(2)] } });
    expect(up.status).toBe(200);
    await call(t.url, 'POST', PATH, { token, body: { batch_id: 'retry-me', flows: [flow(1), flow(2)] } });
    expect(await countFlows(t, nodeId)).toBe(2);
  });
});
