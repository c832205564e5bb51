// The wire record (wire.md §5.4) of one flow's counters, shaped and rounded as flowgen's
// record.ts does, so the server and the detectors cannot tell metered flows from generated ones
// except by what only real traffic has.

import { hex16, timeHash } from '../flowgen/record.js';
import { momentsOf, round4, round6 } from '../flowgen/packets.js';
import { mix32 } from '../flowgen/prng.js';
import { dayOfWeek, flowRates, packetCounts, timeOfDay } from '../flowgen/record-fields.js';
import type { DirectionFields, FlowRecord, Moments, ProcessInfo, SensorInfo } from '../flowgen/types.js';
import type { FlowEndOwners } from '../host/process-sockets.js';
import type { FlowEnd } from '../host/socket-index.js';
import { TALLY, type FlowCounters, type FlowState } from './flow-state.js';
import { appByPort, flagNames, icmpTypeName, PROTO_TCP, PROTO_UDP, transportName } from './well-known.js';

export interface RecordContext {
  customerId: string;
  sensor: SensorInfo;
  /** meta.tags of every record (flowgen puts the site there). */
  tags: readonly string[];
}

/** The processes of this host that own a flow's ends (host/process-sockets.ts), asked once per finished flow. */
export interface FlowOwners {
  ownersOf(transport: 'TCP' | 'UDP', src: FlowEnd, dst: FlowEnd, startMs: number, endMs: number): FlowEndOwners;
}

/** What `owners` knows of the flow's ends (TCP and UDP only), its record spanning `startMs` to `endMs`. */
export function ownersOfFlow(owners: FlowOwners, flow: FlowState, startMs: number, endMs: number): FlowEndOwners | undefined {
  const id = flow.id;
  const transport = id.protocol === PROTO_TCP ? 'TCP' : id.protocol === PROTO_UDP ? 'UDP' : undefined;
  if (transport === undefined) return undefined;
  return owners.ownersOf(transport, { ip: id.srcIp, port: id.srcPort }, { ip: id.dstIp, port: id.dstPort }, startMs, endMs);
}

/** What a flow's record says at its top and in its volumes, shared by the record and its Native row (flow-columns.ts). */
export function flowBasics(flow: FlowState, exportMicros: number) {
  const id = flow.id;
  const c = flow.counters;
  const hints = flow.hints;
  const ts = Math.floor(c.startMicros / 1000);
  const duration = round6((c.lastMicros - c.startMicros) / 1e6);
  const srcBytes = c.sumOf(TALLY.srcBytes);
  const dstBytes = c.sumOf(TALLY.dstBytes);
  const srcPackets = c.countOf(TALLY.srcBytes);
  const dstPackets = c.countOf(TALLY.dstBytes);
  const h1 = id.keyHash;
  const session = id.sessionHash;
  return {
    ts,
    srcBytes,
    dstBytes,
    srcPackets,
    dstPackets,
    key: hex16(h1, timeHash(h1, ts)),
    sessionKey: hex16(session, mix32(session ^ 0x5bd1e995)),
    appName: hints.app_name || appByPort(id.protocol, id.dstPort) || appByPort(id.protocol, id.srcPort) || 'UNKNOWN',
    fqdn: hints.tls?.sni || hostOnly(hints.http?.host),
    ingestTime: Math.max(ts, Math.floor(exportMicros / 1000)),
    timeOfDay: timeOfDay(ts),
    dayOfWeek: dayOfWeek(ts),
    rates: flowRates(srcBytes, dstBytes, srcPackets, dstPackets, duration),
    durationMoments: momentsOf(1, duration, 0),
  };
}

/**
 * `exportMicros` is the packet time at which the record leaves the table: its meta.@ingest_time.
 * `owners`, on a host whose own traffic is metered, names the processes of the flow's ends.
 */
export function buildFlowRecord(flow: FlowState, ctx: RecordContext, exportMicros: number, owners?: FlowOwners): FlowRecord {
  const id = flow.id;
  const c = flow.counters;
  const hints = flow.hints;
  const f = flowBasics(flow, exportMicros);
  const processes = owners === undefined ? undefined : ownersOfFlow(owners, flow, f.ts, f.ingestTime);
  const sensor = ctx.sensor;

  const record: FlowRecord = {
    doc_type: 'flow',
    '@timestamp': f.ts,
    key: f.key,
    session_key: f.sessionKey,
    app_name: f.appName,
    src: direction(id.srcIp, id.srcPrivate, id.srcPort, undefined, processes?.src),
    dst: direction(id.dstIp, id.dstPrivate, id.dstPort, f.fqdn, processes?.dst),
    ip: { version: id.ipVersion },
    transport: { proto: transportName(id.protocol), proto_num: id.protocol },
    path: [{ sensor: { id: sensor.id, type: sensor.type, name: sensor.name, hostname: sensor.hostname, interface: sensor.interface } }],
    meta: {
      '@ingest_time': f.ingestTime,
      customer_id: ctx.customerId,
      tags: ctx.tags.slice(),
      flow_types: ['packet'],
      time_of_day: f.timeOfDay,
      day_of_week: f.dayOfWeek,
      flipped: id.flipped,
    },
    stats: {
      connection_count: 1,
      volume: {
        bytes: { src: c.momentsOf(TALLY.srcBytes), dst: c.momentsOf(TALLY.dstBytes), total: f.srcBytes + f.dstBytes },
        packets: packetCounts(f.srcPackets, f.dstPackets),
      },
      rate: f.rates,
      rtt_secs: { net: netRtt(c), app: momentsOf(0, 0, 0) },
      quality: { retrans: { packets: c.retransPackets, bytes: c.retransBytes }, fragments: c.fragments },
      size: { packet: c.packetMoments(), frame: c.momentsOf(TALLY.frames), payload_entropy: c.momentsOf(TALLY.entropy) },
      timing: { duration_secs: f.durationMoments, inter_arrival_secs: interArrival(c) },
    },
  };
  if (flow.isTcp) record.tcp = { flags: flagNames(c.flags), window_length: c.momentsOf(TALLY.window) };
  if (id.icmp !== undefined) record.icmp = { type: id.icmp.type, type_map: icmpTypeName(id.protocol, id.icmp.type), code: id.icmp.code };
  if (id.vlan !== undefined) {
    record.path[0].src_vlan = id.vlan;
    record.path[0].dst_vlan = id.vlan;
  }
  if (hints.dns?.rrname) record.dns = copyHints(hints.dns);
  if (hints.tls !== undefined && Object.keys(hints.tls).length > 0) record.tls = copyHints(hints.tls);
  if (hints.http !== undefined && Object.keys(hints.http).length > 0) record.http = copyHints(hints.http);
  return record;
}

/**
 * stats.rtt_secs.net: the handshake's round trip, when the flow showed one. One call either way:
 * a call site first reached after V8 optimised the record builder would throw that code away.
 */
export function netRtt(c: FlowCounters): Moments {
  const seen = c.handshakeRttMicros >= 0;
  return momentsOf(seen ? 1 : 0, round6(seen ? c.handshakeRttMicros / 1e6 : 0), 0);
}

/** Gap statistics as flowgen defines them from the gaps' coefficient of variation. */
export function interArrival(c: FlowCounters): FlowRecord['stats']['timing']['inter_arrival_secs'] {
  const n = c.countOf(TALLY.gaps);
  if (n === 0) return { mean_gap: 0, regularity: 0, consistency: 0, burstiness: 0, min_gap: 0, max_gap: 0 };
  const mean = c.sumOf(TALLY.gaps) / n;
  const sd = Math.sqrt(Math.max(0, c.sumOfSquares(TALLY.gaps) / n - mean * mean));
  const cv = mean > 0 ? sd / mean : 0;
  return {
    mean_gap: round6(mean),
    regularity: round4(1 / (1 + cv)),
    consistency: round4(Math.exp(-cv)),
    burstiness: round4((cv - 1) / (cv + 1)),
    min_gap: round6(c.minGap),
    max_gap: round6(c.maxGap),
  };
}

function direction(ip: string, isPrivate: boolean, port: number, fqdn: string | undefined, process: ProcessInfo | undefined): DirectionFields {
  // Geo and organization come from the server's datasets; a packet shows neither.
  const end: DirectionFields = { ip, port, address_type: isPrivate ? 'private' : 'public', geo: {}, ctx: fqdn ? { fqdn } : {} };
  if (process !== undefined) end.process = process;
  return end;
}

/** A hint group for the record, its arrays copied too (structuredClone cost more than the rest of the record). */
function copyHints<T extends object>(group: T): T {
  const copy = { ...group } as Record<string, unknown>;
  for (const field in copy) {
    const value = copy[field];
    if (Array.isArray(value)) copy[field] = value.slice();
  }
  return copy as T;
}

/** "host:port" → "host"; a bracketed IPv6 literal keeps its brackets off. */
function hostOnly(host: string | undefined): string | undefined {
  if (!host) return undefined;
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') > 0 ? host.indexOf(']') : undefined);
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
