// Builds one wire-shaped flow record (wire.md §5.4) from a FlowSpec: what
// happened (who, what, how much, how long) in, everything a packet sensor
// derives from that (packets, moments, rates, flags, geo, meta) out.

import { createHash } from 'node:crypto';
import type { AppName } from './catalog/orgs.js';
import type { ContentClass } from './catalog/traffic.js';
import { pidOf, type Endpoint } from './endpoints.js';
import { ETHERNET_HEADER, momentsOf, Tally, round4, round6, tcpPackets, udpPackets, type TcpOutcome } from './packets.js';
import { mix32, type Prng } from './prng.js';
import { dayOfWeek, flowRates, packetCounts, timeOfDay } from './record-fields.js';
import type { BeaconData, ClassificationContext, DirectionFields, FlowRecord, GeoEntry, SensorInfo, SuricataFields, ThreatFields } from './types.js';

export type Direction = 'egress' | 'ingress' | 'east-west';

export interface SuricataAlert {
  signature: string;
  signature_id: number;
  category: string;
  severity: number;
}

/** One conversation as the traffic models describe it. */
export interface FlowSpec {
  ts: number;
  src: Endpoint;
  srcPort: number;
  dst: Endpoint;
  dstPort: number;
  proto: 'TCP' | 'UDP';
  app: AppName;
  /** Application payload bytes, src → dst and dst → src. */
  up: number;
  down: number;
  durationSecs: number;
  outcome: TcpOutcome;
  contentUp: ContentClass;
  contentDown: ContentClass;
  gapCv: number;
  direction: Direction;
  /** Service name for dst.ctx.fqdn (SNI or DNS name); internal hosts use their own. */
  dstFqdn?: string;
  /** Process names on managed hosts; the record adds the host's pid for it. */
  srcProcess?: string;
  dstProcess?: string;
  tlsVersion?: string;
  dns?: { rrname: string; rrtype: string; rcode: string };
  /** Flow record cut by the sensor's active timeout: no FIN yet. */
  ongoing?: boolean;
  alert?: SuricataAlert;
  threat?: ThreatFields;
  beacon?: BeaconData;
}

export interface RecordContext {
  customerId: string;
  sensor: SensorInfo;
  siteTag: string;
}

const PROTO_NUM = { TCP: 6, UDP: 17 } as const;
/** Scratch tally for both directions; read before buildRecord returns. */
const BOTH_DIRECTIONS = new Tally();
const FLAGS_FULL = ['SYN', 'ACK', 'PSH', 'FIN'];
const FLAGS_ONGOING = ['SYN', 'ACK', 'PSH'];

function geoOf(ep: Endpoint): GeoEntry {
  const p = ep.place;
  if (ep.addressType === 'private') {
    return {
      continent_name: p.continent_name,
      country_iso_code: p.country_iso_code,
      country_name: p.country_name,
      city_name: p.city_name,
      time_zone: p.time_zone,
      location_network: ep.locationNetwork,
      location: { lat: p.lat, lon: p.lon },
    };
  }
  return {
    continent_name: p.continent_name,
    country_iso_code: p.country_iso_code,
    country_name: p.country_name,
    city_name: p.city_name,
    time_zone: p.time_zone,
    location_network: ep.asNetwork,
    asn: ep.asn,
    org: ep.asOrg,
    as_network: ep.asNetwork,
    accuracy_radius: 50,
    location: { lat: p.lat, lon: p.lon },
  };
}

function ctxOf(ep: Endpoint, fqdn: string | undefined): ClassificationContext {
  if (ep.addressType === 'private') return ep.fqdn === undefined ? {} : { fqdn: ep.fqdn };
  const ctx: ClassificationContext = { organization: ep.organization, industry: ep.industry };
  if (fqdn !== undefined) ctx.fqdn = fqdn;
  return ctx;
}

function direction(ep: Endpoint, port: number, fqdn: string | undefined, process: string | undefined): DirectionFields {
  const fields: DirectionFields = {
    ip: ep.ip,
    port,
    address_type: ep.addressType,
    geo: geoOf(ep),
    ctx: ctxOf(ep, fqdn),
  };
  if (process !== undefined) fields.process = { name: process, pid: pidOf(ep.ipNum, process) };
  return fields;
}

/** Hash of the 5-tuple: half of the flow key, and the Suricata flow id's seed. */
function tupleHash(spec: FlowSpec, protoNum: number): number {
  return mix32(spec.src.ipNum ^ Math.imul(spec.dst.ipNum, 0x9e3779b1) ^ (spec.srcPort << 16) ^ spec.dstPort ^ (protoNum << 8));
}

export function timeHash(tuple: number, ts: number): number {
  return mix32(tuple ^ (ts % 4294967296) ^ Math.floor(ts / 4294967296));
}

/** The record's `key`: 5-tuple plus start time, so ground truth can name flows before they are built. */
export function flowKey(spec: FlowSpec): string {
  const h1 = tupleHash(spec, PROTO_NUM[spec.proto]);
  return hex16(h1, timeHash(h1, spec.ts));
}

const HEX = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * Two uint32 as 16 hex digits, built as one flat string: concatenating pieces
 * would leave a chain of rope strings alive in every record.
 */
export function hex16(a: number, b: number): string {
  return String.fromCharCode(
    HEX[(a >>> 28) & 15],
    HEX[(a >>> 24) & 15],
    HEX[(a >>> 20) & 15],
    HEX[(a >>> 16) & 15],
    HEX[(a >>> 12) & 15],
    HEX[(a >>> 8) & 15],
    HEX[(a >>> 4) & 15],
    HEX[a & 15],
    HEX[(b >>> 28) & 15],
    HEX[(b >>> 24) & 15],
    HEX[(b >>> 20) & 15],
    HEX[(b >>> 16) & 15],
    HEX[(b >>> 12) & 15],
    HEX[(b >>> 8) & 15],
    HEX[(b >>> 4) & 15],
    HEX[b & 15],
  );
}

/** Community ID v1 (Corelight spec), so Suricata-enriched flows join with IDS logs. */
function communityId(srcIp: number, srcPort: number, dstIp: number, dstPort: number, protoNum: number): string {
  const srcFirst = srcIp < dstIp || (srcIp === dstIp && srcPort <= dstPort);
  const [aIp, aPort, bIp, bPort] = srcFirst ? [srcIp, srcPort, dstIp, dstPort] : [dstIp, dstPort, srcIp, srcPort];
  const buf = Buffer.alloc(2 + 4 + 4 + 1 + 1 + 2 + 2);
  buf.writeUInt16BE(0, 0); // seed
  buf.writeUInt32BE(aIp >>> 0, 2);
  buf.writeUInt32BE(bIp >>> 0, 6);
  buf.writeUInt8(protoNum, 10);
  buf.writeUInt8(0, 11);
  buf.writeUInt16BE(aPort, 12);
  buf.writeUInt16BE(bPort, 14);
  return `1:${createHash('sha1').update(buf).digest('base64')}`;
}

export function buildRecord(spec: FlowSpec, ctx: RecordContext, rng: Prng): FlowRecord {
  const { src, dst, proto } = spec;
  const protoNum = PROTO_NUM[proto];
  const entropyNoise = (rng.next() - 0.5) * 0.04;
  const counts =
    proto === 'TCP'
      ? tcpPackets(spec.up, spec.down, spec.outcome, spec.contentUp, spec.contentDown, entropyNoise)
      : udpPackets(spec.up, spec.down, spec.contentUp, spec.contentDown, entropyNoise);

  const srcBytes = counts.src.s1;
  const dstBytes = counts.dst.s1;
  const srcPackets = counts.src.count;
  const dstPackets = counts.dst.count;
  const totalPackets = srcPackets + dstPackets;
  const duration = Math.max(spec.durationSecs, 0);

  // Sizes over both directions; frames add the Ethernet header to every packet.
  const all = BOTH_DIRECTIONS.reset();
  all.addTally(counts.src);
  all.addTally(counts.dst);

  const rttBase = Math.max(src.rtt, dst.rtt) * (0.9 + rng.next() * 0.3);
  const answered = dstPackets > 0;
  const rttSamples = answered ? Math.min(16, 1 + Math.floor(Math.log2(1 + counts.dataPackets))) : 0;
  // Application response time: the network round trip plus the server's think time.
  const appRtt = rttBase * 1.5 + 0.002;
  const appSamples = counts.dataPackets > 0 ? Math.max(1, Math.ceil(rttSamples / 3)) : 0;

  const gaps = totalPackets - 1;
  const meanGap = gaps > 0 ? duration / gaps : 0;
  const cv = spec.gapCv;
  const retransRate = dst.addressType === 'public' || src.addressType === 'public' ? 0.002 : 0.0002;
  const retransPackets = counts.dataPackets > 0 ? Math.floor(counts.dataPackets * retransRate + rng.next()) : 0;

  const h1 = tupleHash(spec, protoNum);
  const h2 = timeHash(h1, spec.ts);
  const session = mix32(src.ipNum ^ Math.imul(dst.ipNum, 0x85ebca6b) ^ (spec.dstPort << 8) ^ protoNum);
  const ts = spec.ts;
  const sensor = ctx.sensor;

  const record: FlowRecord = {
    doc_type: 'flow',
    '@timestamp': ts,
    key: hex16(h1, h2),
    session_key: hex16(session, mix32(session ^ 0x5bd1e995)),
    app_name: spec.app,
    src: direction(src, spec.srcPort, undefined, spec.srcProcess),
    dst: direction(dst, spec.dstPort, spec.dstFqdn, spec.dstProcess),
    ip: { version: 4 },
    transport: { proto, proto_num: protoNum },
    path: [{ sensor: { id: sensor.id, type: sensor.type, name: sensor.name, hostname: sensor.hostname, interface: sensor.interface } }],
    meta: {
      '@ingest_time': ts + Math.round(duration * 1000) + 800 + (h2 & 2047),
      customer_id: ctx.customerId,
      tags: [ctx.siteTag, spec.direction],
      flow_types: spec.alert ? ['packet', 'suricata'] : ['packet'],
      time_of_day: timeOfDay(ts),
      day_of_week: dayOfWeek(ts),
      flipped: false,
    },
    stats: {
      connection_count: 1,
      volume: {
        bytes: { src: counts.src.moments(), dst: counts.dst.moments(), total: srcBytes + dstBytes },
        packets: packetCounts(srcPackets, dstPackets),
      },
      rate: flowRates(srcBytes, dstBytes, srcPackets, dstPackets, duration),
      rtt_secs: {
        net: momentsOf(rttSamples, round6(rttBase), round6(rttBase * 0.08)),
        app: momentsOf(appSamples, round6(appRtt), round6(appRtt * 0.2)),
      },
      quality: { retrans: { packets: retransPackets, bytes: retransPackets * 1500 }, fragments: 0 },
      size: {
        packet: all.moments(),
        frame: all.shiftedMoments(ETHERNET_HEADER),
        payload_entropy: counts.entropy.moments(),
      },
      timing: {
        duration_secs: momentsOf(1, round6(duration), 0),
        inter_arrival_secs: {
          mean_gap: round6(meanGap),
          regularity: gaps > 0 ? round4(1 / (1 + cv)) : 0,
          consistency: gaps > 0 ? round4(Math.exp(-cv)) : 0,
          burstiness: gaps > 0 ? round4((cv - 1) / (cv + 1)) : 0,
          min_gap: round6(meanGap * Math.max(0.001, 1 - 0.9 * Math.min(cv, 1.11))),
          max_gap: round6(Math.min(duration, meanGap * (1 + cv * (1 + Math.log(Math.max(1, gaps)))))),
        },
      },
    },
  };

  if (proto === 'TCP') record.tcp = { flags: tcpFlags(spec) };
  if (spec.tlsVersion !== undefined) record.tls = { version: spec.tlsVersion, sni: spec.dstFqdn ?? dst.fqdn ?? '' };
  if (spec.dns !== undefined) record.dns = { rrname: spec.dns.rrname, rrtype: spec.dns.rrtype, rcode: spec.dns.rcode };
  const vlans = record.path[0];
  if (src.vlan !== undefined) vlans.src_vlan = src.vlan;
  if (dst.vlan !== undefined) vlans.dst_vlan = dst.vlan;
  if (spec.alert !== undefined) record.suricata = suricataOf(spec, protoNum, h1, h2);
  if (spec.threat !== undefined) record.threat = structuredClone(spec.threat);
  if (spec.beacon !== undefined) record.beacon = structuredClone(spec.beacon);
  return record;
}

function tcpFlags(spec: FlowSpec): string[] {
  switch (spec.outcome) {
    case 'unanswered':
      return ['SYN'];
    case 'refused':
    case 'probed-open':
      return ['SYN', 'ACK', 'RST'];
    case 'ok':
      return spec.ongoing ? FLAGS_ONGOING.slice() : FLAGS_FULL.slice();
  }
}

function suricataOf(spec: FlowSpec, protoNum: number, h1: number, h2: number): SuricataFields {
  const alert = spec.alert!;
  return {
    // Suricata flow ids are 64-bit; keep them below 2^53 so JSON consumers read them exactly.
    flow_id: (h1 & 0x1fffff) * 4294967296 + h2,
    l7_app_map: spec.app.toLowerCase(),
    event_types: ['flow', 'alert'],
    flow: {
      community_id: communityId(spec.src.ipNum, spec.srcPort, spec.dst.ipNum, spec.dstPort, protoNum),
      event_type: 'flow',
      alerted: true,
    },
    alert: { ...alert },
  };
}
