// What every planted scenario shares: its ground-truth description, the
// context it is planned in, and where inside the run it is placed.

import type { InternalHost } from '../endpoints.js';
import type { ScenarioKind } from '../options.js';
import type { Prng } from '../prng.js';
import type { FlowSpec } from '../record.js';
import type { World } from '../world.js';

/** Ground truth for one planted incident. */
export interface Incident {
  /** `<kind>-<n>`, n counting from 1 per kind in the order given. */
  id: string;
  kind: ScenarioKind;
  source: {
    ip: string;
    external: boolean;
    hostname?: string;
    process?: string;
    org?: string;
  };
  destination: {
    /** Single destination address; absent for a scan (see network/hosts/ports). */
    ip?: string;
    org?: string;
    port?: number;
    fqdn?: string;
    /** Scan only: the swept prefix, how many addresses and which ports. */
    network?: string;
    hosts?: number;
    ports?: number[];
  };
  /** @timestamp of the first and the last planted flow (inclusive), inside [startMs, endMs). */
  window: { startMs: number; endMs: number };
  flowCount: number;
  /** `key` of every planted flow, in timestamp order. */
  flowKeys: string[];
  /** Scenario parameters as planned (interval, bytes, attempts, domain, ...). */
  params: Record<string, number | string>;
}

export type IncidentHeader = Omit<Incident, 'window' | 'flowCount' | 'flowKeys'>;

export interface PlannedIncident {
  header: IncidentHeader;
  /** Planted flows in timestamp order; the generator clips them to [startMs, endMs). */
  flows: FlowSpec[];
}

export interface ScenarioContext {
  world: World;
  rng: Prng;
  /** 0-based count of earlier scenarios of the same kind. */
  ordinal: number;
  /** Source hosts earlier scenarios already use; each incident gets its own host when it can. */
  taken: Set<string>;
}

export interface Window {
  startMs: number;
  endMs: number;
}

/**
 * Where an incident happens: explicit start/duration win; otherwise start at
 * a seeded fraction of the horizon and last the default duration, shortened
 * to 40% of a short horizon so the incident still fits.
 */
export function placeWindow(
  ctx: ScenarioContext,
  timing: { startMs?: number; durationMs?: number },
  defaultDurationMs: number,
  startFraction: [number, number],
): Window {
  const { startMs: runStart, horizonEndMs } = ctx.world.options;
  const horizon = horizonEndMs - runStart;
  const duration = timing.durationMs ?? Math.min(defaultDurationMs, horizon * 0.4);
  let start = timing.startMs;
  if (start === undefined) {
    start = runStart + horizon * ctx.rng.between(startFraction[0], startFraction[1]);
    start = Math.max(runStart, Math.min(start, horizonEndMs - duration));
  }
  return { startMs: Math.floor(start), endMs: Math.floor(start + duration) };
}

/** The source host: the one asked for, or a seeded pick among workstations. */
export function chooseSourceHost(ctx: ScenarioContext, sourceIp: string | undefined, prefer?: (h: InternalHost) => boolean): InternalHost {
  const { network } = ctx.world;
  if (sourceIp !== undefined) {
    const host = network.byIp.get(sourceIp);
    if (!host) throw new Error(`scenario sourceIp ${sourceIp} is not a generated internal host`);
    ctx.taken.add(host.ip);
    return host;
  }
  const free = network.workstations.filter((h) => !ctx.taken.has(h.ip));
  const pool = free.length > 0 ? free : network.workstations;
  const preferred = prefer ? pool.filter(prefer) : pool;
  const host = ctx.rng.pick(preferred.length > 0 ? preferred : pool);
  ctx.taken.add(host.ip);
  return host;
}

/** Process names per OS for the tool an incident runs. */
export function toolProcess(host: InternalHost, names: { windows: string; macos: string; linux: string }): string {
  return names[host.os];
}

/** Seconds with millisecond precision, as durations are reported. */
export function secs(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
