/**
 * `npm run bench:ingest`: flows/s accepted end to end (HTTP ingest into the server, which parses,
 * validates, stamps and inserts into chDB), beside what the engine itself does with the same
 * flows, all measured in the same run on the same generated flows:
 * - end to end, gzip JSON, BENCH_BATCH-flow batches from BENCH_CONCURRENCY posters on one node;
 * - the same flows in batches of the same size from the same posters, as gzip ClickHouse Native
 *   blocks (Content-Type application/x-clickhouse-native, as `collector run --batch-format native`
 *   sends them);
 * - end to end, gzip JSON, 200-flow batches from 50 collectors (one node each): many small sites;
 * - the ceiling: the engine's insert of the same rows, encoded before the clock starts as Native
 *   blocks as large as the service's group commit makes (30,000 rows), into the same table (no
 *   parse, no validation, no HTTP);
 * - the floor: the same number of rows into a three-column table, the engine's cost per insert.
 * And the collector's side: what writing a batch body costs per flow, JSON then gzip against Native
 * then gzip, on the same batches.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ChdbEngine, FLOWS_TABLE, migrateFlowStore } from '../../src/flowstore/index.js';
import { encodeNativeBlock, nativeLayout } from '../../src/flowstore/native-block.js';
import { FLOW_ROW_COLUMNS, flowRowSlot, flowRowsBlock, flowToRow, type FlowRow } from '../../src/flowstore/ingest-rows.js';
import { DEFAULT_MAX_GROUP_ROWS } from '../../src/flowstore/insert-queue.js';
import { adminCli } from '../../test/kit/admin-cli.js';
import { FakeCollector } from '../../test/kit/fake-collector.js';
import { call } from '../../test/kit/http.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';
import { NATIVE_CONTENT_TYPE, NATIVE_GZIP_LEVEL, encodeNativeBatch } from '../collector/native-batch.js';
import { BENCH_STEADY_STATE, startProcess, stopProcess, treeCpuSeconds } from './processes.js';

const totalFlows = Number(process.env.BENCH_FLOWS ?? 200_000);
const batchSize = Number(process.env.BENCH_BATCH ?? 5_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SMALL_SITES = 50;
const SMALL_BATCH = 200;

const flows = createFlowGenerator({ seed: 7, customerId: 'bench', startMs: Date.now() - 3_600_000, flowsPerSecond: 200, scenarios: [] }).take(totalFlows);
const slices = (size: number) => Array.from({ length: Math.ceil(flows.length / size) }, (_, i) => flows.slice(i * size, (i + 1) * size));

/** A request body and the headers that go with it. */
interface Batch {
  body: Buffer;
  headers: Record<string, string>;
}
const GZIP = { 'content-encoding': 'gzip' };
const jsonBody = (batch: readonly unknown[], id: string) => gzipSync(JSON.stringify({ batch_id: id, flows: batch }));
function nativeBody(batch: readonly unknown[]): Buffer {
  const block = encodeNativeBatch(batch);
  if (!block) throw new Error('the generated flows do not encode as a Native block');
  return gzipSync(block, { level: NATIVE_GZIP_LEVEL });
}
const gzipBatches = (size: number, tag: string): Batch[] => slices(size).map((b, i) => ({ body: jsonBody(b, `${tag}-${i}`), headers: GZIP }));
const nativeBatches = (size: number, tag: string): Batch[] =>
  slices(size).map((b, i) => ({ body: nativeBody(b), headers: { ...GZIP, 'content-type': NATIVE_CONTENT_TYPE, 'x-batch-id': `${tag}-${i}` } }));

interface Poster {
  token: string;
}

/** 503s answered during the run (the batch was sent again after its Retry-After, as a collector does). */
let busyAnswers = 0;

/**
 * One batch until it is stored: sent again after a 503's Retry-After, and once more if the
 * connection was reset (the client's pool may hand out a kept-alive socket the server is closing
 * at that moment, as between the bench's phases). The batch id makes both safe.
 */
async function postBatch(url: string, token: string, { body, headers }: Batch) {
  const send = () => call(url, 'POST', '/collector/ingest/1.0/flows', { token, rawBody: body, headers });
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await send();
    } catch (error) {
      if (attempt > 0 || !['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      continue;
    }
    if (res.status !== 503 || attempt >= 20) return res;
    busyAnswers++;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

/** A phase's outcome: flows accepted per second of wall time, and CPU microseconds per flow. */
interface Rate {
  perSecond: number;
  cpuUsPerFlow: number;
}

/**
 * Posts every body, `posters.length` at a time, each poster taking the next body; the CPU is the
 * server's (its process tree: chDB runs inside it).
 */
async function post(url: string, serverPid: number, posters: Poster[], bodies: Batch[]): Promise<Rate> {
  const started = performance.now();
  const cpuBefore = treeCpuSeconds(serverPid);
  let next = 0;
  let accepted = 0;
  await Promise.all(
    posters.map(async ({ token }) => {
      while (next < bodies.length) {
        const batch = bodies[next++]!;
        const res = await postBatch(url, token, batch).catch((e: Error) => {
          throw new Error(`ingest of ${batch.body.length} bytes failed after ${((performance.now() - started) / 1000).toFixed(1)} s: ${e.message}`);
        });
        if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(res.body)}`);
        accepted += res.body.accepted;
      }
    }),
  );
  return { perSecond: accepted / ((performance.now() - started) / 1000), cpuUsPerFlow: ((treeCpuSeconds(serverPid) - cpuBefore) * 1e6) / accepted };
}

/** Runs `insert` and rates it by wall time and by this process's CPU (chDB runs in it). */
async function rated(insert: () => Promise<void>): Promise<Rate> {
  const [started, cpu] = [performance.now(), process.cpuUsage()];
  await insert();
  const used = process.cpuUsage(cpu);
  return { perSecond: totalFlows / ((performance.now() - started) / 1000), cpuUsPerFlow: (used.user + used.system) / totalFlows };
}

interface ApiTimes {
  tokenP99Ms: number;
  searchP50Ms: number;
}
interface ApiUnderIngest {
  idle: ApiTimes;
  loaded: ApiTimes;
  /** Idle again once the paced ingest has stopped: the same data as the loaded probe's end. */
  idleAfter: ApiTimes;
  /** Flows/s the paced ingest achieved meanwhile. */
  ingestRate: number;
}

const API_PROBE_MS = Number(process.env.BENCH_API_PROBE_MS ?? 15_000);
const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/**
 * What the API answers in, idle and while ingest runs at `rate` flows/s (half of the peak just
 * measured), then idle again: token requests one after the other, and a records search every
 * tenth request, for API_PROBE_MS each. The paced ingest nearly doubles the rows the search reads
 * (and counts), so the search is also compared with the idle figure taken after it, on the same
 * data: that ratio is what the ingest's load alone costs.
 */
async function apiUnderIngest(
  url: string,
  reader: { client_id: string; client_secret: string },
  customerId: string,
  poster: Poster,
  rate: number,
): Promise<ApiUnderIngest> {
  const credentials = { client_id: reader.client_id, client_secret: reader.client_secret };
  const search = {
    instance_ids: [customerId],
    module: 'flows',
    size: 100,
    page: 0,
    sentence: 'dst.port eq 443',
    sort: [{ field: '@timestamp', order: 'desc' }],
    start: { absolute: { date: new Date(Date.now() - 3 * 3_600_000).toISOString() } },
    end: { absolute: { date: new Date(Date.now() + 60_000).toISOString() } },
  };
  const timed = async (request: () => Promise<{ status: number }>) => {
    const started = performance.now();
    const res = await request();
    if (res.status !== 200) throw new Error(`API probe answered ${res.status}`);
    return performance.now() - started;
  };
  const probe = async (): Promise<ApiTimes> => {
    const [tokens, searches] = [[] as number[], [] as number[]];
    const { access_token } = (await call(url, 'POST', '/rest/oauth2/token/1.0', { body: credentials })).body;
    const until = performance.now() + API_PROBE_MS;
    for (let i = 0; performance.now() < until; i++) {
      if (i % 10 === 9) searches.push(await timed(() => call(url, 'POST', '/search/records/1.0', { token: access_token, body: search })));
      else tokens.push(await timed(() => call(url, 'POST', '/rest/oauth2/token/1.0', { body: credentials })));
    }
    return { tokenP99Ms: quantile(tokens, 0.99), searchP50Ms: quantile(searches, 0.5) };
  };
  const idle = await probe();
  // Paced ingest: a batch every batchSize / rate seconds, for as long as the probe runs.
  const bodies = gzipBatches(batchSize, 'paced');
  let stop = false;
  let sent = 0;
  const started = performance.now();
  const pacing = (async () => {
    for (let n = 0; !stop && n < bodies.length; n++) {
      const due = started + (n * batchSize * 1000) / rate;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      const res = await postBatch(url, poster.token, bodies[n]!);
      if (res.status === 200) sent += res.body.accepted;
    }
  })();
  const loaded = await probe();
  stop = true;
  await pacing;
  const ingestRate = sent / ((performance.now() - started) / 1000);
  return { idle, loaded, idleAfter: await probe(), ingestRate };
}

async function endToEnd(): Promise<{ json: Rate; native: Rate; smallSites: Rate; api: ApiUnderIngest }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bd-bench-ingest-'));
  const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', ...BENCH_STEADY_STATE };
  const server = await startProcess('src/main.ts', env);
  const collectors: FakeCollector[] = [];
  try {
    const msp = (await adminCli(['tenant', 'create', '--name', 'Bench', '--handle', 'bench', '--msp'], env)).json;
    const client = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.node_api'], env)).json;
    const reader = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.search_api'], env)).json;
    const operator = (await call(server.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: client.client_id, client_secret: client.client_secret } }))
      .body.access_token;
    const enrol = async (machineId: string): Promise<Poster> => {
      const provisioned = await call(server.url, 'POST', '/rest/nodes/provision/1.0', {
        token: operator,
        body: { customer_id: msp.customer_id, machine_id: machineId },
      });
      const token = await FakeCollector.exchange(server.url, provisioned.body.access_key);
      collectors.push(await FakeCollector.connect(server.url, token, { machine_id: machineId, hostname: machineId, os: 'linux', arch: 'amd64' }));
      return { token };
    };
    const big = await enrol('bench-node');
    const json = await post(
      server.url,
      server.child.pid!,
      Array.from({ length: concurrency }, () => big),
      gzipBatches(batchSize, 'big'),
    );
    // Right after the JSON run, on the same table.
    const native = await post(
      server.url,
      server.child.pid!,
      Array.from({ length: concurrency }, () => big),
      nativeBatches(batchSize, 'native'),
    );
    const api = await apiUnderIngest(server.url, reader, msp.customer_id, big, json.perSecond / 2);
    const sites: Poster[] = [];
    for (let i = 0; i < SMALL_SITES; i++) sites.push(await enrol(`bench-site-${i}`));
    const smallSites = await post(server.url, server.child.pid!, sites, gzipBatches(SMALL_BATCH, 'small'));
    return { json, native, smallSites, api };
  } finally {
    await Promise.all(collectors.map((c) => c.close()));
    await stopProcess(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The engine alone on a fresh database: the same rows as Native blocks into `flows`, then a narrow table. */
async function engineAlone(): Promise<{ ceiling: Rate; floor: Rate }> {
  const dir = mkdtempSync(join(tmpdir(), 'bd-bench-raw-'));
  const engine = new ChdbEngine(dir);
  try {
    await migrateFlowStore(engine);
    const batches: FlowRow[][] = slices(batchSize).map((b, n) =>
      b.map((f, i) =>
        flowToRow({ customerId: 'bench', nodeId: 'raw', batchId: `raw-${n}`, ingestTimeMs: Date.now() }, f as unknown as Record<string, unknown>, i),
      ),
    );
    // Encoded before the clock starts, in blocks as large as the service's group commit makes.
    const rows = batches.flat();
    const groups = Array.from({ length: Math.ceil(rows.length / DEFAULT_MAX_GROUP_ROWS) }, (_, g) =>
      flowRowsBlock(rows.slice(g * DEFAULT_MAX_GROUP_ROWS, (g + 1) * DEFAULT_MAX_GROUP_ROWS)),
    );
    const ceiling = await rated(async () => {
      for (const [n, block] of groups.entries()) await engine.insertNative(FLOWS_TABLE, FLOW_ROW_COLUMNS, [block], { dedupToken: `raw-${n}` });
    });

    const narrow = ['customer_id', 'timestamp', 'id'];
    const slots = narrow.map(flowRowSlot);
    await engine.command(
      `/* bench:narrow */ CREATE TABLE narrow (customer_id LowCardinality(String), timestamp DateTime64(3, 'UTC'), id String) ENGINE = MergeTree ORDER BY (customer_id, timestamp, id)`,
    );
    const layout = nativeLayout([
      { name: 'customer_id', type: 'LowCardinality(String)' },
      { name: 'timestamp', type: "DateTime64(3, 'UTC')" },
      { name: 'id', type: 'String' },
    ]);
    const blocks = batches.map((rows) =>
      encodeNativeBlock(
        layout,
        rows.map((row) => slots.map((s) => row[s])),
      ),
    );
    const floor = await rated(async () => {
      for (const [n, block] of blocks.entries()) await engine.insertNative('narrow', narrow, [block], { dedupToken: `narrow-${n}` });
    });
    return { ceiling, floor };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Microseconds per flow to write every batch's body, JSON or Native, then gzip it; bytes per flow. */
function encodeCost(encode: (batch: readonly unknown[], n: number) => Buffer): { usPerFlow: number; bytesPerFlow: number } {
  const batches = slices(batchSize);
  encode(batches[0]!, 0); // compiled before it is timed
  const started = performance.now();
  const bytes = batches.reduce((sum, batch, n) => sum + encode(batch, n).length, 0);
  return { usPerFlow: ((performance.now() - started) * 1000) / totalFlows, bytesPerFlow: bytes / totalFlows };
}

const encoding = { json: encodeCost((batch, n) => jsonBody(batch, `cost-${n}`)), native: encodeCost(nativeBody) };
const e2e = await endToEnd();
const alone = await engineAlone();
// Against the ceiling: the wall-time rate, and the ceiling's CPU per flow over this one's (how
// the two compare when other work on the machine slows both).
const line = (label: string, rate: Rate, vs?: Rate) =>
  console.log(
    `${label.padEnd(56)}${rate.perSecond.toFixed(0).padStart(8)} flows/s ${rate.cpuUsPerFlow.toFixed(0).padStart(5)} µs CPU/flow` +
      (vs ? `  ${(rate.perSecond / vs.perSecond).toFixed(2)}× ceiling (by CPU ${(vs.cpuUsPerFlow / rate.cpuUsPerFlow).toFixed(2)}×)` : ''),
  );
console.log(`${totalFlows} generated flows (${FLOW_ROW_COLUMNS.length} columns written into ${FLOWS_TABLE})`);
line(`end to end, gzip JSON, ${batchSize}-flow batches, ${concurrency} posters`, e2e.json, alone.ceiling);
line(`end to end, gzip Native, ${batchSize}-flow batches, ${concurrency} posters`, e2e.native, alone.ceiling);
line(`end to end, gzip JSON, ${SMALL_BATCH}-flow batches, ${SMALL_SITES} collectors`, e2e.smallSites, alone.ceiling);
line(`ceiling: the engine's insert of the same rows, encoded`, alone.ceiling);
line(`floor: the same rows' key columns into a narrow table`, alone.floor);
console.log(`503 answers (batch sent again after Retry-After): ${busyAnswers}`);
const cost = ({ usPerFlow, bytesPerFlow }: { usPerFlow: number; bytesPerFlow: number }) =>
  `${usPerFlow.toFixed(1)} µs/flow (${bytesPerFlow.toFixed(0)} B/flow)`;
console.log(
  `collector-side encode of ${batchSize}-flow batches: JSON+gzip ${cost(encoding.json)}, Native+gzip ${cost(encoding.native)}: ` +
    `${(encoding.native.usPerFlow / encoding.json.usPerFlow).toFixed(2)}× the time`,
);
const { idle, loaded, idleAfter, ingestRate } = e2e.api;
const ms = (value: number) => `${value.toFixed(1).padStart(5)} ms`;
console.log(`API while ingest runs at ${ingestRate.toFixed(0)} flows/s (half of the peak above), idle before and after it:`);
console.log(`  token p99           ${ms(idle.tokenP99Ms)} before  ${ms(loaded.tokenP99Ms)} under ingest  ${ms(idleAfter.tokenP99Ms)} after (target ≤ 20 ms)`);
console.log(
  `  records search p50  ${ms(idle.searchP50Ms)} before  ${ms(loaded.searchP50Ms)} under ingest  ${ms(idleAfter.searchP50Ms)} after: ` +
    `${(loaded.searchP50Ms / idleAfter.searchP50Ms).toFixed(2)}× the same data idle (target ≤ 1.3×), ${(loaded.searchP50Ms / idle.searchP50Ms).toFixed(2)}× the smaller table's`,
);
