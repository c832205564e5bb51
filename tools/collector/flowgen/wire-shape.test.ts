import { describe, expect, it } from 'vitest';
import { BASE, hoursFrom, TUESDAY_10AM } from './fixtures.js';
import { createFlowGenerator, SCENARIO_KINDS, type FlowRecord } from './index.js';
import { checkFlowRecord } from './wire-check.js';

describe('wire.md §5.4 shape', () => {
  const options = {
    ...BASE,
    ...hoursFrom(TUESDAY_10AM, 1),
    scenarios: [...SCENARIO_KINDS, { kind: 'bruteforce' as const, service: 'rdp' as const }, { kind: 'bruteforce' as const, service: 'smb' as const }],
  };
  const records: FlowRecord[] = [...createFlowGenerator(options)];

  it('generates a run with every kind of flow', () => {
    expect(records.length).toBeGreaterThan(30_000);
    const apps = new Set(records.map((r) => r.app_name));
    for (const app of ['HTTPS', 'QUIC', 'DNS', 'NTP', 'SSH', 'SMTP', 'SMB', 'LDAP', 'KERBEROS', 'RDP', 'HTTP', 'UNKNOWN']) {
      expect(apps, app).toContain(app);
    }
    for (const block of ['suricata', 'threat', 'beacon', 'tls', 'dns'] as const) {
      expect(
        records.some((r) => r[block] !== undefined),
        block,
      ).toBe(true);
    }
  });

  it('every record validates against the hand-written checker', () => {
    const failures: string[] = [];
    for (const record of records) {
      const problems = checkFlowRecord(record, { startMs: options.startMs, endMs: options.endMs, customerId: options.customerId });
      if (problems.length > 0) failures.push(`${record.key}: ${problems.join('; ')}`);
      if (failures.length >= 5) break;
    }
    expect(failures).toEqual([]);
  });

  it('the checker rejects what the SDK rejects', () => {
    const bounds = { startMs: options.startMs, endMs: options.endMs };
    const broken = (mutate: (r: Record<string, any>) => void) => {
      const copy = structuredClone(records[0]) as Record<string, any>;
      mutate(copy);
      return checkFlowRecord(copy, bounds);
    };
    expect(broken(() => {})).toEqual([]);
    expect(broken((r) => (r['@timestamp'] = new Date(r['@timestamp']).toISOString()))).not.toEqual([]);
    expect(broken((r) => (r.path = r.path[0]))).not.toEqual([]);
    expect(broken((r) => (r.dst.geo.asn = 'AS8075'))).not.toEqual([]);
    expect(broken((r) => (r.src.ip = 167772161))).not.toEqual([]);
    expect(broken((r) => (r.stats.volume.bytes.src = r.stats.volume.bytes.src.sum))).not.toEqual([]);
    expect(broken((r) => (r.stats.volume.bytes.total = String(r.stats.volume.bytes.total)))).not.toEqual([]);
    expect(broken((r) => (r.meta['@ingest_time'] += 0.5))).not.toEqual([]);
    expect(broken((r) => (r.stats.connection_count = null))).not.toEqual([]);
    expect(broken((r) => (r.src.ip = '10.0.0.300'))).not.toEqual([]);
    // What a packet meter sends: IPv6 ends, and geo left to the server's datasets.
    expect(broken((r) => (r.dst.ip = '2001:db8::1'))).toEqual([]);
    expect(broken((r) => ((r.src.geo = {}), (r.dst.geo = {})))).toEqual([]);
    expect(broken((r) => (r.dst.geo = { city_name: 'Paris' }))).not.toEqual([]);
    // The host context a collector on the host adds (tools/collector/host/), and its types.
    const curl = { name: 'curl', pid: 4242, ppid: 1, executable: '/usr/bin/curl', user: { id: 1000, name: 'alice' } };
    expect(broken((r) => (r.src.process = curl))).toEqual([]);
    expect(broken((r) => (r.src.process = { ...curl, user: { id: 0 } }))).toEqual([]);
    expect(broken((r) => (r.src.process = { ...curl, user: 'alice' }))).not.toEqual([]);
    expect(broken((r) => (r.src.process = { ...curl, user: { id: '1000' } }))).not.toEqual([]);
    expect(broken((r) => (r.dst.process = { ...curl, ppid: 1.5 }))).not.toEqual([]);
    expect(broken((r) => (r.dst.process = { ...curl, executable: 7 }))).not.toEqual([]);
  });

  it('timestamps are integers in range and never go backwards', () => {
    let previous = -Infinity;
    let backwards = 0;
    for (const record of records) {
      const ts = record['@timestamp'];
      if (!Number.isInteger(ts) || ts < options.startMs || ts >= options.endMs) throw new Error(`bad @timestamp ${ts}`);
      if (ts < previous) backwards++;
      previous = ts;
    }
    expect(backwards).toBe(0);
  });

  it('keeps the types the SDK is strict about', () => {
    const sample = records[records.length >> 1];
    expect(Array.isArray(sample.path)).toBe(true);
    expect(typeof sample.src.ip).toBe('string');
    expect(Object.keys(sample.stats.volume.bytes.src).sort()).toEqual(['count', 'sum', 'sum_cubes', 'sum_squares']);
    expect(typeof sample.stats.volume.bytes.total).toBe('number');
    const publicSide = records.find((r) => r.dst.address_type === 'public')!;
    expect(Number.isInteger(publicSide.dst.geo.asn)).toBe(true);
    expect(Number.isInteger(publicSide.meta['@ingest_time'])).toBe(true);
  });

  it('alerted flows carry a Community ID v1', () => {
    const alerted = records.filter((r) => r.suricata !== undefined);
    expect(alerted.length).toBeGreaterThan(0);
    for (const r of alerted) {
      expect(r.suricata!.flow.community_id).toMatch(/^1:[A-Za-z0-9+/]{27}=$/);
      expect(r.meta.flow_types).toContain('suricata');
    }
  });

  it('records share no mutable objects', () => {
    const [a, b] = records.filter((r) => r.threat !== undefined);
    a.threat!.tags.push('mutated');
    a.path[0].sensor.name = 'mutated';
    expect(b.threat!.tags).not.toContain('mutated');
    expect(b.path[0].sensor.name).not.toBe('mutated');
  });
});
