import { describe, expect, it } from 'vitest';
import { BASE, hoursFrom, TUESDAY_10AM } from './fixtures.js';
import { createFlowGenerator, groundTruth, SCENARIO_KINDS, type FlowGeneratorOptions, type FlowRecord, type Incident } from './index.js';
import { detect, registeredDomain } from './reference-detectors.js';

const OPTIONS: FlowGeneratorOptions = {
  ...BASE,
  flowsPerSecond: 5,
  ...hoursFrom(TUESDAY_10AM, 3),
  scenarios: [...SCENARIO_KINDS, { kind: 'bruteforce', service: 'rdp' }, { kind: 'bruteforce', service: 'smb' }],
};

function planted(options: FlowGeneratorOptions): { incidents: Incident[]; byIncident: Map<string, FlowRecord[]>; keys: Set<string> } {
  const gen = createFlowGenerator(options);
  const incidents = gen.groundTruth();
  const owner = new Map<string, string>();
  for (const incident of incidents) for (const key of incident.flowKeys) owner.set(key, incident.id);
  const byIncident = new Map<string, FlowRecord[]>(incidents.map((i) => [i.id, []]));
  const keys = new Set<string>();
  for (const record of gen) {
    keys.add(record.key);
    const id = owner.get(record.key);
    if (id !== undefined) byIncident.get(id)!.push(record);
  }
  return { incidents, byIncident, keys };
}

function benignOrgs(options: FlowGeneratorOptions): Set<string> {
  const orgs = new Set<string>();
  for (const r of createFlowGenerator({ ...options, scenarios: [] })) {
    if (r.dst.ctx.organization) orgs.add(r.dst.ctx.organization);
    if (r.src.ctx.organization) orgs.add(r.src.ctx.organization);
  }
  return orgs;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('planted scenarios', () => {
  const { incidents, byIncident, keys } = planted(OPTIONS);
  const findings = detect(createFlowGenerator(OPTIONS));
  const flowsOf = (id: string) => byIncident.get(id)!;
  const incident = (id: string) => incidents.find((i) => i.id === id)!;

  it('describes every requested incident', () => {
    expect(incidents.map((i) => i.id)).toEqual(['beacon-1', 'exfil-1', 'scan-1', 'bruteforce-1', 'dns-tunnel-1', 'bruteforce-2', 'bruteforce-3']);
    for (const i of incidents) {
      expect(i.flowCount, i.id).toBe(i.flowKeys.length);
      expect(i.flowCount, i.id).toBeGreaterThan(0);
      expect(i.window.startMs).toBeGreaterThanOrEqual(OPTIONS.startMs);
      expect(i.window.endMs).toBeLessThan(OPTIONS.endMs!);
    }
    // Each incident gets its own internal source host.
    const internalSources = incidents.filter((i) => !i.source.external).map((i) => i.source.ip);
    expect(new Set(internalSources).size).toBe(internalSources.length);
  });

  it('generates every ground-truth flow, inside its window', () => {
    for (const i of incidents) {
      for (const key of i.flowKeys) expect(keys.has(key), `${i.id} ${key}`).toBe(true);
      const flows = flowsOf(i.id);
      expect(flows.length, i.id).toBe(i.flowCount);
      for (const f of flows) {
        expect(f['@timestamp']).toBeGreaterThanOrEqual(i.window.startMs);
        expect(f['@timestamp']).toBeLessThanOrEqual(i.window.endMs);
      }
    }
  });

  it('every incident trips its reference detector', () => {
    for (const i of incidents) {
      const match = findings.find((f) => {
        if (f.kind !== i.kind || f.sourceIp !== i.source.ip) return false;
        if (i.kind === 'beacon' || i.kind === 'exfil') return f.target === i.destination.org;
        if (i.kind === 'bruteforce') return f.target === `${i.destination.ip}:${i.destination.port}`;
        if (i.kind === 'dns-tunnel') return f.target === i.params.domain;
        return true;
      });
      expect(match, i.id).toBeDefined();
    }
  });

  it('sends beacon, exfil and tunnel traffic to organizations the benign mix never reaches', () => {
    const orgs = benignOrgs(OPTIONS);
    for (const id of ['beacon-1', 'exfil-1', 'dns-tunnel-1']) expect(orgs.has(incident(id).destination.org!), id).toBe(false);
    expect(orgs.has(incident('bruteforce-1').source.org!)).toBe(false);
  });

  it('beacon: one host, one destination, a steady period and small payloads', () => {
    const i = incident('beacon-1');
    const flows = flowsOf(i.id);
    const interval = i.params.interval_ms as number;
    expect(interval).toBeGreaterThanOrEqual(30_000);
    expect(interval).toBeLessThanOrEqual(60_000);
    for (const f of flows) {
      expect(f.src.ip).toBe(i.source.ip);
      expect(f.dst.ip).toBe(i.destination.ip);
      expect(f.dst.port).toBe(443);
      expect(f.src.process?.name).toBe(i.source.process);
    }
    const gaps = flows.slice(1).map((f, n) => f['@timestamp'] - flows[n]['@timestamp']);
    for (const gap of gaps) expect(Math.abs(gap - interval)).toBeLessThanOrEqual(interval * 0.05 + 1);
    const small = flows.filter((f) => f.stats.volume.bytes.total < 5000).length;
    expect(small / flows.length).toBeGreaterThan(0.9);
    const annotated = flows.filter((f) => f.beacon !== undefined);
    expect(annotated.length).toBe(flows.length - 9);
    expect(annotated.every((f) => f.beacon!.interval.value_ms === interval)).toBe(true);
  });

  it('exfil: hundreds of MB up in a burst, encrypted, upload ≫ download', () => {
    const i = incident('exfil-1');
    const flows = flowsOf(i.id);
    const up = sum(flows.map((f) => f.stats.volume.bytes.src.sum));
    const down = sum(flows.map((f) => f.stats.volume.bytes.dst.sum));
    expect(up).toBeGreaterThanOrEqual(i.params.total_bytes as number);
    expect(i.params.total_bytes).toBeGreaterThan(500 * 1024 * 1024);
    expect(up / down).toBeGreaterThan(50);
    expect(i.window.endMs - i.window.startMs).toBeLessThan(30 * 60_000);
    const entropy = flows.map((f) => f.stats.size.payload_entropy);
    expect(sum(entropy.map((m) => m.sum)) / sum(entropy.map((m) => m.count))).toBeGreaterThan(7.8);
    expect(flows.every((f) => f.tls?.version === 'TLS 1.3' && f.src.process?.name === i.source.process)).toBe(true);
  });

  it('scan: one host probes every address and port, almost always in vain', () => {
    const i = incident('scan-1');
    const flows = flowsOf(i.id);
    expect(flows.length).toBe(i.destination.hosts! * i.destination.ports!.length);
    expect(new Set(flows.map((f) => `${f.dst.ip}:${f.dst.port}`)).size).toBe(flows.length);
    const failed = flows.filter((f) => f.stats.volume.packets.dst === 0 || f.tcp!.flags.includes('RST'));
    expect(failed.length / flows.length).toBeGreaterThan(0.95);
    expect(flows.every((f) => f.stats.volume.bytes.total < 200)).toBe(true);
    expect(flows.some((f) => f.suricata?.flow.alerted)).toBe(true);
  });

  it('bruteforce: hundreds of short logins against one service, from outside or inside', () => {
    const expected = { 'bruteforce-1': [22, true], 'bruteforce-2': [3389, false], 'bruteforce-3': [445, false] } as const;
    for (const [id, [port, external]] of Object.entries(expected)) {
      const i = incident(id);
      const flows = flowsOf(id);
      expect(i.source.external).toBe(external);
      expect(flows.length).toBe(i.params.attempts);
      expect(flows.length).toBeGreaterThanOrEqual(300);
      for (const f of flows) {
        expect(f.src.ip).toBe(i.source.ip);
        expect(`${f.dst.ip}:${f.dst.port}`).toBe(`${i.destination.ip}:${port}`);
        expect(f.stats.timing.duration_secs.sum).toBeLessThan(5);
        expect(f.stats.volume.bytes.total).toBeLessThan(20 * 1024);
      }
      if (external) expect(flows.every((f) => f.threat?.indicator === i.source.ip)).toBe(true);
    }
  });

  it('dns-tunnel: many long, random names under one rare domain, through the resolver', () => {
    const i = incident('dns-tunnel-1');
    const flows = flowsOf(i.id);
    const queries = i.params.queries as number;
    expect(flows.length).toBe(2 * queries);
    const fromHost = flows.filter((f) => f.src.ip === i.source.ip);
    const forwarded = flows.filter((f) => f.src.ip === i.params.resolver_ip);
    expect(fromHost.length).toBe(queries);
    expect(forwarded.length).toBe(queries);
    expect(forwarded.every((f) => f.dst.ip === i.destination.ip && f.dst.port === 53)).toBe(true);
    const names = fromHost.map((f) => f.dns!.rrname);
    expect(new Set(names).size).toBe(queries);
    expect(names.every((n) => registeredDomain(n) === i.params.domain)).toBe(true);
    expect(Math.min(...names.map((n) => n.length))).toBeGreaterThan(60);
  });
});

describe('scenario options', () => {
  it('honours explicit timing, source and parameters', () => {
    const startMs = TUESDAY_10AM + 10 * 60_000;
    const options: FlowGeneratorOptions = {
      ...BASE,
      scenarios: [
        { kind: 'beacon', startMs, durationMs: 20 * 60_000, intervalSecs: 45, jitter: 0, sourceIp: '10.20.1.15' },
        { kind: 'exfil', totalBytes: 300 * 1024 * 1024 },
        { kind: 'scan', targets: 16, ports: [22, 445] },
        { kind: 'bruteforce', attempts: 120, service: 'ssh', external: false },
        { kind: 'dns-tunnel', queries: 500, domain: 'tunnel.example' },
      ],
    };
    const [beacon, exfil, scan, brute, tunnel] = groundTruth(options);
    expect(beacon.source.ip).toBe('10.20.1.15');
    expect(beacon.window.startMs).toBe(startMs);
    expect(beacon.flowCount).toBe(27); // 20 min / 45 s, first check-in at the start
    expect(exfil.params.total_bytes).toBe(300 * 1024 * 1024);
    expect(scan.flowCount).toBe(32);
    expect(brute.source.external).toBe(false);
    expect(brute.flowCount).toBe(120);
    expect(tunnel.params.domain).toBe('tunnel.example');
    expect(tunnel.flowCount).toBe(1000);
    const gen = createFlowGenerator(options);
    const beaconKeys = new Set(beacon.flowKeys);
    const times = [...gen].filter((r) => beaconKeys.has(r.key)).map((r) => r['@timestamp']);
    expect(
      times
        .slice(1)
        .map((t, n) => t - times[n])
        .every((gap) => gap === 45_000),
    ).toBe(true);
  });

  it('numbers repeated kinds and keeps their hosts apart', () => {
    const incidents = groundTruth({ ...BASE, scenarios: ['beacon', 'beacon', 'beacon'] });
    expect(incidents.map((i) => i.id)).toEqual(['beacon-1', 'beacon-2', 'beacon-3']);
    expect(new Set(incidents.map((i) => i.source.ip)).size).toBe(3);
    expect(new Set(incidents.map((i) => i.destination.ip)).size).toBe(3);
  });

  it('clips incidents to the run', () => {
    const [beacon] = groundTruth({ ...BASE, scenarios: [{ kind: 'beacon', startMs: BASE.endMs! - 5 * 60_000, durationMs: 60 * 60_000 }] });
    expect(beacon.window.endMs).toBeLessThan(BASE.endMs!);
    expect(beacon.flowCount).toBeLessThanOrEqual(10);
  });

  it('rejects parameters that would make a scenario empty or endless', () => {
    expect(() => groundTruth({ ...BASE, scenarios: [{ kind: 'beacon', intervalSecs: 0 }] })).toThrow(/intervalSecs/);
    expect(() => groundTruth({ ...BASE, scenarios: [{ kind: 'scan', ports: [70000] }] })).toThrow(/ports/);
    expect(() => groundTruth({ ...BASE, scenarios: ['phishing' as never] })).toThrow(/unknown scenario/);
  });

  it('rejects a source that is not a generated host', () => {
    expect(() => groundTruth({ ...BASE, scenarios: [{ kind: 'scan', sourceIp: '10.99.0.1' }] })).toThrow(/not a generated internal host/);
  });
});
