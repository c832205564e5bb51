// Public options and the defaults every module reads after resolution.

import type { Place, PlaceName } from './catalog/places.js';
import { PLACES } from './catalog/places.js';

export type ScenarioKind = 'beacon' | 'exfil' | 'scan' | 'bruteforce' | 'dns-tunnel';

export const SCENARIO_KINDS: readonly ScenarioKind[] = ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'];

/** When an incident happens. Omitted fields are placed inside the horizon from the seed. */
export interface ScenarioTiming {
  startMs?: number;
  durationMs?: number;
  /** Internal source host by IP (must be one of the generated hosts). */
  sourceIp?: string;
}

export interface BeaconScenario extends ScenarioTiming {
  kind: 'beacon';
  /** Check-in period; default 30–60 s from the seed. */
  intervalSecs?: number;
  /** Uniform jitter as a fraction of the interval; default 0.05. */
  jitter?: number;
}

export interface ExfilScenario extends ScenarioTiming {
  kind: 'exfil';
  /** Bytes uploaded over the burst; default 0.8–2.5 GB from the seed. */
  totalBytes?: number;
}

export interface ScanScenario extends ScenarioTiming {
  kind: 'scan';
  /** Addresses probed; default 254 (a /24 sweep). */
  targets?: number;
  /** TCP ports probed on every target; default the 20 most scanned ports. */
  ports?: number[];
}

export interface BruteforceScenario extends ScenarioTiming {
  kind: 'bruteforce';
  /** Login attempts; default 300–600 from the seed. */
  attempts?: number;
  /** Attacked service; default ssh. */
  service?: 'ssh' | 'rdp' | 'smb';
  /** Attack from the internet (default for ssh) or from an internal host (default for rdp and smb). */
  external?: boolean;
}

export interface DnsTunnelScenario extends ScenarioTiming {
  kind: 'dns-tunnel';
  /** Queries sent; default 2000–4000 from the seed. */
  queries?: number;
  /** Registered domain under which data is encoded; default from the seed. */
  domain?: string;
}

export type ScenarioSpec = ScenarioKind | BeaconScenario | ExfilScenario | ScanScenario | BruteforceScenario | DnsTunnelScenario;

export interface NetworkOptions {
  /** Managed workstations (10.20.0.0/16). Default: flowsPerSecond, clamped to 20..20000. */
  workstations?: number;
  /** Internal application servers (10.10.1.0/24). Default: workstations / 50, clamped to 2..40. */
  appServers?: number;
  /** Unmanaged devices on guest Wi-Fi (192.168.50.0/23). Default: workstations / 6, clamped to 4..400. */
  guestDevices?: number;
  /** Internal DNS domain. Default corp.example.com. */
  domain?: string;
  /** Where the site is, for geo of private addresses and round-trip times. Default newYork. */
  site?: PlaceName | Place;
  /** Site clock offset from UTC, for the working day (no DST). Default -300 (New York winter). */
  utcOffsetMinutes?: number;
  /** Site label in meta.tags as `site:<name>`. Default hq. */
  siteName?: string;
}

export interface FlowGeneratorOptions {
  seed: number | string;
  customerId: string;
  /** Sensor id in path[0].sensor.id. Default: derived from customerId. */
  nodeId?: string;
  /** First possible @timestamp (epoch ms, inclusive). */
  startMs: number;
  /** End (epoch ms, exclusive). Omitted: the generator never ends. */
  endMs?: number;
  /** Long-run mean rate of the load-driven benign flows (weekly mean when diurnal). */
  flowsPerSecond: number;
  scenarios?: ScenarioSpec[];
  network?: NetworkOptions;
  /** Working-day and weekend variation of the rate. Default true. */
  diurnal?: boolean;
}

export interface ResolvedNetwork {
  workstations: number;
  appServers: number;
  guestDevices: number;
  domain: string;
  site: Place;
  utcOffsetMinutes: number;
  siteName: string;
}

export interface ResolvedOptions {
  seed: string;
  customerId: string;
  nodeId: string;
  startMs: number;
  endMs: number; // Infinity when unbounded
  /** Where scenarios are placed: endMs, or one hour after startMs when unbounded. */
  horizonEndMs: number;
  flowsPerSecond: number;
  scenarios: Exclude<ScenarioSpec, ScenarioKind>[];
  network: ResolvedNetwork;
  diurnal: boolean;
}

const HOUR_MS = 3_600_000;

/** Rejects parameters that would make a scenario empty or endless (a zero beacon interval, say). */
function checkScenario(spec: Exclude<ScenarioSpec, ScenarioKind>): void {
  const positive = (value: number | undefined, name: string) => {
    if (value !== undefined && !(value > 0 && Number.isFinite(value))) throw new Error(`${spec.kind}.${name} must be a positive number`);
  };
  if (!SCENARIO_KINDS.includes(spec.kind)) throw new Error(`unknown scenario kind ${String(spec.kind)}`);
  positive(spec.durationMs, 'durationMs');
  if (spec.startMs !== undefined && !Number.isInteger(spec.startMs)) throw new Error(`${spec.kind}.startMs must be an integer epoch in milliseconds`);
  switch (spec.kind) {
    case 'beacon':
      positive(spec.intervalSecs, 'intervalSecs');
      if (spec.jitter !== undefined && !(spec.jitter >= 0 && spec.jitter < 1)) throw new Error('beacon.jitter must be within [0, 1)');
      break;
    case 'exfil':
      positive(spec.totalBytes, 'totalBytes');
      break;
    case 'scan':
      positive(spec.targets, 'targets');
      if (spec.targets !== undefined && spec.targets > 65_000) throw new Error('scan.targets must be at most 65000');
      if (spec.ports?.some((p) => !Number.isInteger(p) || p < 1 || p > 65535) || spec.ports?.length === 0) throw new Error('scan.ports must be TCP ports');
      break;
    case 'bruteforce':
      positive(spec.attempts, 'attempts');
      break;
    case 'dns-tunnel':
      positive(spec.queries, 'queries');
      break;
  }
}

function clamp(value: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, value));
}

export function resolveOptions(options: FlowGeneratorOptions): ResolvedOptions {
  const { startMs, flowsPerSecond } = options;
  if (!Number.isInteger(startMs)) throw new Error('startMs must be an integer epoch in milliseconds');
  if (options.endMs !== undefined && (!Number.isInteger(options.endMs) || options.endMs <= startMs)) {
    throw new Error('endMs must be an integer epoch in milliseconds after startMs');
  }
  if (!(flowsPerSecond >= 0) || !Number.isFinite(flowsPerSecond)) throw new Error('flowsPerSecond must be a finite number ≥ 0');
  if (!options.customerId) throw new Error('customerId is required');

  const net = options.network ?? {};
  const workstations = Math.round(net.workstations ?? clamp(Math.round(flowsPerSecond), 20, 20_000));
  if (workstations < 1 || workstations > 60_000) throw new Error('network.workstations must be within 1..60000');
  const site = typeof net.site === 'string' ? PLACES[net.site] : (net.site ?? PLACES.newYork);
  if (!site) throw new Error(`unknown site ${String(net.site)}`);

  const endMs = options.endMs ?? Infinity;
  const scenarios = (options.scenarios ?? []).map((spec) => (typeof spec === 'string' ? { kind: spec } : spec));
  scenarios.forEach(checkScenario);
  return {
    seed: String(options.seed),
    customerId: options.customerId,
    nodeId: options.nodeId ?? `${options.customerId}-sensor-01`,
    startMs,
    endMs,
    horizonEndMs: Number.isFinite(endMs) ? endMs : startMs + HOUR_MS,
    flowsPerSecond,
    scenarios,
    network: {
      workstations,
      appServers: Math.round(net.appServers ?? clamp(Math.round(workstations / 50), 2, 40)),
      guestDevices: Math.round(net.guestDevices ?? clamp(Math.round(workstations / 6), 4, 400)),
      domain: net.domain ?? 'corp.example.com',
      site,
      utcOffsetMinutes: net.utcOffsetMinutes ?? -300,
      siteName: net.siteName ?? 'hq',
    },
    diurnal: options.diurnal ?? true,
  };
}
