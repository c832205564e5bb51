/**
 * `npm run bench:detect`: detection quality and the investigations API.
 *
 * 1. Recall and false positives over several seeds: for each seed, hours of the reference
 *    collector's traffic with every planted scenario (tools/collector/flowgen) → how many planted
 *    attacks became an investigation with the right detector, hosts and verdict, and how many
 *    investigations match nothing planted; plus a day of benign traffic alone (false positives).
 * 2. GET /rest/investigations/1.0 and /{id} with 10,000 investigations in the caller's tree:
 *    p50 and p95 over sequential requests (target p50 ≤ 50 ms).
 *
 * With `-- --lab [--runs N] [--seed N] [--report FILE]`: recall and false positives over runs of
 * the lab instead (tools/bench/detect-lab.ts, docs/lab.md).
 *
 * Options (environment): BENCH_SEEDS (default 1,2,3; empty skips part 1), BENCH_HOURS (6), BENCH_FPS (1),
 * BENCH_BENIGN_HOURS (24; 0 skips), BENCH_INVESTIGATIONS (10000), BENCH_REQUESTS (200).
 * Uses TEST_DATABASE_URL when set, otherwise a throwaway PostgreSQL cluster as the tests do.
 */
import { labBench } from './detect-lab.js';
import { startTestApp } from '../../test/kit/app.js';
import { testPostgres } from '../../test/kit/throwaway-postgres.js';
import { call } from '../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../test/kit/seed.js';
import { insertFlowBatch } from '../../src/flowstore/index.js';
import { investigationRow } from '../../src/modules/investigations/investigations.fixtures.js';
import { expectedDestination } from '../../src/modules/detection/detection.fixtures.js';
import { createFlowGenerator, type FlowGeneratorOptions, type Incident } from '../collector/flowgen/index.js';

// `-- --lab`: the same measures over runs of the lab on real traffic (detect-lab.ts).
if (process.argv.includes('--lab')) process.exit(await labBench(process.argv.slice(2)));

const postgres = await testPostgres();
const seeds = (process.env.BENCH_SEEDS ?? '1,2,3')
  .split(',')
  .filter((x) => x.trim() !== '')
  .map(Number);
const hours = Number(process.env.BENCH_HOURS ?? 6);
const fps = Number(process.env.BENCH_FPS ?? 1);
const benignHours = Number(process.env.BENCH_BENIGN_HOURS ?? 24);
const investigations = Number(process.env.BENCH_INVESTIGATIONS ?? 10_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const HOUR = 3_600_000;
const END = Math.floor(Date.now() / 60_000) * 60_000 - 60_000;

const t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });

async function load(options: FlowGeneratorOptions): Promise<{ incidents: Incident[]; flows: number }> {
  const gen = createFlowGenerator(options);
  let flows = 0;
  for (let batch = 0; ; batch++) {
    const chunk = gen.take(20_000);
    if (chunk.length === 0) break;
    flows += chunk.length;
    await insertFlowBatch(t.app.flows, {
      customerId: options.customerId,
      nodeId: 'node_bench',
      batchId: `b${batch}`,
      flows: chunk as unknown as Record<string, unknown>[],
    });
  }
  return { incidents: gen.groundTruth(), flows };
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

try {
  // 1. Recall and false positives.
  const perKind = new Map<string, { planted: number; found: number }>();
  let planted = 0;
  let found = 0;
  let falsePositives = 0;
  let benignFalsePositives = 0;
  console.log(`detection: seeds ${seeds.join(', ')}; ${hours} h at ${fps} flows/s with every scenario; ${benignHours} h of benign traffic per seed`);
  for (const seed of seeds) {
    const tenant = await seedTenant(t.app);
    const startMs = END - hours * HOUR;
    const { incidents, flows } = await load({
      seed,
      customerId: tenant.id,
      startMs,
      endMs: END,
      flowsPerSecond: fps,
      scenarios: ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel', { kind: 'bruteforce', service: 'rdp' }, { kind: 'bruteforce', service: 'smb' }],
    });
    const started = performance.now();
    const result = await t.app.services.detection.runNow(tenant.id, { window: { fromMs: startMs, toMs: END }, nowMs: END });
    const ms = performance.now() - started;
    const unmatched = [...result.opened];
    let hits = 0;
    for (const incident of incidents) {
      const stats = perKind.get(incident.kind) ?? { planted: 0, found: 0 };
      stats.planted++;
      const i = unmatched.findIndex(
        (o) =>
          o.detector === incident.kind && o.source === incident.source.ip && o.destination === expectedDestination(incident) && o.disposition === 'malicious',
      );
      if (i >= 0) {
        stats.found++;
        hits++;
        unmatched.splice(i, 1);
      }
      perKind.set(incident.kind, stats);
    }
    planted += incidents.length;
    found += hits;
    falsePositives += unmatched.length;
    let benign = 0;
    if (benignHours > 0) {
      const quiet = await seedTenant(t.app);
      await load({ seed: seed + 1000, customerId: quiet.id, startMs: END - benignHours * HOUR, endMs: END, flowsPerSecond: fps / 2 });
      benign = (await t.app.services.detection.runNow(quiet.id, { window: { fromMs: END - benignHours * HOUR, toMs: END }, nowMs: END })).opened.length;
      benignFalsePositives += benign;
    }
    console.log(
      `  seed ${seed}: ${flows} flows, detection ${(ms / 1000).toFixed(1)} s; found ${hits}/${incidents.length}; ` +
        `false positives ${unmatched.length}${unmatched.length ? ` (${unmatched.map((u) => `${u.detector} ${u.source}→${u.destination}`).join('; ')})` : ''}; benign day: ${benign}`,
    );
  }
  for (const [kind, s] of perKind) console.log(`  ${kind.padEnd(11)} recall ${s.found}/${s.planted}`);
  if (planted)
    console.log(
      `  recall ${((found / planted) * 100).toFixed(1)}% (${found}/${planted}); false positives ${falsePositives} beside attacks, ${benignFalsePositives} in benign days`,
    );

  // 2. The investigations API with many investigations.
  const msp = await seedTenant(t.app, { msp: true });
  const children = [
    await seedTenant(t.app, { parentId: msp.id }),
    await seedTenant(t.app, { parentId: msp.id }),
    await seedTenant(t.app, { parentId: msp.id }),
  ];
  const owners = [msp, ...children].map((c) => c.id);
  const kinds = ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'] as const;
  const ids: string[] = [];
  for (let i = 0; i < investigations; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, investigations - i) }, (_, j) => {
      const n = i + j;
      return investigationRow(owners[n % owners.length], {
        detector: kinds[n % kinds.length],
        source: `10.20.${(n >> 8) & 255}.${n & 255}`,
        severity: (n * 37) % 100,
        confidence: 0.5 + ((n * 13) % 50) / 100,
        disposition: (['malicious', 'escalate', 'benign'] as const)[n % 3],
        createdAt: new Date(END - n * 60_000),
      });
    });
    await t.app.db.prisma.investigation.createMany({ data: rows });
    ids.push(...rows.map((r) => r.id!));
  }
  const caller = await seedCaller(t.app, msp.id);
  const time = async (path: string) => {
    const samples: number[] = [];
    for (let i = 0; i < requests; i++) {
      const url = path.replace('{id}', ids[(i * 7919) % ids.length]);
      const started = performance.now();
      const res = await call(t.url, 'GET', url, { token: caller.token });
      samples.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return samples;
  };
  console.log(
    `investigations API: ${investigations} investigations over ${owners.length} tenants of one tree; ${requests} sequential requests each (target p50 ≤ 50 ms)`,
  );
  for (const path of [
    '/rest/investigations/1.0?limit=50&offset=0',
    '/rest/investigations/1.0?limit=200&offset=0&sort=recent',
    '/rest/investigations/1.0?limit=50&offset=0&disposition=malicious&min_confidence=0.8&since=2020-01-01T00%3A00%3A00%2B00%3A00',
    '/rest/investigations/1.0?limit=50&offset=9000',
    '/rest/investigations/1.0/{id}',
  ]) {
    await time(path); // warm-up
    const samples = await time(path);
    console.log(`  GET ${path.padEnd(112)} p50 ${percentile(samples, 50).toFixed(1).padStart(5)} ms  p95 ${percentile(samples, 95).toFixed(1).padStart(5)} ms`);
  }
} finally {
  await t.stop();
  postgres.stop();
}
