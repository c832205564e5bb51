/**
 * `npm run bench:search [-- --rows 10000000 --tenants 50 --days 7 --seconds 5 --data DIR --only TEXT]`
 *
 * Flow search through the REST API against the same question asked in hand-written SQL on the
 * same engine, in one run (docs/search.md "Benchmark"):
 * 1. tenants: an MSP and its children, created through the admin CLI and the deployments API;
 * 2. flows: the reference collector's generator (tools/collector/flowgen) writes a seed of real
 *    records per tenant over the last `days / copies`, and the engine copies that seed back in
 *    time (INSERT … SELECT, new ids) until `rows` flows span `days` — generating every record in
 *    JavaScript would take hours at 100M;
 * 3. the service (search-host.ts: src/main.ts's app with a door for the bench) on that data
 *    directory; each scenario is asked three ways, closed-loop (one request at a time: chDB runs
 *    one statement at a time anyway), interleaved request by request on the same tenant:
 *    - REST: its documented path over HTTP, timed by the bench (client);
 *    - SQL: the equivalent hand-written statements on the service's own engine object;
 *    - store: the flow store's own functions on that engine (the API's cost without HTTP or auth);
 *    the last two timed inside the service's process (chDB admits one process per directory);
 *    meanwhile another process (token-load.ts) issues tokens at a fixed rate and records their
 *    latency. A drift of the host's speed (20 % within an hour here) weighs on every side alike.
 * With `--data DIR` the prepared directory is kept and reused by later runs with the same shape;
 * `--only TEXT` measures only the scenarios whose name contains TEXT.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ChdbEngine, type FlowEngine, insertFlowBatch, migrateFlowStore } from '../../src/flowstore/index.js';
import { adminCli } from '../../test/kit/admin-cli.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';
import { BENCH_RATE_LIMITS, startProcess, stopProcess } from './processes.js';
import { postJson } from './http-client.js';
import { type LatencySummary, type TokenLatencies, summarize } from './token-load.js';
import type { HostAnswer, HostCall, Statement } from './search-host.js';

/**
 * The 5-path projection as the service writes it, by hand: nested objects, a path the flow lacks
 * left out (wire.md 5.1), `@timestamp` always.
 */
const PROJECTED_RECORD =
  `concat('{"@timestamp":', toString(toUnixTimestamp64Milli(timestamp)), ` +
  `if(src_ip IS NULL, '', concat(',"src":{"ip":', toJSONString(src_ip), '}')), ` +
  `if(dst_ip IS NULL AND dst_port IS NULL, '', concat(',"dst":{', arrayStringConcat(arrayFilter(x -> x != '', ` +
  `[if(dst_ip IS NULL, '', concat('"ip":', toJSONString(dst_ip))), if(dst_port IS NULL, '', concat('"port":', toString(dst_port)))]), ','), '}')), ` +
  `if(app_name IS NULL, '', concat(',"app_name":', toJSONString(app_name))), ` +
  `if(stats_volume_bytes_total IS NULL, '', concat(',"stats":{"volume":{"bytes":{"total":', toString(stats_volume_bytes_total), '}}}')), '}')`;
const TOKEN_LOAD = fileURLToPath(new URL('./token-load.ts', import.meta.url));
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/**
 * Disk a stored flow takes while the copies are written and merged: ~630 bytes once merged (the
 * `source` column is 40 % of it), more while parts wait for merges. The 100M run here stopped at
 * 78.7M flows with 59 GB used.
 */
const BYTES_PER_FLOW = 800;

// ---------------------------------------------------------------------------------------------
interface Options {
  rows: number;
  tenants: number;
  days: number;
  seconds: number;
  seedRows: number;
  tokenRate: number;
  data: string | undefined;
  only: string | undefined;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      tenants: { type: 'string' },
      days: { type: 'string' },
      seconds: { type: 'string' },
      'seed-rows': { type: 'string' },
      'token-rate': { type: 'string' },
      data: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const num = (v: string | undefined, d: number) => (v === undefined ? d : Number(v.replace(/_/g, '')));
  const rows = num(values.rows, 10_000_000);
  return {
    rows,
    tenants: num(values.tenants, 50),
    days: num(values.days, 7),
    seconds: num(values.seconds, 4),
    seedRows: num(values['seed-rows'], Math.min(rows, 100_000)),
    tokenRate: num(values['token-rate'], 20),
    data: values.data ? resolve(values.data) : undefined,
    only: values.only,
  };
}

/** What a prepared data directory holds; a later run with the same shape reuses it. */
interface Prepared {
  rows: number;
  tenants: number;
  days: number;
  /** Days the flows span (fewer than `days` for a small `rows`). */
  coveredDays: number;
  seedRows: number;
  endMs: number;
  storedRows: number;
  tenantIds: string[];
  client: { client_id: string; client_secret: string };
  generationSeconds: number;
}

const MARKER = 'bench-search.json';
const MIN_SAMPLES = 30;

async function post(url: string, body: unknown, token?: string): Promise<any> {
  const res = await postJson(url, JSON.stringify(body), token ? { authorization: `Bearer ${token}` } : {});
  const parsed = JSON.parse(res.body.toString());
  if (res.status !== 200 && res.status !== 201) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(parsed).slice(0, 300)}`);
  return parsed;
}

async function createTenants(env: Record<string, string>, tenants: number): Promise<Pick<Prepared, 'tenantIds' | 'client'>> {
  const msp = (await adminCli(['tenant', 'create', '--name', 'Bench MSP', '--handle', 'bench_msp', '--msp'], env)).json;
  const client = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.search_api,p.token.scope.deployment_api'], env))
    .json;
  if (!msp?.customer_id || !client?.client_id) throw new Error('admin CLI could not create the bench tenant');
  const server = await startProcess('src/main.ts', env);
  try {
    const { access_token } = await post(`${server.url}/rest/oauth2/token/1.0`, { client_id: client.client_id, client_secret: client.client_secret });
    const tenantIds = [msp.customer_id as string];
    for (let i = 1; i < tenants; i++) {
      const created = await post(`${server.url}/rest/deployments/1.0`, { name: `Bench ${i}`, handle: `bench_${i}`, parent_id: msp.customer_id }, access_token);
      tenantIds.push(created.deployment.customer.customer_id);
    }
    return { tenantIds, client: { client_id: client.client_id, client_secret: client.client_secret } };
  } finally {
    await stopProcess(server.child);
  }
}

/**
 * Seed: every tenant's own generator over the last `period` (one insert per tenant). Copies: the
 * seed shifted back by `period` at a time, one INSERT … SELECT per shift, until the days are
 * covered. The generator never goes below its scheduled traffic (DNS, NTP... about 0.1 flow/s
 * per site), so a small `rows` gets fewer days. Returns the days covered and the stored rows.
 */
async function generateFlows(engine: FlowEngine, o: Options, tenantIds: string[], endMs: number): Promise<{ days: number; storedRows: number }> {
  const probe = createFlowGenerator({
    seed: 'probe',
    customerId: 'probe',
    startMs: endMs - 3_600_000,
    endMs,
    flowsPerSecond: 0.001,
    diurnal: false,
    scenarios: [],
  });
  let probed = 0;
  for (const _ of probe) probed++;
  const floor = probed / 3600;
  let density = o.rows / o.tenants / ((o.days * DAY_MS) / 1000);
  let days = o.days;
  if (density < 1.5 * floor) {
    density = 1.5 * floor;
    days = o.rows / o.tenants / density / 86_400;
    console.log(
      `  ${o.rows.toLocaleString()} flows cannot spread over ${o.days} days (the generator's floor is ${floor.toFixed(2)} flows/s per tenant): ${days.toFixed(2)} days`,
    );
  }
  const copies = Math.max(1, Math.round(o.rows / o.seedRows));
  const periodMs = Math.floor((days * DAY_MS) / copies);
  const rate = Math.max(density * 0.1, density - floor);

  let seeded = 0;
  const started = performance.now();
  for (const [i, customerId] of tenantIds.entries()) {
    const gen = createFlowGenerator({
      seed: `bench-${i}`,
      customerId,
      startMs: endMs - periodMs,
      endMs,
      flowsPerSecond: rate,
      diurnal: false,
      scenarios: i % 5 === 0 ? ['beacon'] : [],
    });
    for (let batch = 0; ; batch++) {
      const flows = gen.take(50_000);
      if (!flows.length) break;
      await insertFlowBatch(engine, { customerId, nodeId: `sensor-${i}`, batchId: `seed-${batch}`, flows: flows as never });
      seeded += flows.length;
    }
    if (i % 10 === 9 || i === tenantIds.length - 1) {
      console.log(
        `  seed: ${i + 1}/${tenantIds.length} tenants, ${seeded.toLocaleString()} generated flows, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    }
  }
  if (copies > 1) {
    await engine.command('/* bench:search.seed */ CREATE TABLE bench_seed ENGINE = Memory AS SELECT * FROM flows');
    for (let j = 1; j < copies; j++) {
      await engine.command(
        `/* bench:search.copy */ INSERT INTO flows SELECT * REPLACE (concat(id, '.', {j:String}) AS id, concat(batch_id, '.', {j:String}) AS batch_id, ` +
          `timestamp - toIntervalMillisecond({shift:Int64}) AS timestamp, ` +
          `replaceRegexpOne(source, '"@timestamp":[0-9]+', concat('"@timestamp":', toString(toUnixTimestamp64Milli(timestamp) - {shift:Int64}))) AS source) FROM bench_seed`,
        { j: String(j), shift: j * periodMs },
        { timeoutMs: 3_600_000 },
      );
      if (j % 10 === 0 || j === copies - 1) console.log(`  copies: ${j}/${copies - 1}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    await engine.command('/* bench:search.seed */ DROP TABLE bench_seed');
  }
  const [{ n }] = await engine.query<{ n: number }>('/* bench:search.count */ SELECT count() AS n FROM flows', {});
  return { days, storedRows: Number(n) };
}

/**
 * Brings every day partition the scenarios read (`sinceDay`, a partition id, and later) to one
 * part before anything is timed, newest first, as the table does by itself once a day has been
 * quiet for an hour (QUIET_DAY_SETTINGS in flowstore/ddl.ts): the generated days are all quiet.
 * Older days are left to the engine's own merges, which settle() then waits for; no scenario
 * reads them. Days whose hour has passed are already being merged by the engine (waited for).
 * ClickHouse merges only with twice the day's size free on disk, and a merged day's old parts go
 * 8 minutes later, so each merge may first wait for room. Once per directory.
 */
async function mergeQuietDays(engine: FlowEngine, dataDir: string, sinceDay: string): Promise<void> {
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  const pause = () => new Promise((r) => setTimeout(r, 10_000));
  for (;;) {
    if (performance.now() - started > 7_200_000) throw new Error('the days are still not one part each after 2 hours');
    const [merging] = await engine.query<{ n: number }>("/* bench:search.merging */ SELECT count() AS n FROM system.merges WHERE table = 'flows'", {});
    const [day] = await engine.query<{ partition_id: string; bytes: number }>(
      "/* bench:search.quiet_days */ SELECT partition_id, sum(bytes_on_disk) AS bytes FROM system.parts WHERE table = 'flows' AND active AND partition_id >= {since:String} " +
        'GROUP BY partition_id HAVING count() > 1 ORDER BY partition_id DESC LIMIT 1',
      { since: sinceDay },
    );
    if (!day) break;
    // A partition id is digits (toDate); ClickHouse takes it only as a literal.
    if (!/^\d+$/.test(day.partition_id)) throw new Error(`unexpected partition id ${day.partition_id}`);
    if (Number(merging!.n) > 0 || freeBytes(dataDir) < 2.05 * Number(day.bytes)) {
      await pause();
      continue;
    }
    try {
      const sql = `/* bench:search.merge_day */ OPTIMIZE TABLE flows PARTITION ID '${day.partition_id}' FINAL SETTINGS optimize_throw_if_noop = 1`;
      await engine.command(sql, {}, { timeoutMs: 3_600_000 });
      console.log(`  quiet days: ${day.partition_id} merged into one part, ${seconds()} s`);
    } catch (error) {
      // CANNOT_ASSIGN_OPTIMIZE: a merge of the engine's own began meanwhile; it is waited for above.
      if ((error as { clickhouseCode?: number }).clickhouseCode !== 388) throw error;
      await pause();
    }
  }
  console.log(`  quiet days: every day since ${sinceDay} in one part after ${seconds()} s`);
}

/** The day partition (`toDate`, UTC) holding `ms`, as system.parts spells its id. */
function partitionOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');
}

function freeBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}

/** Lets background merges of fresh parts finish (up to `maxMs`), so they do not run during the measurements. */
async function settle(engine: FlowEngine, maxMs: number): Promise<void> {
  const started = Date.now();
  let quiet = 0;
  while (Date.now() - started < maxMs && quiet < 3) {
    const [{ n }] = await engine.query<{ n: number }>('/* bench:search.merges */ SELECT count() AS n FROM system.merges', {});
    quiet = Number(n) === 0 ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const [{ parts }] = await engine.query<{ parts: number }>(
    "/* bench:search.parts */ SELECT count() AS parts FROM system.parts WHERE table = 'flows' AND active",
    {},
  );
  console.log(`  merges: settled after ${((Date.now() - started) / 1000).toFixed(0)} s, ${parts} active parts`);
}

// ---------------------------------------------------------------------------------------------
interface Scenario {
  name: string;
  path: '/search/records/1.0' | '/search/agg/1.0';
  body: (tenant: string) => Record<string, unknown>;
  /** What the REST answer must show, checked on the first request. */
  check: (answer: any, tenant: string) => string | undefined;
  /** The hand-written SQL asking the same question (statements run concurrently, as the service does). */
  sql: (tenant: string) => Statement[];
}

function scenarios(prepared: Prepared): Scenario[] {
  const endMs = prepared.endMs;
  const startMs = endMs - DAY_MS;
  const day = { start: { absolute: { date: new Date(startMs).toISOString() } }, end: { absolute: { date: new Date(endMs).toISOString() } } };
  const win = `timestamp >= fromUnixTimestamp64Milli({s:Int64}, 'UTC') AND timestamp <= fromUnixTimestamp64Milli({e:Int64}, 'UTC')`;
  const one = (c: string) => ({ c, s: startMs, e: endMs });
  const counts = (c: string, cond = '1'): Statement => ({
    sql: `/* bench:sql.count */ SELECT count() AS total, countIf(${cond}) AS found FROM flows WHERE customer_id = {c:String} AND ${win}`,
    params: one(c),
  });
  // The counts and the page in one statement, as the service asks them; whole records are the
  // `source` column (columns.ts SOURCE_COLUMN), read as bytes like the service reads them.
  const page = (c: string, select: string, cond: string, limit: string, settings?: Statement['settings']): Statement => ({
    sql:
      `/* bench:sql.records */ (SELECT concat(toString(count()), '\t', toString(countIf(${cond}))) FROM flows WHERE customer_id = {c:String} AND ${win}) ` +
      `UNION ALL (SELECT ${select} FROM flows WHERE customer_id = {c:String} AND ${win} AND ${cond} ORDER BY timestamp DESC, id DESC ${limit})`,
    params: one(c),
    lines: true,
    ...(settings ? { settings } : {}),
  });
  const filter = `dst_port = 443 AND transport_proto = 'TCP'`;
  const pageOf = (size: number) => (a: any, c: string) => {
    const e = a[c];
    return e && Array.isArray(e.flows) && e.returned === Math.min(size, e.found) ? undefined : `unexpected page ${JSON.stringify(e).slice(0, 200)}`;
  };
  const fields = ['src.ip', 'dst.ip', 'dst.port', 'app_name', 'stats.volume.bytes.total'];
  const records = (extra: Record<string, unknown>) => (c: string) => ({ instance_ids: [c], module: 'flows', ...day, ...extra });
  // Several tenants counted as the service counts them for a field with a rollup (terms.ts): the
  // window's whole hours from the rollup, its partial hours from the rows, summed.
  const firstHour = Math.ceil(startMs / HOUR_MS) * HOUR_MS;
  const lastHour = Math.floor((endMs + 1) / HOUR_MS) * HOUR_MS;
  const hours = `toStartOfHour(timestamp) >= fromUnixTimestamp64Milli({h1:Int64}, 'UTC') AND toStartOfHour(timestamp) < fromUnixTimestamp64Milli({h2:Int64}, 'UTC')`;
  const edges =
    `((timestamp >= fromUnixTimestamp64Milli({s:Int64}, 'UTC') AND timestamp < fromUnixTimestamp64Milli({h1:Int64}, 'UTC')) OR ` +
    `(timestamp >= fromUnixTimestamp64Milli({h2:Int64}, 'UTC') AND timestamp <= fromUnixTimestamp64Milli({e:Int64}, 'UTC')))`;
  const hourCounts = (time: string) =>
    `SELECT customer_id, app_name AS k, count() AS n FROM flows WHERE customer_id IN {ids:Array(String)} AND ${time} AND app_name IS NOT NULL GROUP BY customer_id, k`;
  const terms = (ids: string[]): Statement =>
    ids.length === 1
      ? {
          sql:
            `/* bench:sql.terms */ SELECT app_name AS k, count() AS n, sum(count()) OVER () AS all_docs FROM flows ` +
            `WHERE customer_id = {c:String} AND ${win} AND app_name IS NOT NULL GROUP BY k ORDER BY n DESC, k LIMIT 10`,
          params: one(ids[0]!),
        }
      : {
          sql:
            `/* bench:sql.terms */ SELECT customer_id, k, sum(n) AS docs, sum(sum(n)) OVER (PARTITION BY customer_id) AS all_docs FROM (${hourCounts(hours)} UNION ALL ${hourCounts(edges)}) ` +
            `GROUP BY customer_id, k ORDER BY customer_id, docs DESC, k LIMIT 10 BY customer_id`,
          params: { ids, s: startMs, e: endMs, h1: firstHour, h2: lastHour },
          settings: { optimize_use_projections: 1 },
        };
  const termsCheck = (ids: (c: string) => string[]) => (a: any, c: string) =>
    ids(c).every((id) => Array.isArray(a[id]?.buckets) && a[id].buckets.length > 0) ? undefined : `no buckets: ${JSON.stringify(a).slice(0, 200)}`;
  return [
    {
      name: 'records: filter + sort + size 100, 24 h',
      path: '/search/records/1.0',
      body: records({ size: 100, page: 0, sentence: 'dst.port eq 443 and transport.proto eq TCP', sort: [{ field: '@timestamp', order: 'desc' }] }),
      check: pageOf(100),
      sql: (c) => [page(c, 'source', filter, 'LIMIT 100')],
    },
    {
      name: 'records: one 25,000-flow page',
      path: '/search/records/1.0',
      body: records({ size: 25_000, page: 0 }),
      check: pageOf(25_000),
      // As the service reads a page of over 1,000 records: around the uncompressed cache (search.ts).
      sql: (c) => [page(c, 'source', '1', 'LIMIT 25000', { use_uncompressed_cache: 0 })],
    },
    {
      name: 'records: deep page (size 100, page 200)',
      path: '/search/records/1.0',
      body: records({ size: 100, page: 200 }),
      check: (a, c) => (a[c]?.current_page === 200 ? undefined : 'no page 200'),
      sql: (c) => [page(c, 'source', '1', 'LIMIT 100 OFFSET 20000')],
    },
    {
      name: 'records: fields projection (5 paths, size 1000)',
      path: '/search/records/1.0',
      body: records({ size: 1000, page: 0, fields }),
      check: (a, c) => pageOf(1000)(a, c) ?? (Object.keys(a[c].flows[0] ?? {}).includes('stats') ? undefined : 'projection lost bytes'),
      sql: (c) => [page(c, PROJECTED_RECORD, '1', 'LIMIT 1000')],
    },
    {
      name: 'terms: top 10 app_name, one tenant, 24 h',
      path: '/search/agg/1.0',
      body: (c) => ({ instance_ids: [c], module: 'flows', field: 'app_name', size: 10, ...day }),
      check: termsCheck((c) => [c]),
      sql: (c) => [terms([c])],
    },
    {
      name: `terms: top 10 app_name, MSP-wide (${prepared.tenantIds.length} tenants), 24 h`,
      path: '/search/agg/1.0',
      body: () => ({ instance_ids: prepared.tenantIds, module: 'flows', field: 'app_name', size: 10, ...day }),
      check: termsCheck(() => prepared.tenantIds),
      sql: () => [terms(prepared.tenantIds)],
    },
    {
      name: 'timeseries: 24 h in 5 m buckets, sum of bytes',
      path: '/search/records/1.0',
      body: records({ size: 0, timeseries: { interval: '5m', metric: 'sum:bytes' } }),
      check: (a, c) => (a[c]?.timeseries?.buckets?.length >= 288 ? undefined : 'missing buckets'),
      sql: (c) => [
        counts(c),
        {
          sql:
            `/* bench:sql.timeseries */ SELECT intDiv(toUnixTimestamp64Milli(timestamp), 300000) * 300000 AS b, count() AS n, ifNull(sum(stats_volume_bytes_total), 0) AS v ` +
            `FROM flows WHERE customer_id = {c:String} AND ${win} GROUP BY b ORDER BY b`,
          params: one(c),
        },
      ],
    },
  ];
}

/** The three ways each question is timed, request by request. */
type Side = 'rest' | 'sql' | 'store';
const SIDES: readonly Side[] = ['rest', 'sql', 'store'];

/**
 * Runs every side closed-loop, one request at a time, interleaved for `seconds` a side (until
 * each side has at least MIN_SAMPLES and at most 400 latencies), rotating tenants and the sides'
 * order; the latencies of each side. Each round asks one tenant's question on every side in turn,
 * so a drift of the host's speed (20 % within an hour here) or a background merge weighs on all
 * sides alike. The floor is for the slow scenarios: 4 s of 300 ms pages gave ~11 samples, and
 * their p50 moved by tens of milliseconds from one run to the next.
 */
async function measure(seconds: number, tenants: string[], run: Record<Side, (tenant: string) => Promise<number>>): Promise<Record<Side, number[]>> {
  const out: Record<Side, number[]> = { rest: [], sql: [], store: [] };
  const until = performance.now() + seconds * SIDES.length * 1000;
  for (let i = 0; out.rest.length < 400 && (out.rest.length < MIN_SAMPLES || performance.now() < until); i++) {
    const tenant = tenants[i % tenants.length]!;
    for (let k = 0; k < SIDES.length; k++) {
      const side = SIDES[(i + k) % SIDES.length]!;
      out[side].push(await run[side](tenant));
    }
  }
  return out;
}

/**
 * Runs `fn` untimed before it is measured, so that each scenario is timed in its steady state:
 * code optimized, index marks in the engine's caches, and the data in the OS page cache. Every
 * tenant that measure() will ask (the first MIN_SAMPLES at least, more within 5 s), in the same
 * order. This host evicts page cache left idle for ~30 s (tools/bench/HISTORY.md): a pass long
 * enough (over 20 s, cold data) to lose its first tenants' pages again is run once more.
 */
async function warmUp(tenants: string[], fn: (tenant: string) => Promise<void>): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    const started = performance.now();
    for (const [i, tenant] of tenants.entries()) {
      if (i >= MIN_SAMPLES && performance.now() - started > 5_000) break;
      await fn(tenant);
    }
    if (performance.now() - started < 20_000) return;
  }
}

/** Starts token-load.ts and resolves once its own warm-up is done and the timed requests have begun. */
async function startTokenLoad(url: string, body: string, rate: number): Promise<{ child: ChildProcess; stop(): Promise<TokenLatencies> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', TOKEN_LOAD, url, body, String(rate)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`token load exited with ${code} before it was ready`)));
  });
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve(m as never));
        child.send('stop');
      }),
  };
}

/** A call through search-host.ts's door: how long it took on the service's engine. */
function hostCall(host: ChildProcess, call: HostCall): Promise<number> {
  return new Promise((resolve, reject) => {
    host.once('message', (answer: HostAnswer) => ('ms' in answer ? resolve(answer.ms) : reject(new Error(answer.error))));
    host.send(call);
  });
}

interface Measured {
  sides: Record<Side, number[]>;
  firstByte: number[];
  tokens: TokenLatencies;
}

/**
 * The service on the data directory (search-host.ts), every scenario's answer checked, token
 * issuance timed alone, then each scenario timed on its three sides with token issuance beside.
 */
async function measureScenarios(list: Scenario[], prepared: Prepared, env: Record<string, string>, seconds: number, tokenRate: number) {
  const tenants = prepared.tenantIds;
  const credentials = JSON.stringify(prepared.client);
  const server = await startProcess('tools/bench/search-host.ts', env, { ipc: true });
  const host = server.child;
  const tokenUrl = `${server.url}/rest/oauth2/token/1.0`;
  try {
    const { access_token } = await post(tokenUrl, prepared.client);
    const headers = { authorization: `Bearer ${access_token}` };
    for (const s of list) {
      for (const tenant of tenants.slice(0, 2)) {
        const res = await postJson(server.url + s.path, JSON.stringify(s.body(tenant)), headers);
        const answer = JSON.parse(res.body.toString());
        const problem = res.status !== 200 ? `status ${res.status}: ${JSON.stringify(answer).slice(0, 300)}` : s.check(answer, tenant);
        if (problem) throw new Error(`${s.name}: ${problem}`);
      }
    }
    const idle = await startTokenLoad(tokenUrl, credentials, tokenRate);
    await new Promise((r) => setTimeout(r, 5000));
    const idleTokens = (await idle.stop()).latencies;

    const measured: Measured[] = [];
    for (const s of list) {
      let firstByte: number[] = [];
      const run: Record<Side, (tenant: string) => Promise<number>> = {
        rest: async (tenant) => {
          const body = JSON.stringify(s.body(tenant));
          const started = performance.now();
          const res = await postJson(server.url + s.path, body, headers);
          const ms = performance.now() - started;
          if (res.status !== 200) throw new Error(`${s.name}: status ${res.status}`);
          firstByte.push(res.firstByteMs);
          return ms;
        },
        sql: (tenant) => hostCall(host, { statements: s.sql(tenant) }),
        store: (tenant) => {
          const { instance_ids, module: _module, ...rest } = s.body(tenant);
          const request = { customerIds: instance_ids as string[], ...rest } as never;
          return hostCall(host, s.path === '/search/agg/1.0' ? { store: 'terms', request } : { store: 'records', request });
        },
      };
      await warmUp(tenants, async (tenant) => {
        for (const side of SIDES) await run[side](tenant);
      });
      firstByte = [];
      const load = await startTokenLoad(tokenUrl, credentials, tokenRate);
      const sides = await measure(seconds, tenants, run);
      const tokens = await load.stop();
      measured.push({ sides, firstByte, tokens });
      const p50 = (side: Side) => summarize(sides[side]).p50.toFixed(1);
      console.log(
        `  ${s.name}: REST p50 ${p50('rest')} ms, SQL ${p50('sql')}, store ${p50('store')}; tokens meanwhile p99 ${summarize(tokens.latencies).p99.toFixed(1)} ms`,
      );
    }
    return { measured, idleTokens };
  } finally {
    await stopProcess(host);
  }
}

async function main(): Promise<void> {
  const o = readOptions();
  const dataDir = o.data ?? mkdtempSync(join(tmpdir(), 'bd-bench-search-'));
  mkdirSync(dataDir, { recursive: true });
  const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...BENCH_RATE_LIMITS, DATABASE_URL: '', CLICKHOUSE_URL: '' };
  const markerPath = join(dataDir, MARKER);
  let prepared: Prepared | undefined = existsSync(markerPath) ? JSON.parse(readFileSync(markerPath, 'utf8')) : undefined;
  if (prepared && (prepared.rows !== o.rows || prepared.tenants !== o.tenants || prepared.days !== o.days)) {
    throw new Error(`${dataDir} holds ${prepared.rows} rows / ${prepared.tenants} tenants / ${prepared.days} days; use another --data directory`);
  }
  const cleanup = () => {
    if (!o.data) rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    if (prepared) {
      console.log(`reusing ${dataDir}: ${prepared.storedRows.toLocaleString()} flows (generated in ${prepared.generationSeconds.toFixed(0)} s)`);
    } else {
      const needed = o.rows * BYTES_PER_FLOW;
      if (freeBytes(dataDir) < needed) {
        throw new Error(
          `${o.rows.toLocaleString()} flows need about ${(needed / 1e9).toFixed(0)} GB free under ${dataDir}; there are ${(freeBytes(dataDir) / 1e9).toFixed(0)} GB`,
        );
      }
      console.log(`preparing ${o.rows.toLocaleString()} flows for ${o.tenants} tenants over ${o.days} days in ${dataDir}`);
      const t0 = performance.now();
      const { tenantIds, client } = await createTenants(env, o.tenants);
      console.log(`  tenants: ${tenantIds.length} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      const endMs = Math.floor(Date.now() / 60_000) * 60_000;
      const engine = new ChdbEngine(join(dataDir, 'clickhouse'));
      await migrateFlowStore(engine);
      const g0 = performance.now();
      const { days, storedRows } = await generateFlows(engine, o, tenantIds, endMs);
      const generationSeconds = (performance.now() - g0) / 1000;
      console.log(
        `  flows: ${storedRows.toLocaleString()} stored in ${generationSeconds.toFixed(0)} s (${Math.round(storedRows / generationSeconds).toLocaleString()} flows/s)`,
      );
      await engine.close();
      prepared = {
        rows: o.rows,
        tenants: o.tenants,
        days: o.days,
        coveredDays: days,
        seedRows: o.seedRows,
        endMs,
        storedRows,
        tenantIds,
        client,
        generationSeconds,
      };
      writeFileSync(markerPath, JSON.stringify(prepared, null, 2));
    }

    const list = scenarios(prepared).filter((s) => !o.only || s.name.includes(o.only));
    if (!list.length) throw new Error(`no scenario's name contains ${o.only}`);
    {
      // Every day in one part, and any other merge finished, before timing. No read of the whole
      // day to warm the page cache: each scenario's warm-up reads what it then measures, and on a
      // host that evicts idle page cache (tools/bench/HISTORY.md) such a read is gone within a
      // minute, its eviction running during the first measurements.
      const engine = new ChdbEngine(join(dataDir, 'clickhouse'));
      await migrateFlowStore(engine);
      await mergeQuietDays(engine, dataDir, partitionOf(prepared.endMs - DAY_MS));
      await settle(engine, 300_000);
      await engine.close();
    }
    const tenants = prepared.tenantIds;

    const { measured, idleTokens } = await measureScenarios(list, prepared, env, o.seconds, o.tokenRate);
    const tokensIdle = summarize(idleTokens);

    const f = (ms: number) => ms.toFixed(1).padStart(8);
    console.log('');
    console.log(
      `${prepared.storedRows.toLocaleString()} flows, ${tenants.length} tenants, ${prepared.coveredDays.toFixed(1)} days (generated in ${prepared.generationSeconds.toFixed(0)} s); chDB on the service's thread; one request at a time`,
    );
    console.log(
      `${'scenario (ms)'.padEnd(52)} ${'REST p50'.padStart(8)} ${'p99'.padStart(8)} ${'SQL p50'.padStart(8)} ${'p99'.padStart(8)} ${'REST/SQL'.padStart(8)} ${'n'.padStart(4)}  ` +
        `${'1st byte'.padStart(8)} ${'/SQL'.padStart(5)}  ${'store p50'.padStart(9)} ${'p99'.padStart(8)}  ${'token p50'.padStart(9)} ${'p99'.padStart(8)}`,
    );
    list.forEach((s, i) => {
      const { sides, firstByte, tokens } = measured[i]!;
      const [r, q, st, fb] = [sides.rest, sides.sql, sides.store, firstByte].map(summarize) as [LatencySummary, LatencySummary, LatencySummary, LatencySummary];
      const tk = { ...summarize(tokens.latencies), failures: tokens.failures };
      console.log(
        `${s.name.padEnd(52)} ${f(r.p50)} ${f(r.p99)} ${f(q.p50)} ${f(q.p99)} ${(r.p50 / q.p50).toFixed(2).padStart(8)} ${String(r.n).padStart(4)}  ` +
          `${f(fb.p50)} ${(fb.p50 / q.p50).toFixed(2).padStart(5)}  ${f(st.p50).padStart(9)} ${f(st.p99)}  ${f(tk.p50).padStart(9)} ${f(tk.p99)}` +
          (tk.failures ? `  (${tk.failures} token requests failed!)` : ''),
      );
    });
    console.log(`${'token issuance alone (no search running)'.padEnd(52)} ${' '.repeat(94)}  ${f(tokensIdle.p50).padStart(9)} ${f(tokensIdle.p99)}`);
    console.log("REST: until the whole body is read; 1st byte: until the response headers (the server's work, without the transfer).");
    console.log(
      "SQL: hand-written statements on the service's own engine (pages read as bytes); store: its searchRecordPages/aggregateTerms (no HTTP or auth); both timed inside the service's process.",
    );
    console.log('REST, SQL and store alternate request by request (same tenant, rotating order) within each scenario.');
    console.log(`token: ${o.tokenRate} token requests/s to the service from a separate process during every timed scenario.`);
    console.log('p99 of a few hundred samples or fewer is close to the maximum; the machine is shared, so compare ratios, not absolutes.');
  } finally {
    cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
