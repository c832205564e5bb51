// Command-and-control beaconing: one workstation checks in with one rare
// hosting provider at a fixed period with small jitter and small, regular
// payloads. Now and then the server hands out a task (a larger download).

import { RARE_ORGS } from '../catalog/orgs.js';
import { namedProcess } from '../conversation.js';
import { endpointInOrg } from '../endpoints.js';
import type { BeaconScenario } from '../options.js';
import type { FlowSpec } from '../record.js';
import type { BeaconData, ScaleAnalysis } from '../types.js';
import { chooseSourceHost, placeWindow, secs, toolProcess, type PlannedIncident, type ScenarioContext } from './plan.js';

export const BEACON_DEFAULTS = {
  intervalSecs: [30, 60] as [number, number],
  jitter: 0.05,
  /** Runs from its start to the end of the horizon, at most this long. */
  maxDurationMs: 24 * 3_600_000,
  /** The sensor's beacon engine annotates flows once it has seen this many check-ins. */
  annotateAfter: 10,
  taskShare: 0.03,
};

const C2_NAMES = ['cdn.static-content-delivery.net', 'api.telemetry-gateway.com', 'update.cloudsync-services.org', 'assets.msedge-cdn-update.com'];

export function planBeacon(spec: BeaconScenario, ctx: ScenarioContext): PlannedIncident {
  const { rng, world } = ctx;
  const host = chooseSourceHost(ctx, spec.sourceIp, (h) => h.os === 'windows' && !h.admin);
  const rare = RARE_ORGS.beacon[ctx.ordinal % RARE_ORGS.beacon.length];
  const dst = endpointInOrg(rare, 100 + ctx.ordinal, world.options.network.site);
  const fqdn = C2_NAMES[(ctx.ordinal + rng.int(C2_NAMES.length)) % C2_NAMES.length];
  const intervalSecs = spec.intervalSecs ?? Math.round(rng.between(...BEACON_DEFAULTS.intervalSecs));
  const jitter = spec.jitter ?? BEACON_DEFAULTS.jitter;
  const horizonEnd = world.options.horizonEndMs;
  const placed = placeWindow(ctx, { startMs: spec.startMs, durationMs: spec.durationMs ?? 0 }, 0, [0.1, 0.3]);
  const end = spec.durationMs !== undefined ? placed.endMs : Math.min(horizonEnd, placed.startMs + BEACON_DEFAULTS.maxDurationMs);
  const processName = toolProcess(host, { windows: 'rundll32.exe', macos: 'com.apple.updated', linux: 'kworker-helper' });
  const process = namedProcess(host, processName);

  const flows: FlowSpec[] = [];
  const first = placed.startMs;
  for (let t = first, n = 1; t < end; n++) {
    const ts = Math.floor(t);
    const task = rng.chance(BEACON_DEFAULTS.taskShare);
    const flow: FlowSpec = {
      ts,
      src: host,
      srcPort: rng.intBetween(host.ephemeralLo, host.ephemeralHi),
      dst,
      dstPort: 443,
      proto: 'TCP',
      app: 'HTTPS',
      up: Math.round(rng.logNormal(520, 0.08)),
      down: task ? Math.round(rng.between(20_000, 60_000)) : Math.round(rng.logNormal(380, 0.15)),
      durationSecs: secs(rng.between(0.25, 0.5) + (task ? 0.4 : 0)),
      outcome: 'ok',
      contentUp: 'encrypted',
      contentDown: 'encrypted',
      gapCv: 0.3,
      direction: 'egress',
      dstFqdn: fqdn,
      srcProcess: process,
      tlsVersion: 'TLS 1.2',
    };
    if (n >= BEACON_DEFAULTS.annotateAfter) flow.beacon = annotation(n, first, ts, intervalSecs * 1000, jitter);
    flows.push(flow);
    t += intervalSecs * 1000 * (1 + jitter * (2 * rng.next() - 1));
  }

  return {
    header: {
      id: '',
      kind: 'beacon',
      source: { ip: host.ip, external: false, hostname: host.hostname, process: processName },
      destination: { ip: dst.ip, org: rare.name, port: 443, fqdn },
      params: { interval_ms: intervalSecs * 1000, jitter, tls_version: 'TLS 1.2' },
    },
    flows,
  };
}

/** What the sensor's beacon engine writes once it is confident, growing with evidence. */
function annotation(samples: number, firstMs: number, lastMs: number, intervalMs: number, jitter: number): BeaconData {
  const confidence = round4(0.55 + 0.43 * (1 - Math.exp(-(samples - BEACON_DEFAULTS.annotateAfter) / 40)));
  const session: ScaleAnalysis = {
    beacon_score: confidence,
    timing_regularity: round4(1 - jitter * 0.6),
    timing_predictability: round4(0.85 + 0.14 * (1 - 1 / samples)),
    timing_uniformity: round4(1 - jitter),
    pattern_significance: round4(1 - 1 / samples),
    is_beacon: true,
    sample_count: samples,
    analysis_type: 'session',
  };
  const packet: ScaleAnalysis = {
    beacon_score: round4(confidence * 0.7),
    timing_regularity: 0.62,
    timing_predictability: 0.58,
    timing_uniformity: 0.55,
    pattern_significance: round4(0.5 + 0.4 * (1 - 1 / samples)),
    is_beacon: false,
    sample_count: samples * 12,
    analysis_type: 'packet',
  };
  return {
    confidence,
    first_seen: new Date(firstMs).toISOString(),
    last_seen: new Date(lastMs).toISOString(),
    packet_level: packet,
    session_level: session,
    primary_evidence: 'session_level',
    has_sessions: true,
    weighted_confidence: round4(confidence * 0.95),
    consensus_score: round4(0.7 + 0.25 * (1 - 1 / samples)),
    interval: { value_ms: Math.round(intervalMs) },
    meta: { detection_engine: 'prophet-beacon', analysis_version: '2.3.0' },
  };
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
