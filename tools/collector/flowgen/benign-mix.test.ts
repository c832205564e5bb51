import { describe, expect, it } from 'vitest';
import { BASE, hoursFrom, TUESDAY_10AM, TUESDAY_MIDNIGHT } from './fixtures.js';
import { createFlowGenerator, type FlowRecord } from './index.js';
import { DETECTION_THRESHOLDS, detect, margins } from './reference-detectors.js';

function tally<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function share(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

describe('benign mix during a working morning', () => {
  const gen = createFlowGenerator({ ...BASE, ...hoursFrom(TUESDAY_10AM, 2) });
  const network = gen.network;
  const stats = {
    flows: 0,
    direction: new Map<string, number>(),
    orgFlows: new Map<string, number>(),
    orgSources: new Map<string, Set<string>>(),
    apps: new Map<string, number>(),
    tls: new Map<string, number>(),
    bytes: [] as number[],
    internalSources: new Set<string>(),
    privateSource: 0,
    guestFlows: 0,
    guestWithProcess: 0,
    managedEgress: 0,
    managedEgressWithProcess: 0,
  };
  for (const r of gen as Iterable<FlowRecord>) {
    stats.flows++;
    tally(stats.direction, r.meta.tags[1]);
    tally(stats.apps, r.app_name);
    if (r.tls?.version) tally(stats.tls, r.tls.version);
    stats.bytes.push(r.stats.volume.bytes.total);
    if (r.src.address_type === 'private') {
      stats.privateSource++;
      stats.internalSources.add(r.src.ip);
    }
    const guest = r.src.ip.startsWith('192.168.');
    if (guest) {
      stats.guestFlows++;
      if (r.src.process) stats.guestWithProcess++;
    }
    if (r.src.address_type === 'private' && r.dst.address_type === 'public') {
      const org = r.dst.ctx.organization!;
      tally(stats.orgFlows, org);
      let sources = stats.orgSources.get(org);
      if (!sources) stats.orgSources.set(org, (sources = new Set()));
      sources.add(r.src.ip);
      if (!guest) {
        stats.managedEgress++;
        if (r.src.process) stats.managedEgressWithProcess++;
      }
    }
  }
  const ranked = [...stats.orgFlows].sort((a, b) => b[1] - a[1]);
  const egressFlows = ranked.reduce((sum, [, n]) => sum + n, 0);

  it('is mostly egress, with DNS, east-west and a little inbound', () => {
    expect(share(stats.direction.get('egress')!, stats.flows)).toBeGreaterThan(0.45);
    expect(share(stats.direction.get('egress')!, stats.flows)).toBeLessThan(0.8);
    expect(share(stats.direction.get('east-west')!, stats.flows)).toBeGreaterThan(0.15);
    expect(share(stats.direction.get('ingress')!, stats.flows)).toBeGreaterThan(0.01);
    expect(share(stats.direction.get('ingress')!, stats.flows)).toBeLessThan(0.1);
    expect(share(stats.apps.get('DNS')!, stats.flows)).toBeGreaterThan(0.2);
    expect(share(stats.apps.get('DNS')!, stats.flows)).toBeLessThan(0.45);
    expect(share(stats.privateSource, stats.flows)).toBeGreaterThan(0.9);
  });

  it('reaches 40+ organizations with Zipf-like popularity', () => {
    expect(ranked.length).toBeGreaterThanOrEqual(40);
    const top = share(ranked[0][1], egressFlows);
    expect(top).toBeGreaterThan(0.12);
    expect(top).toBeLessThan(0.45);
    expect(
      share(
        ranked.slice(0, 5).reduce((s, [, n]) => s + n, 0),
        egressFlows,
      ),
    ).toBeGreaterThan(0.45);
    expect(ranked[0][1]).toBeGreaterThan(3 * ranked[9][1]);
    expect(ranked[9][1]).toBeGreaterThan(ranked[ranked.length - 1][1]);
    expect(ranked.slice(0, 4).map(([org]) => org)).toContain('Google LLC');
    // Popular orgs are reached by many hosts; that is what separates them from planted destinations.
    expect(stats.orgSources.get(ranked[0][0])!.size).toBeGreaterThan(10);
  });

  it('uses realistic applications, ports and TLS versions', () => {
    for (const app of ['HTTPS', 'QUIC', 'DNS', 'LDAP', 'SMB', 'KERBEROS', 'SMTP', 'HTTP', 'SSH', 'NTP']) {
      expect(stats.apps.get(app) ?? 0, app).toBeGreaterThan(0);
    }
    const tls13 = stats.tls.get('TLS 1.3') ?? 0;
    const tls12 = stats.tls.get('TLS 1.2') ?? 0;
    expect(share(tls13, tls13 + tls12)).toBeGreaterThan(0.7);
    expect(tls12).toBeGreaterThan(0);
  });

  it('has heavy-tailed byte counts', () => {
    const sorted = [...stats.bytes].sort((a, b) => a - b);
    const p50 = sorted[sorted.length >> 1];
    const p99 = sorted[Math.floor(sorted.length * 0.99)];
    expect(p99 / p50).toBeGreaterThan(100);
    expect(sorted[sorted.length - 1]).toBeGreaterThan(100 * 1024 * 1024);
  });

  it('draws on a stable set of internal hosts across all three private ranges', () => {
    const known = new Set([...network.managed, ...network.guests].map((h) => h.ip));
    for (const ip of stats.internalSources) expect(known.has(ip), ip).toBe(true);
    const ranges = new Set([...stats.internalSources].map((ip) => ip.split('.')[0]));
    expect([...ranges].sort()).toEqual(['10', '172', '192']);
  });

  it('names processes on managed hosts only', () => {
    expect(stats.guestFlows).toBeGreaterThan(0);
    expect(stats.guestWithProcess).toBe(0);
    expect(share(stats.managedEgressWithProcess, stats.managedEgress)).toBeGreaterThan(0.99);
  });
});

describe('working week', () => {
  it('is busier on weekday mornings than at night or at the weekend', () => {
    const count = (startMs: number) => [...createFlowGenerator({ ...BASE, flowsPerSecond: 2, ...hoursFrom(startMs, 1) })].length;
    const hour = 3_600_000;
    const weekdayMorning = count(TUESDAY_10AM);
    const weekdayNight = count(TUESDAY_MIDNIGHT + 3 * hour);
    const saturdayMorning = count(TUESDAY_10AM + 4 * 24 * hour);
    expect(weekdayMorning).toBeGreaterThan(2.5 * weekdayNight);
    expect(weekdayMorning).toBeGreaterThan(2 * saturdayMorning);
  });

  it('spends flowsPerSecond as the weekly mean when the rhythm is switched off', () => {
    const flows = [...createFlowGenerator({ ...BASE, flowsPerSecond: 20, diurnal: false, ...hoursFrom(TUESDAY_MIDNIGHT, 0.5) })].length;
    // 36,000 load-driven flows, plus the scheduled heartbeats and NTP polls.
    expect(flows).toBeGreaterThan(36_000 * 0.97);
    expect(flows).toBeLessThan(36_000 * 1.2);
  });
});

describe('benign traffic stays below detection strength', () => {
  const T = DETECTION_THRESHOLDS;

  it('over half a day, night backup included', () => {
    const options = { ...BASE, ...hoursFrom(TUESDAY_MIDNIGHT, 12) };
    expect(detect(createFlowGenerator(options))).toEqual([]);
    const m = margins(createFlowGenerator(options));
    expect(m.minGapCvToRareOrg).toBeGreaterThan(2 * T.beacon.maxGapCv);
    expect(m.maxUploadToRareOrgBytes).toBeLessThan(T.exfil.minUploadBytes / 100);
    expect(m.maxDistinctInternalTargetsPerWindow).toBeLessThan(T.scan.minDistinctTargets / 2);
    expect(m.maxShortLoginSessionsPerWindow).toBeLessThan(T.bruteforce.minAttempts / 5);
    expect(m.maxUniqueDnsNamesPerDomainPerWindow).toBeLessThan(T.dnsTunnel.minUniqueNames / 2);
    expect(m.maxMeanDnsLabelLength).toBeLessThan(T.dnsTunnel.minMeanLabelLength);
  });

  it('at ten times the default per-host density', () => {
    const options = { ...BASE, flowsPerSecond: 200, network: { workstations: 20 }, ...hoursFrom(TUESDAY_10AM, 1 / 6) };
    expect(detect(createFlowGenerator(options))).toEqual([]);
    const m = margins(createFlowGenerator(options));
    expect(m.maxShortLoginSessionsPerWindow).toBeLessThan(T.bruteforce.minAttempts / 3);
    expect(m.maxDistinctInternalTargetsPerWindow).toBeLessThan(T.scan.minDistinctTargets / 2);
  });
});
