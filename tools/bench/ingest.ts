/**
 * `npm run bench:ingest`: flows/s accepted end to end (HTTP ingest into the server, which
 * validates, stamps and inserts into chDB) beside the raw insert rate of the same engine, measured
 * in the same run on the same generated flows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ChdbEngine, insertFlowBatch, migrateFlowStore } from '../../src/flowstore/index.js';
import { adminCli } from '../../test/kit/admin-cli.js';
import { FakeCollector } from '../../test/kit/fake-collector.js';
import { call } from '../../test/kit/http.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';
import { startProcess, stopProcess } from './processes.js';

const totalFlows = Number(process.env.BENCH_FLOWS ?? 200_000);
const batchSize = Number(process.env.BENCH_BATCH ?? 5_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);

const dataDir = mkdtempSync(join(tmpdir(), 'bd-bench-ingest-'));
const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '' };

const generator = createFlowGenerator({ seed: 7, customerId: 'bench', startMs: Date.now() - 3_600_000, flowsPerSecond: 200, scenarios: [] });
const flows = generator.take(totalFlows);
const batches: unknown[][] = [];
for (let i = 0; i < flows.length; i += batchSize) batches.push(flows.slice(i, i + batchSize));
const bodies = batches.map((b, i) => gzipSync(JSON.stringify({ batch_id: `bench-${i}`, flows: b })));

const server = await startProcess('src/main.ts', env);
let httpRate = 0;
try {
  const msp = (await adminCli(['tenant', 'create', '--name', 'Bench', '--handle', 'bench', '--msp'], env)).json;
  const client = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.node_api'], env)).json;
  const operator = (await call(server.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: client.client_id, client_secret: client.client_secret } })).body.access_token;
  const provisioned = await call(server.url, 'POST', '/rest/nodes/provision/1.0', { token: operator, body: { customer_id: msp.customer_id, machine_id: 'bench-node' } });
  const token = await FakeCollector.exchange(server.url, provisioned.body.access_key);
  const collector = await FakeCollector.connect(server.url, token, { machine_id: 'bench-node', hostname: 'bench', os: 'linux', arch: 'amd64' });

  const started = performance.now();
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await call(server.url, 'POST', '/collector/ingest/1.0/flows', { token, rawBody: body, headers: { 'content-encoding': 'gzip' } });
        if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(res.body)}`);
        accepted += res.body.accepted;
      }
    }),
  );
  httpRate = accepted / ((performance.now() - started) / 1000);
  await collector.close();
} finally {
  await stopProcess(server.child);
}

// The same engine, same flows, no HTTP: the ceiling ingest can approach.
const rawDir = mkdtempSync(join(tmpdir(), 'bd-bench-raw-'));
const engine = new ChdbEngine(rawDir);
await migrateFlowStore(engine);
const rawStarted = performance.now();
for (let i = 0; i < batches.length; i++) {
  await insertFlowBatch(engine, { customerId: 'bench', nodeId: 'raw', batchId: `raw-${i}`, flows: batches[i] as Record<string, unknown>[] });
}
const rawRate = totalFlows / ((performance.now() - rawStarted) / 1000);
await engine.close();
rmSync(rawDir, { recursive: true, force: true });
rmSync(dataDir, { recursive: true, force: true });

console.log(`${totalFlows} flows in batches of ${batchSize}, ${concurrency} concurrent posters, gzip JSON`);
console.log(`raw insert (same engine, same rows)  ${rawRate.toFixed(0).padStart(9)} flows/s`);
console.log(`end to end through HTTP ingest       ${httpRate.toFixed(0).padStart(9)} flows/s  ${(httpRate / rawRate).toFixed(2)}× raw`);
