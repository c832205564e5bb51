// The yardstick the generator is tuned against: simple, explicit detectors
// for the five planted patterns. Tests assert that every planted incident
// trips its detector and that benign traffic trips none. They are not the
// product's detections; they pin down "detection-triggering strength" so that
// docs/flowgen.md can state the margins benign traffic keeps.

import type { FlowRecord } from './types.js';

const MiB = 1024 * 1024;

export const DETECTION_THRESHOLDS = {
  beacon: {
    /** Per (internal source, external org): at least this many sessions... */
    minSessions: 12,
    /** ...whose gaps have a coefficient of variation at most this... */
    maxGapCv: 0.25,
    /** ...with a median gap in this range (seconds)... */
    medianGapSecs: [10, 3600] as [number, number],
    /** ...to an org that at most this many internal hosts reach. */
    maxOrgSources: 2,
  },
  exfil: {
    /** Per (internal source, external org) over the run. */
    minUploadBytes: 200 * MiB,
    minUploadToDownload: 10,
    maxOrgSources: 2,
  },
  scan: {
    /** Per internal source and tumbling window. */
    windowSecs: 300,
    /** Distinct internal (address, port) pairs contacted. */
    minDistinctTargets: 50,
    /** Share of those flows that failed (no answer, RST, or reset by the prober). */
    minFailedShare: 0.8,
  },
  bruteforce: {
    /** Per (source, internal address, port) and tumbling window. */
    windowSecs: 600,
    ports: [22, 3389, 445],
    minAttempts: 100,
    /** An attempt is a short, small session. */
    maxAttemptSecs: 10,
    maxAttemptBytes: 20 * 1024,
  },
  dnsTunnel: {
    /** Per (source, registered domain) and tumbling window. */
    windowSecs: 600,
    minQueries: 200,
    minUniqueNames: 100,
    /** Mean length of the labels left of the registered domain. */
    minMeanLabelLength: 30,
  },
} as const;

export interface Finding {
  kind: 'beacon' | 'exfil' | 'scan' | 'bruteforce' | 'dns-tunnel';
  sourceIp: string;
  /** Org for beacon/exfil, ip:port for bruteforce, domain for dns-tunnel; absent for scan. */
  target?: string;
  evidence: Record<string, number>;
}

function orgOf(flow: FlowRecord): string | undefined {
  return flow.dst.address_type === 'public' ? (flow.dst.ctx.organization ?? flow.dst.geo.org) : undefined;
}

function failed(flow: FlowRecord): boolean {
  const flags = flow.tcp?.flags ?? [];
  return flow.stats.volume.packets.dst === 0 || flags.includes('RST');
}

export function registeredDomain(name: string): string {
  const labels = name.split('.');
  return labels.slice(-2).join('.');
}

interface Aggregates {
  orgSources: Map<string, Set<string>>;
  /** (source|org) → session start times, and bytes up/down. */
  sessions: Map<string, number[]>;
  volumes: Map<string, { up: number; down: number }>;
  /** (source|window) → internal TCP targets and failures. */
  scans: Map<string, { targets: Set<string>; flows: number; failed: number }>;
  /** (source|ip:port|window) → short, small sessions to a login port, and all sessions. */
  attempts: Map<string, { short: number; all: number }>;
  /** (source|domain|window) → DNS questions. */
  dns: Map<string, { queries: number; names: Set<string>; labelChars: number; labels: number }>;
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

function aggregate(flows: Iterable<FlowRecord>): Aggregates {
  const T = DETECTION_THRESHOLDS;
  const a: Aggregates = { orgSources: new Map(), sessions: new Map(), volumes: new Map(), scans: new Map(), attempts: new Map(), dns: new Map() };
  for (const flow of flows) {
    const src = flow.src.ip;
    const ts = flow['@timestamp'];
    const org = orgOf(flow);
    if (org !== undefined && flow.src.address_type === 'private') {
      entry(a.orgSources, org, () => new Set()).add(src);
      const pair = `${src}|${org}`;
      entry(a.sessions, pair, () => []).push(ts);
      const volume = entry(a.volumes, pair, () => ({ up: 0, down: 0 }));
      volume.up += flow.stats.volume.bytes.src.sum;
      volume.down += flow.stats.volume.bytes.dst.sum;
    }
    if (flow.dst.address_type === 'private' && flow.transport.proto === 'TCP') {
      const scan = entry(a.scans, `${src}|${Math.floor(ts / (T.scan.windowSecs * 1000))}`, () => ({ targets: new Set<string>(), flows: 0, failed: 0 }));
      scan.targets.add(`${flow.dst.ip}:${flow.dst.port}`);
      scan.flows++;
      if (failed(flow)) scan.failed++;
      const port = flow.dst.port ?? 0;
      if ((T.bruteforce.ports as readonly number[]).includes(port)) {
        const key = `${src}|${flow.dst.ip}:${port}|${Math.floor(ts / (T.bruteforce.windowSecs * 1000))}`;
        const counts = entry(a.attempts, key, () => ({ short: 0, all: 0 }));
        counts.all++;
        const short = flow.stats.timing.duration_secs.sum <= T.bruteforce.maxAttemptSecs;
        const small = flow.stats.volume.bytes.total <= T.bruteforce.maxAttemptBytes;
        if (short && small) counts.short++;
      }
    }
    if (flow.dns !== undefined && flow.src.address_type === 'private') {
      const key = `${src}|${registeredDomain(flow.dns.rrname)}|${Math.floor(ts / (T.dnsTunnel.windowSecs * 1000))}`;
      const dns = entry(a.dns, key, () => ({ queries: 0, names: new Set<string>(), labelChars: 0, labels: 0 }));
      dns.queries++;
      dns.names.add(flow.dns.rrname);
      const sub = flow.dns.rrname.split('.').slice(0, -2);
      for (const label of sub) dns.labelChars += label.length;
      dns.labels += sub.length;
    }
  }
  return a;
}

function gapStats(times: number[]): { cv: number; median: number } {
  const sorted = [...times].sort((x, y) => x - y);
  const gaps = sorted.slice(1).map((t, i) => (t - sorted[i]) / 1000);
  const mean = gaps.reduce((x, y) => x + y, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((x, g) => x + (g - mean) ** 2, 0) / gaps.length);
  const median = [...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)];
  return { cv: mean > 0 ? sd / mean : Infinity, median };
}

/** Runs all five detectors over a run's flows (any order). */
export function detect(flows: Iterable<FlowRecord>): Finding[] {
  const T = DETECTION_THRESHOLDS;
  const a = aggregate(flows);
  const findings: Finding[] = [];
  for (const [pair, times] of a.sessions) {
    const [src, org] = pair.split('|');
    const sources = a.orgSources.get(org)!.size;
    if (sources > T.beacon.maxOrgSources || times.length < T.beacon.minSessions) continue;
    const { cv, median } = gapStats(times);
    const [lo, hi] = T.beacon.medianGapSecs;
    if (cv <= T.beacon.maxGapCv && median >= lo && median <= hi) {
      findings.push({ kind: 'beacon', sourceIp: src, target: org, evidence: { sessions: times.length, cv, medianGapSecs: median, orgSources: sources } });
    }
  }
  for (const [pair, volume] of a.volumes) {
    const [src, org] = pair.split('|');
    const sources = a.orgSources.get(org)!.size;
    const ratio = volume.up / Math.max(1, volume.down);
    if (sources <= T.exfil.maxOrgSources && volume.up >= T.exfil.minUploadBytes && ratio >= T.exfil.minUploadToDownload) {
      findings.push({ kind: 'exfil', sourceIp: src, target: org, evidence: { uploadBytes: volume.up, ratio, orgSources: sources } });
    }
  }
  for (const [key, scan] of a.scans) {
    const share = scan.failed / scan.flows;
    if (scan.targets.size >= T.scan.minDistinctTargets && share >= T.scan.minFailedShare) {
      findings.push({ kind: 'scan', sourceIp: key.split('|')[0], evidence: { distinctTargets: scan.targets.size, failedShare: share } });
    }
  }
  for (const [key, counts] of a.attempts) {
    if (counts.short >= T.bruteforce.minAttempts) {
      const [src, target] = key.split('|');
      findings.push({ kind: 'bruteforce', sourceIp: src, target, evidence: { attempts: counts.short } });
    }
  }
  for (const [key, dns] of a.dns) {
    const meanLabel = dns.labels > 0 ? dns.labelChars / dns.labels : 0;
    if (dns.queries >= T.dnsTunnel.minQueries && dns.names.size >= T.dnsTunnel.minUniqueNames && meanLabel >= T.dnsTunnel.minMeanLabelLength) {
      const [src, domain] = key.split('|');
      findings.push({
        kind: 'dns-tunnel',
        sourceIp: src,
        target: domain,
        evidence: { queries: dns.queries, uniqueNames: dns.names.size, meanLabelLength: meanLabel },
      });
    }
  }
  return findings;
}

export interface BenignMargins {
  /** Orgs reached by at most maxOrgSources internal hosts (where beacon/exfil could fire). */
  rareOrgs: number;
  /** Lowest gap CV among (source, rare org) pairs with at least minSessions sessions (Infinity: none). */
  minGapCvToRareOrg: number;
  maxUploadToRareOrgBytes: number;
  maxDistinctInternalTargetsPerWindow: number;
  maxShortLoginSessionsPerWindow: number;
  maxUniqueDnsNamesPerDomainPerWindow: number;
  maxMeanDnsLabelLength: number;
}

/**
 * How close a run comes to each threshold: every pattern's deciding measure,
 * maximised (or minimised) over the run with the other gates ignored.
 */
export function margins(flows: Iterable<FlowRecord>): BenignMargins {
  const T = DETECTION_THRESHOLDS;
  const a = aggregate(flows);
  const rare = new Set([...a.orgSources].filter(([, s]) => s.size <= T.beacon.maxOrgSources).map(([org]) => org));
  let minCv = Infinity;
  let maxUpload = 0;
  for (const [pair, times] of a.sessions) {
    const org = pair.split('|')[1];
    if (!rare.has(org)) continue;
    if (times.length >= T.beacon.minSessions) minCv = Math.min(minCv, gapStats(times).cv);
    maxUpload = Math.max(maxUpload, a.volumes.get(pair)!.up);
  }
  const max = (values: Iterable<number>) => {
    let m = 0;
    for (const v of values) m = Math.max(m, v);
    return m;
  };
  return {
    rareOrgs: rare.size,
    minGapCvToRareOrg: minCv,
    maxUploadToRareOrgBytes: maxUpload,
    maxDistinctInternalTargetsPerWindow: max([...a.scans.values()].map((s) => s.targets.size)),
    maxShortLoginSessionsPerWindow: max([...a.attempts.values()].map((c) => c.short)),
    maxUniqueDnsNamesPerDomainPerWindow: max([...a.dns.values()].map((d) => d.names.size)),
    maxMeanDnsLabelLength: max([...a.dns.values()].map((d) => (d.labels > 0 ? d.labelChars / d.labels : 0))),
  };
}
