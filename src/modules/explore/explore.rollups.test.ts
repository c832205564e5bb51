import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlowGenerator } from '../../../tools/collector/flowgen/index.js';
import { Scopes } from '../../auth/scopes.js';
import { Session } from '../../auth/session.js';
import { ChdbEngine, type FlowEngine, insertFlowBatch, IpOrgDataset, migrateFlowStore, named, type QueryOptions } from '../../flowstore/index.js';
import { fakePackage } from '../../flowstore/testkit/ip-org-package.js';
import { BASE, instanceAFlows } from './explore.fixtures.js';
import { ExploreService } from './explore.service.js';

const HOUR = 3_600_000;
const TENANT = 'rollup-a';
const OTHER = 'rollup-b';
const iso = (ms: number) => ({ absolute: { date: new Date(ms).toISOString() } });
const span = (startMs: number, endMs: number) => ({ start: iso(startMs), end: iso(endMs) });

/** Windows on whole hours, on neither, and inside one hour (no whole hour at all). */
const WINDOWS = {
  hours: span(BASE - 3 * HOUR, BASE + HOUR - 1),
  ragged: span(BASE - 2 * HOUR - 41 * 60_000 - 7, BASE + 4_500),
  inside: span(BASE - 50 * 60_000, BASE - 10 * 60_000 + 123),
};

/** The same engine with the projections switched off: every statement reads the rows. */
function rowsOnly(engine: FlowEngine): FlowEngine {
  return new Proxy(engine, {
    get: (target, key) =>
      key === 'query'
        ? (sql: string, params: Record<string, unknown>, opts: QueryOptions = {}) =>
            target.query(sql, params, { ...opts, settings: { ...opts.settings, optimize_use_projections: 0 } })
        : Reflect.get(target, key),
  });
}

interface Ran {
  sql: string;
  params: Record<string, unknown>;
  opts: QueryOptions;
}

/** The same engine, keeping every SELECT it runs. */
function recording(engine: FlowEngine, seen: Ran[]): FlowEngine {
  return new Proxy(engine, {
    get: (target, key) =>
      key === 'query'
        ? (sql: string, params: Record<string, unknown>, opts: QueryOptions = {}) => {
            seen.push({ sql, params, opts });
            return target.query(sql, params, opts);
          }
        : Reflect.get(target, key),
  });
}

/**
 * The views over the rollups (flowstore/egress-rollups.ts) against the same views over the rows:
 * through the projections and with them switched off, every view must give the same answer,
 * whatever the window, narrowed to a source, and after a dataset upgrade. (That the stored
 * rollups hold what the rows hold, through late, repeated and re-sent batches, merges and a
 * tenant's deletion, is egress-rollups.test.ts.)
 */
/**
 * `answer` with every fractional number matched to ±1 in its sixth decimal, counts exactly. The
 * views round averages to six decimals, and a float average is not bit-stable: rollups and rows sum
 * in different orders, and so do ClickHouse's threads from one run to the next, so a value at a
 * rounding boundary may land on either side (seen in CI: burstiness 0.235337 against 0.235338).
 */
function withinRounding(answer: unknown): unknown {
  if (typeof answer === 'number') return Number.isInteger(answer) ? answer : expect.closeTo(answer, 5);
  if (Array.isArray(answer)) return answer.map(withinRounding);
  if (answer && typeof answer === 'object') return Object.fromEntries(Object.entries(answer).map(([k, v]) => [k, withinRounding(v)]));
  return answer;
}

describe('explore rollups', () => {
  const dir = mkdtempSync(join(tmpdir(), 'explore-rollups-'));
  const engine = new ChdbEngine(dir);
  const session = new Session({ customerId: TENANT, clientId: 'test', scopes: [Scopes.searchApi], expiresAt: Number.MAX_SAFE_INTEGER }, async () => ({
    customerId: TENANT,
    tenantIds: new Set([TENANT, OTHER]),
  }));
  const now = () => BASE + 26 * HOUR;
  let dataset: IpOrgDataset;
  /** What the dataset calls 8.8.8.8, which the crafted flows reach without a collector-named organization. */
  let datasetOrg = 'Dataset Google';
  let beaconOrg: string;
  let beaconSource: string;

  const noOwnNetworks = async () => [];
  const insert = (customerId: string, batchId: string, flows: Record<string, unknown>[]) =>
    insertFlowBatch(engine, { customerId, nodeId: 'n1', batchId, flows });
  const services = () => ({
    rollups: new ExploreService(engine, dataset, noOwnNetworks, now),
    rows: new ExploreService(rowsOnly(engine), dataset, noOwnNetworks, now),
  });

  /** Every view of every window, for the top organizations, the dataset-named one and one without flows. */
  async function everyView(service: ExploreService, request: Record<string, unknown> = {}) {
    const answers: Record<string, unknown> = {};
    for (const [name, w] of Object.entries(WINDOWS)) {
      const input = { instanceIds: [TENANT, OTHER], ...w, ...request };
      const list = await service.organizations(session, { ...input, size: 3 });
      answers[`${name} list`] = list;
      for (const org of new Set([...list.organizations.map((o) => o.name!), datasetOrg, beaconOrg, 'Nobody'])) {
        for (const view of ['header', 'temporal', 'cadence', 'transfer', 'reach', 'access'] as const)
          answers[`${name} ${org} ${view}`] = await service[view](session, org, input);
      }
    }
    return answers;
  }

  async function expectAgreement(request: Record<string, unknown> = {}) {
    const { rollups, rows } = services();
    const ours = await everyView(rollups, request);
    expect(ours).toEqual(withinRounding(await everyView(rows, request)));
    return ours;
  }

  beforeAll(async () => {
    await migrateFlowStore(engine);
    dataset = new IpOrgDataset(engine, { packageDir: fakePackage(dir, '1.0.0', datasetOrg), mode: 'lazy' });
    await dataset.ensure();
    expect(dataset.status().state).toBe('ready');
    const gen = createFlowGenerator({
      seed: 7,
      customerId: TENANT,
      startMs: BASE - 3 * HOUR,
      endMs: BASE,
      flowsPerSecond: 1,
      scenarios: [{ kind: 'beacon', intervalSecs: 45 }],
    });
    const incident = gen.groundTruth()[0] as { destination: { org: string }; source: { ip: string } };
    beaconOrg = incident.destination.org;
    beaconSource = incident.source.ip;
    for (let batch = 0; ; batch++) {
      // Batches of 1,000 keep parts small enough that ClickHouse reads the rollups rather than the rows here.
      const flows = gen.take(1_000) as unknown as Record<string, unknown>[];
      if (!flows.length) break;
      await insert(TENANT, `gen-${batch}`, flows);
    }
    await insert(TENANT, 'crafted', instanceAFlows());
    await insert(OTHER, 'crafted', instanceAFlows());
  }, 300_000);
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives every view the answer the rows give, on whole hours, ragged windows and inside one hour', async () => {
    const answers = await expectAgreement();
    expect(answers[`hours ${datasetOrg} header`]).toMatchObject({ upload: 40, download: 80, sources: 2, endpoints: 1 });
    expect(answers[`ragged ${beaconOrg} cadence`]).toMatchObject({ readout: expect.stringMatching(/^machine-steady, sessions beat \d+% at ~45s/) });
    expect((answers['inside list'] as { coverage: { total_flows: number } }).coverage.total_flows).toBeGreaterThan(0);
  }, 120_000);

  it('agrees when narrowed to one source', async () => {
    await expectAgreement({ srcIp: beaconSource });
  }, 120_000);

  it('gives each statement a rollup that can answer it', async () => {
    const seen: Ran[] = [];
    const service = new ExploreService(recording(engine, seen), dataset, noOwnNetworks, now);
    const input = { instanceIds: [TENANT], ...WINDOWS.hours };
    await service.organizations(session, input);
    for (const view of ['header', 'temporal', 'cadence', 'transfer', 'reach', 'access'] as const) await service[view](session, datasetOrg, input);
    // ClickHouse reads the rollup when it costs fewer marks than the rows: on tables this small, not always.
    const served = new Map<string, string>();
    for (const { sql, params, opts } of seen) {
      const rollup = String(opts.settings?.preferred_optimize_projection_name);
      const plan = await engine.query<{ explain: string }>(
        named('explore:test.explain', `EXPLAIN projections = 1 ${sql.replace(/^\/\*.*?\*\/ /, '')}`),
        params,
        { settings: opts.settings },
      );
      const text = plan.map((r) => r.explain).join('\n');
      served.set(
        /^\/\* (\S+) \*\//.exec(sql)![1]!,
        text.includes(`ReadFromMergeTree (${rollup})`) || text.includes(`Projection ${rollup} is usable`) ? rollup : 'rows',
      );
    }
    expect(Object.fromEntries(served)).toEqual({
      'explore:organizations': 'egress_sources',
      'explore:org.dataset_addresses': 'egress_destinations',
      'explore:org.activity': 'egress_sources',
      'explore:org.destinations': 'egress_destinations',
      'explore:org.temporal': 'egress_destinations',
      'explore:org.cadence': 'egress_sources',
      'explore:org.transfer': 'egress_sources',
      'explore:org.access': 'egress_access',
    });
  }, 120_000);

  it('names dataset addresses by the dataset loaded now: an upgrade rewrites nothing', async () => {
    const before = datasetOrg;
    datasetOrg = 'Dataset Google v2';
    dataset = new IpOrgDataset(engine, { packageDir: fakePackage(dir, '1.1.0', datasetOrg), mode: 'lazy' });
    await dataset.ensure();
    const { rollups } = services();
    const names = (await rollups.organizations(session, { instanceIds: [TENANT], ...WINDOWS.hours, size: 1000 })).organizations.map((o) => o.name);
    expect(names).toContain(datasetOrg);
    expect(names).not.toContain(before);
    await expectAgreement();
  }, 300_000);
});
