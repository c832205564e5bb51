/**
 * Crafted flows for the detector tests: minimal wire records (wire.md 5.4) carrying exactly the
 * fields the detectors read, so that a test states the traffic it means in one line.
 */
import type { Incident } from '../../../tools/collector/flowgen/index.js';
import { type FlowEngine, insertFlowBatch } from '../../flowstore/index.js';

export interface FlowSpec {
  at: number;
  src: string;
  dst: string;
  port: number;
  /** Bytes each way. */
  up?: number;
  down?: number;
  secs?: number;
  proto?: 'TCP' | 'UDP';
  /** dst.ctx.organization of a public destination. */
  org?: string;
  /** Packets back (0 = no answer). */
  answered?: boolean;
  /** Packets each way (default 4). */
  packets?: number;
  flags?: string[];
  /** src.process: a name (given a fixed pid, as host logs give one), or the whole object as a collector sends it. */
  process?: string | Record<string, unknown>;
  rrname?: string;
  rrtype?: string;
  srcFqdn?: string;
  dstFqdn?: string;
  alert?: boolean;
  threat?: boolean;
}

const isPrivate = (ip: string) => /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(ip);

export function flowRecord(f: FlowSpec): Record<string, unknown> {
  const up = f.up ?? 600;
  const down = f.down ?? 400;
  const answered = f.answered ?? true;
  const packets = f.packets ?? 4;
  const side = (ip: string, port: number | undefined, fqdn: string | undefined, org: string | undefined) => ({
    ip,
    ...(port !== undefined ? { port } : {}),
    address_type: isPrivate(ip) ? 'private' : 'public',
    ...(isPrivate(ip) ? {} : { geo: { org: org ?? 'Some Hosting', country_iso_code: 'NL' } }),
    ctx: { ...(org ? { organization: org } : {}), ...(fqdn ? { fqdn } : {}) },
  });
  return {
    '@timestamp': Math.floor(f.at),
    src: {
      ...side(f.src, 50_000, f.srcFqdn, undefined),
      ...(f.process ? { process: typeof f.process === 'string' ? { name: f.process, pid: 4242 } : f.process } : {}),
    },
    dst: side(f.dst, f.port, f.dstFqdn, f.org),
    transport: { proto: f.proto ?? 'TCP', proto_num: (f.proto ?? 'TCP') === 'TCP' ? 6 : 17 },
    ...((f.proto ?? 'TCP') === 'TCP' ? { tcp: { flags: f.flags ?? (answered ? ['SYN', 'ACK', 'FIN'] : ['SYN']) } } : {}),
    stats: {
      volume: {
        bytes: {
          src: { count: packets, sum: up, sum_squares: 0, sum_cubes: 0 },
          dst: { count: answered ? packets : 0, sum: answered ? down : 0, sum_squares: 0, sum_cubes: 0 },
          total: up + (answered ? down : 0),
        },
        packets: { src: packets, dst: answered ? packets : 0, total: answered ? 2 * packets : packets },
      },
      timing: { duration_secs: { count: 1, sum: f.secs ?? 0.5, sum_squares: 0, sum_cubes: 0 } },
    },
    ...(f.rrname ? { dns: { rrname: f.rrname, rrtype: f.rrtype ?? 'TXT', rcode: 'NOERROR' } } : {}),
    ...(f.alert ? { suricata: { flow: { alerted: true, event_type: 'flow', community_id: '1:x' } } } : {}),
    ...(f.threat ? { threat: { indicator: f.src, type: 'ip', ip: f.src, feeds: ['blocklist.de'] } } : {}),
  };
}

let batch = 0;

/** Inserts flows for a tenant as one batch of a fake collector. */
export async function insertFlows(engine: FlowEngine, customerId: string, flows: FlowSpec[], nodeId = 'node_fixture'): Promise<void> {
  for (let i = 0; i < flows.length; i += 10_000) {
    await insertFlowBatch(engine, { customerId, nodeId, batchId: `fixture-${process.pid}-${++batch}`, flows: flows.slice(i, i + 10_000).map(flowRecord) });
  }
}

/** `n` times from `startMs`, `everyMs` apart, each moved by up to ±`jitter` of the period (seeded). */
export function cadence(startMs: number, n: number, everyMs: number, jitter = 0, seed = 1): number[] {
  let x = seed;
  const random = () => (x = (x * 16807) % 2147483647) / 2147483647;
  return Array.from({ length: n }, (_, i) => startMs + i * everyMs + (jitter ? (2 * random() - 1) * jitter * everyMs : 0));
}

/** `n` random instants in [startMs, startMs + spanMs) (seeded): Poisson-like, gaps vary ~100%. */
export function scattered(startMs: number, n: number, spanMs: number, seed = 7): number[] {
  let x = seed;
  const random = () => (x = (x * 16807) % 2147483647) / 2147483647;
  return Array.from({ length: n }, () => startMs + random() * spanMs).sort((a, b) => a - b);
}

/** A base32-looking label of `length` characters (seeded). */
export function label(length: number, seed: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let x = seed + 1;
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(x = (x * 48271) % 2147483647) % 32];
  return out;
}

/** What an investigation names as the destination of each kind of incident. */
export function expectedDestination(incident: Incident): string {
  switch (incident.kind) {
    case 'beacon':
    case 'exfil':
      return incident.destination.org!;
    case 'scan':
      return incident.destination.network!;
    case 'bruteforce':
      return incident.destination.ip!;
    case 'dns-tunnel':
      return String(incident.params.domain);
  }
}
