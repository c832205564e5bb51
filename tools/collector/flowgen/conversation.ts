// Small building blocks every traffic model uses to fill a FlowSpec.

import type { ServiceDef } from './catalog/orgs.js';
import { CLIENT_PROCESSES, type ClientKind, type TrafficProfile } from './catalog/traffic.js';
import type { InternalHost } from './endpoints.js';
import type { Prng } from './prng.js';

/** Flows longer than this are exported as an ongoing record, as a sensor's active timeout does. */
export const ACTIVE_TIMEOUT_SECS = 300;

export interface Volume {
  up: number;
  down: number;
  durationSecs: number;
  ongoing: boolean;
}

/** Bytes and duration for one conversation of a profile. */
export function sampleVolume(profile: TrafficProfile, rng: Prng): Volume {
  let up = Math.min(profile.upMax, Math.round(rng.logNormal(profile.upMedian, profile.upSigma)));
  let down = Math.min(profile.downMax, Math.round(rng.logNormal(profile.downMedian, profile.downSigma)));
  if (profile.uploadShare !== undefined && rng.chance(profile.uploadShare)) {
    // The sync client pushes a file instead of pulling one; the upload cap still holds.
    const swapped = Math.min(profile.upMax, down);
    down = up;
    up = swapped;
  }
  let durationSecs = rng.logNormal(profile.durMedian, profile.durSigma);
  // A transfer cannot beat ~25 MB/s on this site's uplink: stretch short-but-huge flows.
  durationSecs = Math.max(durationSecs, (up + down) / 25e6);
  const ongoing = durationSecs > ACTIVE_TIMEOUT_SECS;
  if (ongoing) durationSecs = ACTIVE_TIMEOUT_SECS;
  return { up, down, durationSecs: Math.round(durationSecs * 1e6) / 1e6, ongoing };
}

export function ephemeralPort(host: { ephemeralLo: number; ephemeralHi: number }, rng: Prng): number {
  return rng.intBetween(host.ephemeralLo, host.ephemeralHi);
}

/** The process name behind a client conversation, or none for unmanaged devices (no agent). */
export function clientProcess(host: InternalHost, client: ClientKind, rng: Prng): string | undefined {
  if (!host.managed) return undefined;
  const names = CLIENT_PROCESSES[client][host.os];
  return names.length === 1 ? names[0] : rng.pick(names);
}

export function namedProcess(host: InternalHost, name: string): string | undefined {
  return host.managed ? name : undefined;
}

export function tlsVersion(svc: ServiceDef, rng: Prng): string | undefined {
  if (svc.tls13 === undefined) return undefined;
  return rng.next() < svc.tls13 ? 'TLS 1.3' : 'TLS 1.2';
}

/** Wire size of a DNS question: header, QNAME labels, type/class, and an EDNS OPT record. */
export function dnsQuerySize(name: string): number {
  return 12 + name.length + 2 + 4 + 11;
}

const ANSWER_SIZE: Record<string, number> = { A: 16, AAAA: 28, HTTPS: 48, SRV: 40, PTR: 30, TXT: 120, CNAME: 40, NULL: 160 };

export function dnsResponseSize(name: string, rrtype: string, answers: number, rcode: string): number {
  const base = dnsQuerySize(name);
  if (rcode !== 'NOERROR') return base + 60; // SOA in the authority section
  return base + answers * (ANSWER_SIZE[rrtype] ?? 32);
}
