import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { type ClickHouseHttpServer, startClickHouseHttpServer } from '../../../tools/clickhouse-http/server.js';
import { READY_REUSE_MS } from './readiness.js';

// Its own file (and so its own process): the ClickHouse endpoint here holds this process's chDB.
describe('/ready while ClickHouse (server mode) is down', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-ready-down-'));
  let clickhouse: ClickHouseHttpServer;
  let t: TestApp;

  beforeAll(async () => {
    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch') });
    t = await startTestApp({ env: { CLICKHOUSE_URL: clickhouse.url }, ownFlowEngine: true });
  });
  afterAll(async () => {
    await t.stop();
    await clickhouse.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('flips to 503 naming clickhouse when it stops, and back to 200 when it returns', async () => {
    expect((await call(t.url, 'GET', '/ready')).status).toBe(200);
    const port = clickhouse.port;
    await clickhouse.close();

    // The answer before is reused for READY_REUSE_MS.
    await new Promise((resolve) => setTimeout(resolve, READY_REUSE_MS));
    const down = await call(t.url, 'GET', '/ready');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not_ready', missing: ['clickhouse'], checks: { postgres: { status: 'ok' }, clickhouse: { status: 'unavailable' } } });
    expect((await call(t.url, 'GET', '/health')).status).toBe(200);

    clickhouse = await startClickHouseHttpServer({ dataDir: join(dir, 'ch'), port });
    await new Promise((resolve) => setTimeout(resolve, READY_REUSE_MS));
    const up = await call(t.url, 'GET', '/ready');
    expect(up.status).toBe(200);
    expect(up.body.status).toBe('ready');
  });
});
