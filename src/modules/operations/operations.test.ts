import { type Server, createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call, graphql } from '../../../test/kit/http.js';
import { enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { seedTree } from '../../../test/kit/seed.js';
import { ConfigError, loadConfig } from '../../config.js';
import { HttpEngine } from '../../flowstore/index.js';
import { createLogger } from '../../infra/logger.js';
import { READY_CHECK_TIMEOUT_MS, READY_REUSE_MS, Readiness } from './readiness.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const INGEST = '/collector/ingest/1.0/flows';

/** A scrape as text, and the sum of the samples of `name` whose labels include `labels`. */
async function scrape(url: string, token = TOKEN): Promise<(name: string, labels?: Record<string, string>) => number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [, name, labelText = '', value] = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name, labels, value: Number(value) };
    });
  return (name, labels = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

describe('/metrics behind METRICS_TOKEN, and /ready', () => {
  let t: TestApp;
  let receiver: Server;
  let receiverUrl: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN: TOKEN, AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true' } });
    receiver = createServer((req, res) => req.resume().on('end', () => res.end('ok')));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await t.stop();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('answers 401 without the token or with a wrong one, 200 with it', async () => {
    const none = await call(t.url, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body.details).toEqual({ reason: 'missing_token' });
    const wrong = await call(t.url, 'GET', '/metrics', { token: `${TOKEN}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.details).toEqual({ reason: 'invalid_token' });
    expect((await call(t.url, 'GET', '/metrics', { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    expect((await call(t.url, 'GET', '/metrics', { token: TOKEN })).status).toBe(200);
    expect((await call(t.url, 'POST', '/metrics', { token: TOKEN })).status).toBe(405);
  });

  it('counts real traffic: a token request, a GraphQL query, an ingest batch, detection, automation', async () => {
    const tree = await seedTree(t.app);
    const rule = await call(t.url, 'POST', '/rest/automation/1.0', {
      token: tree.mspCaller.token,
      body: { name: 'metrics probe', match: { topic: 'node_lifecycle' }, action: { type: 'webhook', url: receiverUrl } },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);
    const before = await scrape(t.url);

    const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', {
      body: { client_id: tree.childACaller.clientId, client_secret: tree.childACaller.clientSecret },
    });
    expect(token.status).toBe(200);
    const query = await graphql(t.url, 'query MetricsProbe { automationRules { name } }', {}, tree.mspCaller.token);
    expect(query.errors).toBeUndefined();
    await graphql(t.url, 'query MetricsProbe { noSuchField }', {}, tree.mspCaller.token);
    await graphql(t.url, 'query MetricsProbe {', {}, tree.mspCaller.token);
    const ws = createClient({
      url: t.url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${tree.mspCaller.token}` },
    });
    for await (const result of ws.iterate({ query: 'query MetricsOverWs { automationRules { name } }' })) expect(result.errors).toBeUndefined();
    await ws.dispose();
    const { token: collectorToken, nodeId } = await enrolledCollector(t, tree, 'metrics-probe');
    const batch = await call(t.url, 'POST', INGEST, { token: collectorToken, body: { batch_id: 'metrics-1', flows: [flow(1), flow(2), { bad: true }] } });
    expect(batch.status).toBe(200);
    expect((await call(t.url, 'POST', INGEST, { token: collectorToken, body: { flows: [] } })).status).toBe(400);
    const asset = await call(t.url, 'GET', '/rest/collector/assets/1.0/rel_probe42/probe42.tar.gz', { token: tree.mspCaller.token });
    expect(asset.status).toBeGreaterThanOrEqual(400);
    await t.app.services.detection.runNow(tree.childA.id);
    const held = await FakeCollector.connect(t.url, collectorToken, { machine_id: 'metrics-probe', hostname: 'metrics-probe', os: 'linux', arch: 'amd64' });

    try {
      let after = await scrape(t.url);
      // The webhook is delivered in the background.
      for (
        let i = 0;
        i < 50 &&
        after('automation_deliveries_total', { action: 'webhook', status: 'succeeded' }) ===
          before('automation_deliveries_total', { action: 'webhook', status: 'succeeded' });
        i++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        after = await scrape(t.url);
      }
      const moved = (name: string, labels?: Record<string, string>) => after(name, labels) - before(name, labels);

      expect(moved('http_request_duration_seconds_count', { method: 'POST', route: '/rest/oauth2/token/1.0', status: '200' })).toBeGreaterThanOrEqual(1);
      expect(moved('http_request_duration_seconds_count', { method: 'POST', route: '/graphql', status: '200' })).toBeGreaterThanOrEqual(1);
      expect(moved('http_request_duration_seconds_count', { method: 'POST', route: INGEST, status: '200' })).toBe(1);
      expect(
        moved('http_request_duration_seconds_count', { method: 'GET', route: '/rest/collector/assets/1.0/:releaseId/:filename', status: String(asset.status) }),
      ).toBe(1);
      expect(moved('graphql_operations_total', { operation: 'MetricsProbe', type: 'query', transport: 'graphql', outcome: 'ok' })).toBe(1);
      expect(moved('graphql_operations_total', { operation: 'MetricsProbe', transport: 'graphql', outcome: 'invalid' })).toBe(1);
      expect(moved('graphql_operations_total', { operation: 'unknown', type: 'unknown', transport: 'graphql', outcome: 'invalid' })).toBe(1);
      expect(moved('graphql_operations_total', { operation: 'MetricsOverWs', type: 'query', transport: 'ws', outcome: 'ok' })).toBe(1);
      expect(moved('graphql_operations_total', { operation: 'IssueToken', transport: 'rest', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      expect(moved('ingest_batches_total', { outcome: 'accepted' })).toBe(1);
      expect(moved('ingest_batches_total', { outcome: 'refused', code: 'missing_required_fields' })).toBe(1);
      expect(moved('ingest_flows_total', { outcome: 'accepted' })).toBe(2);
      expect(moved('ingest_flows_total', { outcome: 'rejected' })).toBe(1);
      expect(moved('clickhouse_statement_duration_seconds_count', { statement: 'flowstore:insert.flows', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      expect(moved('detection_run_duration_seconds_count', { trigger: 'manual', outcome: 'completed' })).toBe(1);
      expect(moved('automation_deliveries_total', { action: 'webhook', status: 'succeeded' })).toBeGreaterThanOrEqual(1);
      expect(after('collector_control_connections')).toBeGreaterThanOrEqual(1);
      expect(after('ingest_queue_flows')).toBe(0);
      expect(after('postgres_pool_connections', { pool: 'prisma' })).toBeGreaterThanOrEqual(1);
      expect(after('postgres_pool_connections', { pool: 'raw' })).toBeGreaterThanOrEqual(1);
      expect(after('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

      // Routes by template: no id of the request reaches a label.
      const text = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      expect(text).not.toContain('probe42');
      expect(text).not.toContain(nodeId);
    } finally {
      await held.close();
    }
  });

  it('/ready is 200 with both stores migrated, 503 naming a missing migration, /health stays liveness', async () => {
    const ready = await call(t.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', missing: [], checks: { postgres: { status: 'ok' }, clickhouse: { status: 'ok' } } });

    const { rows } = await t.app.db.pool.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations ORDER BY name DESC LIMIT 1');
    const [last] = rows;
    await t.app.db.pool.query('DELETE FROM _migrations WHERE name = $1', [last.name]);
    try {
      // The answer before is reused for READY_REUSE_MS.
      await new Promise((resolve) => setTimeout(resolve, READY_REUSE_MS));
      const pending = await call(t.url, 'GET', '/ready');
      expect(pending.status).toBe(503);
      expect(pending.body.missing).toEqual(['postgres']);
      expect(pending.body.checks.postgres).toEqual({ status: 'migrations_pending', pending: [last.name] });
      expect((await call(t.url, 'GET', '/health')).status).toBe(200);
    } finally {
      await t.app.db.pool.query('INSERT INTO _migrations (name, checksum) VALUES ($1, $2)', [last.name, last.checksum]);
    }
    await new Promise((resolve) => setTimeout(resolve, READY_REUSE_MS));
    expect((await call(t.url, 'GET', '/ready')).status).toBe(200);
  });

  it('asks the stores once for requests that come together or within READY_REUSE_MS', async () => {
    const asked = async () => (await scrape(t.url))('clickhouse_statement_duration_seconds_count', { statement: 'flowstore:schema.applied_migrations' });
    await new Promise((resolve) => setTimeout(resolve, READY_REUSE_MS));
    const before = await asked();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(t.url, 'GET', '/ready')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect((await call(t.url, 'GET', '/ready')).status).toBe(200);
    expect((await asked()) - before).toBe(1);
  });

  it('counts a ClickHouse that accepts connections and never answers as unavailable, within the check limit', async () => {
    const silent = createNetServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const engine = new HttpEngine({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` });
    try {
      const started = Date.now();
      const report = await new Readiness(t.app.db.pool, engine, createLogger('silent')).check();
      expect(Date.now() - started).toBeLessThan(READY_CHECK_TIMEOUT_MS + 1_000);
      expect(report).toEqual({ status: 'not_ready', missing: ['clickhouse'], checks: { postgres: { status: 'ok' }, clickhouse: { status: 'unavailable' } } });
    } finally {
      await engine.close();
      silent.close();
    }
  });
});

describe('/metrics on METRICS_PORT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_PORT: '0' } });
  });
  afterAll(() => t.stop());

  it('is served on its own port without a token, and not on the main one', async () => {
    expect(t.app.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.app.metricsUrl).not.toBe(t.url);
    const res = await fetch(`${t.app.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('# TYPE http_request_duration_seconds histogram');
    expect((await fetch(`${t.app.metricsUrl}/graphql`)).status).toBe(404);
    expect((await call(t.url, 'GET', '/metrics')).status).toBe(404);
  });
});

describe('metrics settings', () => {
  it('with neither METRICS_TOKEN nor METRICS_PORT, /metrics is off', async () => {
    const t = await startTestApp();
    try {
      const res = await call(t.url, 'GET', '/metrics');
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/METRICS_TOKEN or METRICS_PORT/);
    } finally {
      await t.stop();
    }
  });

  it('refuses a short token and a port out of range', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PORT: 'nine' })).toThrow(ConfigError);
    expect(loadConfig({ METRICS_TOKEN: ' ', METRICS_PORT: '' }).metrics).toEqual({ token: undefined, port: undefined, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ token: undefined, port: 9464, host: '10.0.0.5' });
  });
});
