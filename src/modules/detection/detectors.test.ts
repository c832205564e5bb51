import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { seedTenant } from '../../../test/kit/seed.js';
import { type FlowSpec, cadence, insertFlows, label, scattered } from './detection.fixtures.js';
import { BEACON_THRESHOLDS, BRUTEFORCE_THRESHOLDS, DNS_TUNNEL_THRESHOLDS, EXFIL_THRESHOLDS, SCAN_THRESHOLDS } from './detectors/index.js';
import { sweptNetwork } from './detectors/scan.js';
import { MiB } from './episode.js';

/**
 * Each detector on crafted flows that must and must not trigger it, one tenant per case (so the
 * cases run over one engine without seeing each other), all inserted first and detected in turn.
 */
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const HOUR = 3_600_000;
const T0 = NOW - 2 * HOUR;
const WINDOW = { fromMs: NOW - 3 * HOUR, toMs: NOW };

const WS = '10.20.1.50';
const EVIL = '45.148.10.83';

/** Background that makes an organization popular: three other hosts reach it. */
const popular = (org: string, dst: string): FlowSpec[] =>
  ['10.20.1.61', '10.20.1.62', '10.20.1.63'].map((src, i) => ({ at: T0 + i * 1000, src, dst, port: 443, org }));

const beacon = (opts: { n?: number; every?: number; jitter?: number; process?: string; org?: string } = {}): FlowSpec[] =>
  cadence(T0, opts.n ?? 40, opts.every ?? 60_000, opts.jitter ?? 0.02).map((at) => ({
    at,
    src: WS,
    dst: EVIL,
    port: 443,
    org: opts.org ?? 'Stark Industries Solutions Ltd',
    up: 520,
    down: 380,
    process: opts.process ?? 'rundll32.exe',
    srcFqdn: 'ws-0050.corp.example.com',
  }));

/** The lab's beacon (docs/lab.md): 13 check-ins 11 s apart, each moved up to ±10% of a beat. */
const labBeacon = () => beacon({ n: 13, every: 11_000, jitter: 0.1 });

const upload = (total: number, down: number, org = 'Contabo GmbH'): FlowSpec[] =>
  Array.from({ length: 8 }, (_, i) => ({
    at: T0 + i * 30_000,
    src: WS,
    dst: '161.97.1.2',
    port: 443,
    org,
    up: total / 8,
    down: down / 8,
    secs: 120,
    process: 'rclone.exe',
  }));

/** `targets` distinct internal (address, port) pairs in two minutes, `answered` of them answered. */
const sweep = (targets: number, answered = 0): FlowSpec[] =>
  Array.from({ length: targets }, (_, i) => ({
    at: T0 + i * (120_000 / targets),
    src: WS,
    dst: `10.10.0.${1 + (i % 200)}`,
    port: [22, 80, 443, 445, 3389][Math.floor(i / 200) % 5] + Math.floor(i / 1000),
    up: 60,
    down: 40,
    secs: 0.001,
    answered: i < answered,
    flags: i < answered ? ['SYN', 'ACK', 'FIN'] : ['SYN'],
    process: 'nmap.exe',
  }));

const logins = (n: number, opts: { port?: number; secs?: number; src?: string; threat?: boolean } = {}): FlowSpec[] =>
  scattered(T0, n, 9 * 60_000).map((at) => ({
    at,
    src: opts.src ?? '218.92.0.10',
    dst: '172.16.10.5',
    port: opts.port ?? 22,
    up: 2100,
    down: 2900,
    secs: opts.secs ?? 2,
    threat: opts.threat,
    dstFqdn: 'bastion01.corp.example.com',
  }));

const questions = (
  n: number,
  opts: { names?: number; labelLength?: number; src?: string; dst?: string; domain?: string; unclean?: boolean } = {},
): FlowSpec[] =>
  scattered(T0, n, 9 * 60_000).map((at, i) => ({
    at,
    src: opts.src ?? WS,
    dst: opts.dst ?? '10.10.0.10',
    port: 53,
    proto: 'UDP' as const,
    up: 120,
    down: 200,
    secs: 0.02,
    // unclean: bytes no hostname holds, escaped as the meter writes them (iodine's Base128 labels).
    rrname: `${label(opts.labelLength ?? 50, i % (opts.names ?? n))}${opts.unclean ? `\\${200 + (i % 50)}\\189.x\\250` : ''}.${opts.domain ?? 'cdn-metrics-sync.com'}`,
    process: 'powershell.exe',
  }));

interface Case {
  name: string;
  flows: FlowSpec[];
  /** The same traffic as a second sensor of the tenant reported it (another node). */
  secondSensor?: FlowSpec[];
  /** The investigations expected: detector, source, destination (none for a must-not case). */
  expect: { detector: string; source: string; destination: string; disposition?: string }[];
}

const CASES: Case[] = [
  // Beaconing: regular cadence to one rare external organization.
  {
    name: 'beacon: 40 sessions a minute apart (±2%) to a rare org',
    flows: beacon(),
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }],
  },
  {
    name: 'beacon: the same cadence from a known agent is benign',
    flows: beacon({ process: 'chronyd' }),
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'benign' }],
  },
  {
    name: 'beacon: check-ins lost to the sensor (three of 40) still make the cadence',
    flows: beacon().filter((_, i) => ![5, 17, 29].includes(i)),
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }],
  },
  {
    // The lab's cadence (13 check-ins, 11 s, jittered) with a second flow 300 ms into one check-in.
    name: 'beacon: a check-in split in two flows still makes the cadence',
    flows: [...labBeacon(), { ...labBeacon()[6]!, at: labBeacon()[6]!.at + 300 }],
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }],
  },
  {
    name: 'beacon: a check-in delayed by four beats still makes the cadence',
    flows: labBeacon().map((f, i) => (i >= 7 ? { ...f, at: f.at + 44_000 } : f)),
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }],
  },
  {
    name: 'beacon: not with irregular gaps at the lab scale, the oddest set aside',
    flows: scattered(T0, 13, 13 * 11_000).map((at) => ({ ...beacon()[0], at })),
    expect: [],
  },
  { name: 'beacon: not when a gap in four is a multiple of the beat', flows: beacon().filter((_, i) => i % 4 !== 2), expect: [] },
  { name: 'beacon: not below the minimum sessions', flows: beacon({ n: BEACON_THRESHOLDS.minSessions - 1 }), expect: [] },
  { name: 'beacon: not with irregular gaps', flows: scattered(T0, 40, 40 * 60_000).map((at) => ({ ...beacon()[0], at })), expect: [] },
  { name: 'beacon: not to an org many hosts reach', flows: [...beacon({ org: 'Google LLC' }), ...popular('Google LLC', '142.250.1.1')], expect: [] },
  { name: 'beacon: not with gaps under ten seconds', flows: beacon({ every: 5_000 }), expect: [] },
  {
    // Counted twice, each check-in would leave a gap of ~0 and the cadence would be lost.
    name: 'beacon: two sensors of one link (a capture and an export) make one cadence',
    flows: beacon(),
    secondSensor: beacon().map((f) => ({ ...f, at: f.at + 3, process: undefined })),
    expect: [{ detector: 'beacon', source: WS, destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }],
  },

  // Bulk exfiltration: volume to a new or rare destination.
  {
    name: 'exfil: 250 MiB up to a new org',
    flows: upload(250 * MiB, 2 * MiB),
    expect: [{ detector: 'exfil', source: WS, destination: 'Contabo GmbH', disposition: 'malicious' }],
  },
  {
    // A sensor that saw part of the conversation (a flooded bridge port sees the replies only) is
    // not the one counted, whatever its node id.
    name: 'exfil: two sensors, the one that saw more packets counts',
    flows: upload(250 * MiB, 2 * MiB).map((f) => ({ ...f, process: undefined, packets: 5_000 })),
    secondSensor: upload(250 * MiB, 2 * MiB).map((f) => ({ ...f, up: 600, process: undefined, packets: 400 })),
    expect: [{ detector: 'exfil', source: WS, destination: 'Contabo GmbH' }],
  },
  { name: 'exfil: not below the volume threshold', flows: upload(EXFIL_THRESHOLDS.minUploadBytes * 0.75, MiB), expect: [] },
  { name: 'exfil: not when as much comes back (ratio < 10)', flows: upload(250 * MiB, 50 * MiB), expect: [] },
  {
    name: 'exfil: not to an org many hosts reach',
    flows: [...upload(250 * MiB, MiB, 'Amazon.com, Inc.'), ...popular('Amazon.com, Inc.', '52.1.1.1')],
    expect: [],
  },

  // Internal scanning.
  { name: 'scan: 60 failed internal targets in two minutes', flows: sweep(60), expect: [{ detector: 'scan', source: WS, destination: '10.10.0.0/24' }] },
  { name: 'scan: not below the distinct-target threshold', flows: sweep(SCAN_THRESHOLDS.minDistinctTargets - 10), expect: [] },
  { name: 'scan: not when most targets answered', flows: sweep(60, 30), expect: [] },

  // Brute force against a service.
  {
    name: 'bruteforce: 150 short SSH sessions in nine minutes',
    flows: logins(150, { threat: true }),
    expect: [{ detector: 'bruteforce', source: '218.92.0.10', destination: '172.16.10.5', disposition: 'malicious' }],
  },
  {
    name: 'bruteforce: internal RDP guessing',
    flows: logins(150, { port: 3389, src: WS }),
    expect: [{ detector: 'bruteforce', source: WS, destination: '172.16.10.5', disposition: 'malicious' }],
  },
  { name: 'bruteforce: not below the attempt threshold', flows: logins(BRUTEFORCE_THRESHOLDS.minAttempts - 20), expect: [] },
  { name: 'bruteforce: not when the sessions are long', flows: logins(150, { secs: 60 }), expect: [] },
  { name: 'bruteforce: not on a web port', flows: logins(150, { port: 443 }), expect: [] },
  { name: 'bruteforce: two sensors of one link do not double the attempts', flows: logins(60), secondSensor: logins(60), expect: [] },

  // DNS tunnelling.
  {
    name: 'dns-tunnel: 300 unique 50-character names',
    flows: questions(300),
    expect: [{ detector: 'dns-tunnel', source: WS, destination: 'cdn-metrics-sync.com', disposition: 'malicious' }],
  },
  {
    name: 'dns-tunnel: the forwarding resolver is a path, not a second source',
    flows: [...questions(300), ...questions(300, { src: '10.10.0.10', dst: '209.141.54.1' })],
    expect: [{ detector: 'dns-tunnel', source: WS, destination: 'cdn-metrics-sync.com' }],
  },
  {
    name: 'dns-tunnel: names holding bytes no hostname can (iodine Base128, escaped by the meter)',
    flows: questions(300, { unclean: true }),
    expect: [{ detector: 'dns-tunnel', source: WS, destination: 'cdn-metrics-sync.com', disposition: 'malicious' }],
  },
  { name: 'dns-tunnel: not when names repeat', flows: questions(300, { names: 20 }), expect: [] },
  { name: 'dns-tunnel: not with short labels', flows: questions(300, { labelLength: 12 }), expect: [] },
  { name: 'dns-tunnel: not below the question threshold', flows: questions(DNS_TUNNEL_THRESHOLDS.minQueries - 20), expect: [] },
];

describe('detectors on crafted flows', () => {
  let t: TestApp;
  const tenantOf = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
    for (const c of CASES) {
      const tenant = await seedTenant(t.app);
      tenantOf.set(c.name, tenant.id);
      await insertFlows(t.app.flows, tenant.id, c.flows);
      if (c.secondSensor) await insertFlows(t.app.flows, tenant.id, c.secondSensor, 'node_second_sensor');
    }
  }, 120_000);
  afterAll(() => t.stop());

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const customerId = tenantOf.get(c.name)!;
    const outcome = await t.app.services.detection.detectTenant(customerId, WINDOW, NOW);
    const opened = outcome.opened.map((o) => ({ detector: o.detector, source: o.source, destination: o.destination, disposition: o.disposition }));
    expect(opened).toHaveLength(c.expect.length);
    for (const e of c.expect) expect(opened).toContainEqual(expect.objectContaining(e));
    expect(outcome.failed).toEqual([]);
    if (c.expect.length) {
      const rows = await t.app.db.prisma.investigation.findMany({ where: { customerId } });
      expect(rows.every((r) => r.status === 'completed' && r.analysis !== null)).toBe(true);
    }
  });

  it('names the swept network', () => {
    expect(sweptNetwork(Array.from({ length: 50 }, (_, i) => `10.10.0.${i + 1}`))).toBe('10.10.0.0/24');
    expect(sweptNetwork(['10.10.0.1', '10.10.1.1', '10.10.2.1', '10.10.3.1'])).toBe('10.10.0.0/22');
    expect(sweptNetwork(['192.168.50.20', '192.168.51.20'])).toBe('192.168.50.0/23');
  });
});
