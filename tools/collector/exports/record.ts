// Builds the wire.md §5.4 flow record of one exported flow. An export carries
// totals, not packets: byte moments hold their count (packets) and sum
// (bytes) only, and what needs per-packet values (squares and cubes, sizes,
// RTT, inter-arrival times, entropy) is absent rather than invented.

import { flagNames, icmpTypeName, transportName } from '../meter/well-known.js';
import { hex16 } from '../flowgen/record.js';
import { mix32 } from '../flowgen/prng.js';
import { dayOfWeek, flowRates, fnvText, packetCounts, timeOfDay } from '../flowgen/record-fields.js';
import type { DirectionFields, FlowRecord, PathEntry } from '../flowgen/types.js';
import type { FlowFields } from './fields.js';

export type ExportKind = 'netflow_v5' | 'netflow_v9' | 'ipfix';

/** Count and sum of a moment whose squares and cubes an export cannot know. */
export interface Totals {
  count: number;
  sum: number;
}

export interface ExportPathEntry extends PathEntry {
  src_snmp?: number;
  dst_snmp?: number;
  src_as?: number;
  dst_as?: number;
  src_tos?: number;
  ip_next_hop?: string;
  /** extra: the exporter sampled 1 packet in this many; counts are already multiplied by it. */
  sampling_interval?: number;
}

export interface ExportStats {
  connection_count: number;
  volume: {
    bytes: { src: Totals; dst: Totals; total: number };
    packets: { src: number; dst: number; total: number };
  };
  rate: {
    bps: { src: number; dst: number; total: number };
    pps: { src: number; dst: number; total: number };
  };
  timing: { duration_secs: Totals };
}

/** A flow record as an export can fill it: FlowRecord's shape, with what is unknown left out. */
export interface ExportRecord extends Omit<FlowRecord, 'stats' | 'app_name' | 'transport' | 'path' | 'src' | 'dst'> {
  src: Omit<DirectionFields, 'port'> & { port?: number };
  dst: Omit<DirectionFields, 'port'> & { port?: number };
  transport: { proto: string; proto_num: number };
  path: ExportPathEntry[];
  stats: ExportStats;
}

/** Who sent the export: its address and port and the observation domain (v9 source id). */
export interface Exporter {
  address: string;
  port: number;
  domain: number;
}

export interface RecordTimes {
  startMs: number;
  endMs: number;
  /** When the exporter sent the datagram: the record's ingest time (never before its start). */
  exportMs: number;
}

function endpoint(ip: string, port: number | undefined, isPrivate: boolean): ExportRecord['src'] {
  const d: ExportRecord['src'] = { ip, address_type: isPrivate ? 'private' : 'public', geo: {}, ctx: {} };
  if (port !== undefined) d.port = port;
  return d;
}

/** FNV-1a over the text, finished by mix32: cheap per character, well spread at the end. */
function stringHash(s: string, seed: number): number {
  return mix32(fnvText(seed, s));
}

function pathEntry(f: FlowFields, kind: ExportKind, exporter: Exporter, sampling: number): ExportPathEntry {
  const name = `${exporter.address}:${exporter.port}`;
  const entry: ExportPathEntry = {
    sensor: { id: `${name}/${exporter.domain}`, type: kind, name, hostname: exporter.address, interface: f.ingress === undefined ? '' : String(f.ingress) },
  };
  if (f.ingress !== undefined) entry.src_snmp = f.ingress;
  if (f.egress !== undefined) entry.dst_snmp = f.egress;
  if (f.srcAs !== undefined) entry.src_as = f.srcAs;
  if (f.dstAs !== undefined) entry.dst_as = f.dstAs;
  if (f.tos !== undefined) entry.src_tos = f.tos;
  if (f.srcVlan !== undefined) entry.src_vlan = f.srcVlan;
  if (f.dstVlan !== undefined) entry.dst_vlan = f.dstVlan;
  if (f.nextHop !== undefined) entry.ip_next_hop = f.nextHop;
  if (sampling > 1) entry.sampling_interval = sampling;
  return entry;
}

/**
 * The record of one flow, or undefined when the fields lack an address pair.
 * Counts are multiplied by `sampling` (1 when unsampled) so volumes estimate
 * the real traffic, which is what volume detectors compare against.
 */
export function buildExportRecord(
  f: FlowFields,
  kind: ExportKind,
  exporter: Exporter,
  times: RecordTimes,
  sampling: number,
  customerId: string,
): ExportRecord | undefined {
  if (f.srcIp === undefined || f.dstIp === undefined || f.proto === undefined) return undefined;
  const start = Math.floor(times.startMs);
  const durationSecs = Math.max(0, times.endMs - times.startMs) / 1000;
  const srcBytes = Math.round(f.bytes * sampling);
  const dstBytes = Math.round(f.reverseBytes * sampling);
  const srcPackets = Math.round(f.packets * sampling);
  const dstPackets = Math.round(f.reversePackets * sampling);
  const tuple = `${f.srcIp}|${f.srcPort ?? 0}|${f.dstIp}|${f.dstPort ?? 0}|${f.proto}`;
  const h = stringHash(tuple, 0x9e3779b1);
  const session = stringHash(`${f.srcIp}|${f.dstIp}|${f.dstPort ?? 0}|${f.proto}`, 0x85ebca6b);

  const record: ExportRecord = {
    doc_type: 'flow',
    '@timestamp': start,
    key: hex16(h, mix32(h ^ (start % 4294967296) ^ Math.floor(start / 4294967296))),
    session_key: hex16(session, mix32(session ^ 0x5bd1e995)),
    src: endpoint(f.srcIp, f.srcPort, f.srcPrivate === true),
    dst: endpoint(f.dstIp, f.dstPort, f.dstPrivate === true),
    ip: { version: f.ipVersion ?? (f.srcIp.includes(':') ? 6 : 4) },
    transport: { proto: transportName(f.proto), proto_num: f.proto },
    path: [pathEntry(f, kind, exporter, sampling)],
    meta: {
      '@ingest_time': Math.max(start, Math.floor(times.exportMs)),
      customer_id: customerId,
      tags: [],
      flow_types: [kind],
      time_of_day: timeOfDay(start),
      day_of_week: dayOfWeek(start),
      flipped: false,
    },
    stats: {
      connection_count: 1,
      volume: {
        bytes: { src: { count: srcPackets, sum: srcBytes }, dst: { count: dstPackets, sum: dstBytes }, total: srcBytes + dstBytes },
        packets: packetCounts(srcPackets, dstPackets),
      },
      rate: flowRates(srcBytes, dstBytes, srcPackets, dstPackets, durationSecs),
      timing: { duration_secs: { count: 1, sum: durationSecs } },
    },
  };
  if (f.proto === 6) record.tcp = { flags: flagNames(f.tcpFlags) };
  if (f.proto === 1 || f.proto === 58) {
    // NetFlow v5 (and exporters like it) put ICMP type and code in the destination port.
    const icmp =
      f.icmpType !== undefined
        ? { type: f.icmpType, code: f.icmpCode ?? 0 }
        : f.dstPort !== undefined
          ? { type: f.dstPort >> 8, code: f.dstPort & 255 }
          : undefined;
    if (icmp) record.icmp = { type: icmp.type, type_map: icmpTypeName(f.proto, icmp.type), code: icmp.code };
  }
  return record;
}
