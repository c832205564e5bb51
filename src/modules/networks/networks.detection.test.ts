import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { type FlowSpec, cadence, insertFlows } from '../detection/detection.fixtures.js';

/**
 * Detection over a tenant's own networks: their kind decides which side is internal (over the
 * collector's address_type and the address ranges), and an external network names the
 * destination the collector named no organization for. One tenant per case, as detectors.test.ts.
 */
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const HOUR = 3_600_000;
const T0 = NOW - 2 * HOUR;
const WINDOW = { fromMs: NOW - 3 * HOUR, toMs: NOW };
const WS = '10.20.1.50';

const beaconTo = (dst: string, org?: string): FlowSpec[] =>
  cadence(T0, 40, 60_000, 0.02).map((at) => ({ at, src: WS, dst, port: 443, up: 520, down: 380, process: 'rundll32.exe', ...(org ? { org } : {}) }));

/** 60 unanswered TCP attempts from WS to addresses of one /24 in two minutes. */
const sweepOf = (prefix: string): FlowSpec[] =>
  Array.from({ length: 60 }, (_, i) => ({
    at: T0 + i * 2_000,
    src: WS,
    dst: `${prefix}.${1 + i}`,
    port: 445,
    up: 60,
    down: 40,
    secs: 0.001,
    answered: false,
    process: 'nmap.exe',
  }));

const replace = `mutation($networks: [OwnNetworkInput!]!) { replaceOwnNetworks(networks: $networks) { networks { cidr } } }`;

interface Case {
  name: string;
  flows: FlowSpec[];
  networks: { cidr: string; name: string; kind: 'INTERNAL' | 'EXTERNAL' }[];
  expect: { detector: string; source: string; destination: string }[];
}

const LAB_CLOUD = { cidr: '10.99.0.0/16', name: 'Lab Cloud', kind: 'EXTERNAL' } as const;

const CASES: Case[] = [
  {
    name: 'a beacon to private addresses the tenant calls external is egress, named by the network',
    flows: beaconTo('10.99.0.7'),
    networks: [LAB_CLOUD],
    expect: [{ detector: 'beacon', source: WS, destination: 'Lab Cloud' }],
  },
  { name: 'the same flows of a tenant without networks are internal traffic', flows: beaconTo('10.99.0.7'), networks: [], expect: [] },
  {
    name: 'a beacon to a public address the tenant calls internal is not egress',
    flows: beaconTo('45.148.10.83', 'Stark Industries Solutions Ltd'),
    networks: [{ cidr: '45.148.10.0/24', name: 'HQ DMZ', kind: 'INTERNAL' }],
    expect: [],
  },
  {
    name: 'the same beacon of a tenant without networks is found',
    flows: beaconTo('45.148.10.83', 'Stark Industries Solutions Ltd'),
    networks: [],
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd' }],
  },
  {
    name: 'a sweep of public addresses the tenant calls internal is an internal scan',
    flows: sweepOf('203.0.113'),
    networks: [{ cidr: '203.0.113.0/24', name: 'DMZ', kind: 'INTERNAL' }],
    expect: [{ detector: 'scan', source: WS, destination: '203.0.113.0/24' }],
  },
  { name: 'the same sweep of a tenant without networks is no internal scan', flows: sweepOf('203.0.113'), networks: [], expect: [] },
];

describe('own networks in detection', () => {
  let t: TestApp;
  const tenantOf = new Map<string, { id: string; token: string }>();

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
    for (const c of CASES) {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      tenantOf.set(c.name, { id: tenant.id, token: caller.token });
      await insertFlows(t.app.flows, tenant.id, c.flows);
      const res = await graphql(t.url, replace, { networks: c.networks }, caller.token);
      expect(res.errors).toBeUndefined();
    }
  }, 120_000);
  afterAll(() => t.stop());

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const outcome = await t.app.services.detection.detectTenant(tenantOf.get(c.name)!.id, WINDOW, NOW);
    expect(outcome.failed).toEqual([]);
    expect(outcome.opened.map((o) => ({ detector: o.detector, source: o.source, destination: o.destination }))).toEqual(c.expect);
  });

  it('applies a change to the next run', async () => {
    const tenant = await seedTenant(t.app);
    const caller = await seedCaller(t.app, tenant.id);
    await insertFlows(t.app.flows, tenant.id, beaconTo('10.99.0.8'));
    expect((await t.app.services.detection.detectTenant(tenant.id, WINDOW, NOW)).opened).toEqual([]);
    expect((await graphql(t.url, replace, { networks: [LAB_CLOUD] }, caller.token)).errors).toBeUndefined();
    expect((await t.app.services.detection.detectTenant(tenant.id, WINDOW, NOW)).opened.map((o) => o.destination)).toEqual(['Lab Cloud']);
  });
});
