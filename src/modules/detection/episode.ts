import type { Disposition, KeyFinding, ProvenanceLeg, OpenQuestion, RecommendedAction, TriggerSignal } from '../investigations/investigation.model.js';
import type { CandidateContext, DetectionStore, TimeWindow } from './detection.store.js';
import type { HostContext } from './host-context.js';

export const DETECTOR_KINDS = ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'] as const;
export type DetectorKind = (typeof DETECTOR_KINDS)[number];

/**
 * A process the flows show owning the source's sockets with its host context (the collector on
 * the host read it from /proc, or host logs gave it): a pid, and the program and user when known.
 */
export interface ObservedProcess {
  name: string;
  pid: number;
  executable: string | null;
  user: string | null;
  uid: number | null;
}

/** At most this many observed processes per episode: enough to name them, bounded whatever the flows say. */
const MAX_OBSERVED = 8;

/**
 * Observed processes from the store's [name, JSON of the rest of src.process] pairs. Flows come
 * from collectors: a value of the wrong type is left out, never trusted.
 */
export function observedProcesses(pairs: [string, string][]): ObservedProcess[] {
  const out = new Map<string, ObservedProcess>();
  for (const [name, json] of pairs) {
    if (out.size >= MAX_OBSERVED) break;
    let fields: Record<string, unknown>;
    try {
      fields = JSON.parse(json) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof fields !== 'object' || fields === null || !Number.isInteger(fields.pid)) continue;
    const user = typeof fields.user === 'object' && fields.user !== null ? (fields.user as Record<string, unknown>) : {};
    const observed: ObservedProcess = {
      name,
      pid: fields.pid as number,
      executable: typeof fields.executable === 'string' ? fields.executable : null,
      user: typeof user.name === 'string' ? user.name : null,
      uid: Number.isInteger(user.id) ? (user.id as number) : null,
    };
    out.set(`${name}|${observed.pid}`, observed);
  }
  return [...out.values()];
}

/** What the narrative may say about an episode besides its measures. Lists are deduplicated. */
export interface EpisodeFacts {
  sourceExternal: boolean;
  /** The source's name as the collector saw it (`src.ctx.fqdn` of an internal host). */
  sourceFqdn: string | null;
  /** The AS holder and country of an external source. */
  sourceOrg: string | null;
  sourceCountry: string | null;
  /** Processes owning the source sockets (host logs). */
  processes: string[];
  /** Those of them the flows give a pid for (host context). */
  observedProcesses: ObservedProcess[];
  destinationIps: string[];
  ports: number[];
  /** SNI or DNS names of the destination. */
  fqdns: string[];
  tlsVersions: string[];
  alertSignatures: string[];
  threatFeeds: string[];
  /** The internal host attacked (bruteforce) or the resolver that forwarded (dns-tunnel). */
  targetFqdn: string | null;
  serviceProcesses: string[];
  resolvers: string[];
  rrtypes: string[];
  /** Admin sessions a scanner opened to hosts it had probed (lateral movement). */
  followOn: { host: string; port: number; sessions: number; firstMs: number }[];
}

export const emptyFacts = (): EpisodeFacts => ({
  sourceExternal: false,
  sourceFqdn: null,
  sourceOrg: null,
  sourceCountry: null,
  processes: [],
  observedProcesses: [],
  destinationIps: [],
  ports: [],
  fqdns: [],
  tlsVersions: [],
  alertSignatures: [],
  threatFeeds: [],
  targetFqdn: null,
  serviceProcesses: [],
  resolvers: [],
  rrtypes: [],
  followOn: [],
});

/** One stretch of suspicious activity of one subject (detector + source + destination). */
export interface Episode {
  detector: DetectorKind;
  /** The acting host's address. */
  source: string;
  /** An organization (beacon, exfil), a network (scan), an address (bruteforce) or a domain (dns-tunnel). */
  destination: string;
  firstMs: number;
  lastMs: number;
  /** The measurements the decision rests on, by the names docs/detections.md uses. */
  measures: Record<string, number>;
  facts: EpisodeFacts;
  /** Activity by time, for the timeline: `{atMs, label}` oldest first (at most a few dozen). */
  activity: { atMs: number; label: string }[];
  /** Collectors whose flows show it. */
  nodeIds: string[];
  /** Flows that raised IDS alerts. */
  alerts: number;
  /** The internal host at stake: the source, or the target of an attack from outside. */
  host: { ip: string; fqdn: string | null };
}

/** A detector's decision on an episode. */
export interface Assessment {
  disposition: Disposition;
  /** 0..1. */
  confidence: number;
  /** 0..100: ranks the list (`sort=severity`). */
  severity: number;
  signal: TriggerSignal;
  /** What raised or lowered the confidence, as short clauses for the rationale. */
  corroboration: string[];
}

/** What a detector says about its episode; narrative.ts assembles the investigation around it. */
export interface Story {
  headline: string;
  rationale: string;
  known: string;
  unknown: string | null;
  therefore: string;
  findings: KeyFinding[];
  legs: ProvenanceLeg[];
  tags: string[];
  questions: OpenQuestion[];
  actions: RecommendedAction[];
  confidenceLimits: string;
  whatWouldChange: string;
}

export interface Detector {
  readonly kind: DetectorKind;
  /** Runs the detector's SQL over the window and applies its thresholds. */
  detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]>;
  assess(episode: Episode): Assessment;
  /** How long the subject must stay quiet before its investigation is closed. */
  quietMs(episode: Episode): number;
  story(episode: Episode, assessment: Assessment, host: HostContext): Story;
}

export const MiB = 1024 * 1024;
export const MINUTE = 60_000;

export const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
export const uniq = <T>(values: Iterable<T | null | undefined>): T[] => [
  ...new Set([...values].filter((v): v is T => v !== null && v !== undefined && v !== '')),
];

/**
 * How far past its threshold a measure is, on 0..1: 0 at the threshold, 0.5 at `doubling` times
 * it, approaching 1 beyond. Used to turn margins into confidence.
 */
export function margin(value: number, threshold: number, doubling = 2): number {
  if (!(value > threshold) || threshold <= 0) return 0;
  return clamp01(Math.log(value / threshold) / Math.log(doubling) / 2);
}

/** Disposition and severity from a confidence: detectors call a strong case malicious, a weaker one escalate. */
export function decide(base: number, confidence: number, benign = false): Pick<Assessment, 'disposition' | 'confidence' | 'severity'> {
  const c = round(clamp01(confidence), 2);
  if (benign) return { disposition: 'benign', confidence: c, severity: Math.round(base * 0.2 * c) };
  if (c >= MALICIOUS_AT) return { disposition: 'malicious', confidence: c, severity: Math.round(base * c) };
  return { disposition: 'escalate', confidence: c, severity: Math.round(base * 0.7 * c) };
}

/** Confidence from which a detector's disposition is `malicious` rather than `escalate`. */
export const MALICIOUS_AT = 0.75;

/**
 * Groups bucket rows of one subject into episodes: buckets closer than `gapMs` belong together.
 * `isTrigger` marks the buckets that pass the detector's thresholds; a group becomes an episode
 * only when it holds at least one, and then sums every bucket in it (the attack's run-up too).
 */
export function groupBuckets<R extends { first_ms: number; last_ms: number }>(rows: R[], gapMs: number, isTrigger: (row: R) => boolean): R[][] {
  const sorted = [...rows].sort((a, b) => a.first_ms - b.first_ms);
  const groups: R[][] = [];
  for (const row of sorted) {
    const current = groups[groups.length - 1];
    if (current && row.first_ms - Math.max(...current.map((r) => r.last_ms)) <= gapMs) current.push(row);
    else groups.push([row]);
  }
  return groups.filter((g) => g.some(isTrigger));
}

/** The phase-0 (non-overlapping) windows of a group: the ones whose counts add up. */
export const partition = <R extends { phase: number }>(windows: R[]): R[] => windows.filter((w) => Number(w.phase) === 0);

/** Rows by a key, insertion order kept. */
export function groupBy<R>(rows: R[], key: (row: R) => string): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The context columns every candidate row carries, merged over rows. */
export function mergedContext(rows: CandidateContext[]) {
  return {
    nodeIds: uniq(rows.flatMap((r) => r.node_ids)),
    alerts: sum(rows.map((r) => Number(r.alerts))),
    alertSignatures: uniq(rows.flatMap((r) => r.alert_signatures)),
    processes: uniq(rows.flatMap((r) => r.processes)),
    observedProcesses: observedProcesses(rows.flatMap((r) => r.observed_processes)),
    sourceFqdn: rows.find((r) => r.source_fqdn)?.source_fqdn ?? null,
    firstMs: Math.min(...rows.map((r) => Number(r.first_ms))),
    lastMs: Math.max(...rows.map((r) => Number(r.last_ms))),
  };
}
