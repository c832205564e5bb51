/**
 * `npm run bench:explore`: the explore views (wire.md §9) over a generated dataset, p50 per view
 * beside a hand-written ClickHouse statement answering the same question in the same run.
 * Target (issue 6): every view p50 ≤ 300 ms over 10M flows.
 *
 * The data: the reference generator (tools/collector/flowgen) writes a realistic seed (6 hours of
 * a site at BENCH_SEED_FPS flows/s, with a planted beacon and exfiltration), which ClickHouse then
 * copies forward in time until the table holds BENCH_FLOWS flows of one tenant. Every view runs
 * over the whole span (the worst case: all flows in the window). The IP → organization dataset is
 * loaded first (its load time is printed), so the attribution path is the production one. The
 * views read the hourly rollups (flowstore/egress-rollups.ts; a reused directory has them built
 * by the migration first, which the bench waits for); the hand-written statements read the rows.
 *
 * Environment: BENCH_FLOWS (10000000), BENCH_RUNS (15), BENCH_SEED_FPS (5), BENCH_DIR (a chDB
 * data directory to reuse between runs; default a temporary one), BENCH_OWN_NETWORKS (0): with N,
 * the views run twice more with the tenant's own networks (docs/networks.md): N external /24s over
 * the busiest egress destinations (joined on the rollups; they name only the flows no collector
 * named), then the same plus an external network over a private range, which makes explore read
 * the tenant's rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../../src/auth/session.js';
import { ChdbEngine, IpOrgDataset, type OwnNetworkRange, insertFlowBatch, migrateFlowStore, named } from '../../src/flowstore/index.js';
import { parseCidr } from '../../src/flowstore/ip.js';
import { ExploreService } from '../../src/modules/explore/explore.service.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';

const HOUR = 3_600_000;
const target = Number(process.env.BENCH_FLOWS ?? 10_000_000);
const runs = Number(process.env.BENCH_RUNS ?? 15);
const seedFps = Number(process.env.BENCH_SEED_FPS ?? 5);
const reuse = process.env.BENCH_DIR;
const ownNetworks = Number(process.env.BENCH_OWN_NETWORKS ?? 0);
const dir = reuse ?? mkdtempSync(join(tmpdir(), 'bd-bench-explore-'));
const customerId = 'bench-explore';
const SPAN = 6 * HOUR;

const engine = new ChdbEngine(dir);
const log = (...a: unknown[]) => console.log(...a);
try {
  let t0 = performance.now();
  const migrated = await migrateFlowStore(engine, { retentionDays: 3650 });
  if (migrated.applied.length) log(`flow store migrations ${migrated.applied.join(', ')} applied in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  t0 = performance.now();
  const dataset = new IpOrgDataset(engine);
  await dataset.ensure();
  const ds = dataset.status();
  log(`dataset ${ds.dataset} ${ds.loadedVersion}: ${ds.state}, ${ds.prefixes} prefixes, loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const count = async () =>
    Number((await engine.query<{ n: number }>(named('bench:count', 'SELECT count() AS n FROM flows WHERE customer_id = {c:String}'), { c: customerId }))[0]!.n);
  const meta = async () =>
    (
      await engine.query<{ lo: number; hi: number }>(
        named(
          'bench:span',
          'SELECT toUnixTimestamp64Milli(min(timestamp)) AS lo, toUnixTimestamp64Milli(max(timestamp)) AS hi FROM flows WHERE customer_id = {c:String}',
        ),
        { c: customerId },
      )
    )[0]!;
  let have = await count();
  if (have < target) {
    // Start far enough back that the copies end before now.
    const seedStart = Math.floor(Date.now() / HOUR) * HOUR - Math.ceil(target / (seedFps * 3600 * 6) + 2) * SPAN;
    await engine.command(named('bench:reset', 'DELETE FROM flows WHERE customer_id = {c:String}'), { c: customerId });
    t0 = performance.now();
    const gen = createFlowGenerator({
      seed: 42,
      customerId,
      startMs: seedStart,
      endMs: seedStart + SPAN,
      flowsPerSecond: seedFps,
      scenarios: ['beacon', 'exfil'],
    });
    for (let b = 0; ; b++) {
      const flows = gen.take(10_000) as unknown as Record<string, unknown>[];
      if (!flows.length) break;
      await insertFlowBatch(engine, { customerId, nodeId: 'sensor-01', batchId: `seed-${b}`, flows });
    }
    const seedCount = await count();
    log(`seed: ${seedCount} generated flows over 6 h in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
    for (let k = 1, have = seedCount; have < target; k++) {
      const left = target - have;
      await engine.command(
        named(
          'bench:copy',
          // Copies are new rows, never retries: no deduplication. The filter sits in a subquery
          // because the REPLACE aliases would shadow batch_id in its WHERE.
          'INSERT INTO flows SETTINGS insert_deduplicate = 0 SELECT * REPLACE (timestamp + toIntervalMillisecond({shift:Int64}) AS timestamp, ' +
            "concat(id, '-', toString({k:UInt32})) AS id, concat(batch_id, '-', toString({k:UInt32})) AS batch_id) FROM (SELECT * FROM flows " +
            "WHERE customer_id = {c:String} AND batch_id LIKE 'seed-%' AND position(batch_id, '-', 6) = 0 LIMIT {left:UInt64})",
        ),
        { shift: k * SPAN, k, c: customerId, left },
        { timeoutMs: 600_000 },
      );
      const now = await count();
      if (now <= have) throw new Error('bench: a copy inserted nothing');
      have = now;
    }
    log(`copied to ${await count()} flows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  // A directory migrated just now builds its rollups in the background (flowstore/egress-rollups.ts).
  t0 = performance.now();
  const pending = async () =>
    Number(
      (
        await engine.query<{ n: number }>(
          named('bench:mutations', "SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = 'flows' AND NOT is_done"),
          {},
        )
      )[0]!.n,
    );
  while ((await pending()) > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
  if (performance.now() - t0 > 1_000) log(`waited ${((performance.now() - t0) / 1000).toFixed(1)} s for the rollups to be built`);
  const sizes = await engine.query<{ name: string; rows: number; mb: number }>(
    named(
      'bench:rollups',
      "SELECT name, sum(rows) AS rows, round(sum(bytes_on_disk) / 1e6, 1) AS mb FROM system.projection_parts WHERE database = currentDatabase() AND table = 'flows' AND active GROUP BY name ORDER BY name",
    ),
    {},
  );
  const [table] = await engine.query<{ mb: number }>(
    named('bench:table', "SELECT round(sum(bytes_on_disk) / 1e6, 1) AS mb FROM system.parts WHERE database = currentDatabase() AND table = 'flows' AND active"),
    {},
  );
  log(`rollups: ${sizes.map((r) => `${r.name} ${Number(r.rows)} rows ${r.mb} MB`).join(', ')} (flows table with them: ${table!.mb} MB)`);

  have = await count();
  const span = await meta();
  const window = { start: { absolute: { date: new Date(span.lo).toISOString() } }, end: { absolute: { date: new Date(span.hi).toISOString() } } };
  log(`flows: ${have} of tenant ${customerId}, ${((span.hi - span.lo) / 86_400_000).toFixed(1)} days; ${runs} runs per view (chDB, in-process)`);

  const session = { customerId, assert() {}, tenantScope: async () => ({ customerId, tenantIds: new Set([customerId]) }) } as unknown as Session;
  let networks: OwnNetworkRange[] = [];
  const explore = new ExploreService(engine, dataset, async () => networks);
  const request = { instanceIds: [customerId], ...window };
  const list = await explore.organizations(session, { ...request, size: 50 });
  const top = list.organizations[0]!.name!;
  const rare = list.organizations.filter((o) => o.sources === 1).sort((a, b) => b.flows - a.flows)[0]?.name ?? top;
  log(`top org: ${top} (${list.organizations[0]!.flows} flows); rare org: ${rare}`);

  const p = { c: customerId, lo: span.lo, hi: span.hi, org: top };
  const scope =
    "customer_id = {c:String} AND timestamp >= fromUnixTimestamp64Milli({lo:Int64}) AND timestamp <= fromUnixTimestamp64Milli({hi:Int64}) AND src_address_type = 'private' AND dst_address_type = 'public'";
  const ofOrg = `${scope} AND dst_ctx_organization = {org:String}`;
  const up = 'stats_volume_bytes_src_sum';
  const down = 'stats_volume_bytes_dst_sum';
  const hand: Record<string, string[]> = {
    organizations: [
      `SELECT dst_ctx_organization AS org, sum(${up}) AS u, sum(${down}) AS d, count() AS n, uniqExact(src_ip) AS s FROM flows WHERE ${scope} GROUP BY org ORDER BY u + d DESC LIMIT 25`,
    ],
    header: [
      `SELECT sum(${up}), sum(${down}), uniqExact(src_ip), uniqExact(dst_ip), any(dst_ctx_industry), any(dst_geo_country_name) FROM flows WHERE ${ofOrg}`,
      `SELECT src_process_name, count() AS n FROM flows WHERE ${ofOrg} GROUP BY src_process_name ORDER BY n DESC LIMIT 20`,
    ],
    temporal: [`SELECT toDayOfWeek(timestamp) AS d, toHour(timestamp) AS h, count() FROM flows WHERE ${ofOrg} GROUP BY d, h`],
    cadence: [
      `SELECT quantilesExact(0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.99)(g) FROM (SELECT arrayJoin(arrayPopFront(arrayDifference(arraySort(groupArray(toUnixTimestamp64Milli(timestamp)))))) / 1000 AS g FROM flows WHERE ${ofOrg} GROUP BY src_ip)`,
      `SELECT countIf(beacon_session_level_is_beacon), avg(stats_timing_inter_arrival_secs_regularity) FROM flows WHERE ${ofOrg}`,
    ],
    transfer: [
      `SELECT avg(${up} + ${down}), stddevPop(${up} + ${down}), sum(stats_size_payload_entropy_sum) / sum(stats_size_payload_entropy_count), avg(stats_timing_duration_secs_sum), sum(${up}), sum(${down}) FROM flows WHERE ${ofOrg}`,
    ],
    reach: [
      `SELECT src_ip, sum(${up}) AS u, sum(${down}) AS d, count() FROM flows WHERE ${ofOrg} GROUP BY src_ip ORDER BY u + d DESC LIMIT 50`,
      `SELECT src_process_name, count() AS n, uniqExact(src_ip) FROM flows WHERE ${ofOrg} GROUP BY src_process_name ORDER BY n DESC LIMIT 50`,
    ],
    access: [
      ['tls_version', 'dst_port', 'transport_proto', 'app_name']
        .map((c) => `SELECT toString(${c}) AS k, count() AS n FROM flows WHERE ${ofOrg} GROUP BY k ORDER BY n DESC LIMIT 20`)
        .join(' UNION ALL '),
    ],
  };
  const views: Record<string, (org: string) => Promise<unknown>> = {
    organizations: () => explore.organizations(session, { ...request, size: 25 }),
    header: (org) => explore.header(session, org, request),
    temporal: (org) => explore.temporal(session, org, request),
    cadence: (org) => explore.cadence(session, org, request),
    transfer: (org) => explore.transfer(session, org, request),
    reach: (org) => explore.reach(session, org, request),
    access: (org) => explore.access(session, org, request),
  };

  const p50 = async (fn: () => Promise<unknown>) => {
    await fn();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const s = performance.now();
      await fn();
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)]!;
  };
  const handRun = (statements: string[]) => () => Promise.all(statements.map((sql, i) => engine.query(named(`bench:hand.${i}`, sql), p)));

  log(`${'view'.padEnd(28)} ${'ours p50'.padStart(10)} ${'hand SQL p50'.padStart(13)}  ratio  target ≤ 300 ms`);
  for (const [name, fn] of Object.entries(views)) {
    const ours = await p50(() => fn(top));
    const theirs = await p50(handRun(hand[name]!));
    log(
      `${`${name}${name === 'organizations' ? '' : ` (${top})`}`.slice(0, 28).padEnd(28)} ${ours.toFixed(1).padStart(8)} ms ${theirs.toFixed(1).padStart(10)} ms  ${(ours / theirs).toFixed(2).padStart(5)}  ${ours <= 300 ? 'ok' : 'OVER'}`,
    );
  }
  const rareCadence = await p50(() => views.cadence!(rare));
  log(`${`cadence (${rare})`.slice(0, 28).padEnd(28)} ${rareCadence.toFixed(1).padStart(8)} ms`);

  if (ownNetworks > 0) {
    const busiest = await engine.query<{ net: string }>(
      named(
        'bench:busiest_networks',
        `SELECT DISTINCT net FROM (SELECT concat(IPv4NumToString(bitAnd(IPv4StringToNumOrDefault(dst_ip), 4294967040)), '/24') AS net, count() AS n FROM flows ` +
          `WHERE customer_id = {c:String} AND is_egress = 1 AND isIPv4String(dst_ip) ` +
          `GROUP BY net ORDER BY n DESC LIMIT {n:UInt32})`,
      ),
      { c: customerId, n: ownNetworks },
    );
    const range = (cidr: string, name: string, internal: boolean): OwnNetworkRange => ({ customerId, ...parseCidr(cidr)!, name, internal });
    const naming = busiest.map((r, i) => range(r.net, `Own ${i}`, false));
    const modes: [string, OwnNetworkRange[]][] = [
      [`${naming.length} naming networks`, naming],
      [`${naming.length} + 1 over 10.250.0.0/16`, [...naming, range('10.250.0.0/16', 'Lab Internet', false)]],
    ];
    for (const [mode, list] of modes) {
      networks = list;
      const named0 = (await explore.organizations(session, { ...request, size: 25 })).organizations.filter((o) => o.name?.startsWith('Own ')).length;
      log(`with ${mode} (${named0} of the top 25 named by them):`);
      for (const [name, fn] of Object.entries(views)) log(`  ${name.padEnd(26)} ${(await p50(() => fn(top))).toFixed(1).padStart(8)} ms`);
      log(`  ${'header (Own 0)'.padEnd(26)} ${(await p50(() => views.header!('Own 0'))).toFixed(1).padStart(8)} ms`);
    }
  }
} finally {
  await engine.close();
  if (!reuse) rmSync(dir, { recursive: true, force: true });
}
