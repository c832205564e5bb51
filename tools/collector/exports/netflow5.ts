// NetFlow v5: a fixed 24-byte header and up to 30 fixed 48-byte records.

import { formatIPv4 } from '../meter/address.js';
import { isPrivateBytes } from '../meter/well-known.js';
import { emptyFields, readUint, type FlowFields } from './fields.js';

const V5_HEADER = 24;
const V5_RECORD = 48;
const V5_MAX_RECORDS = 30;

export interface V5Header {
  count: number;
  sysUptimeMs: number;
  exportMs: number;
  sequence: number;
  /** engine_type << 8 | engine_id: v5's nearest thing to an observation domain. */
  engine: number;
  /** 1 when unsampled. */
  samplingInterval: number;
}

/** The header, or why the datagram is unusable. */
export function readV5Header(b: Uint8Array): V5Header | 'truncated_header' | 'bad_record_count' {
  if (b.length < V5_HEADER) return 'truncated_header';
  const count = readUint(b, 2, 2);
  if (count === 0 || count > V5_MAX_RECORDS || b.length < V5_HEADER + count * V5_RECORD) return 'bad_record_count';
  const interval = readUint(b, 22, 2) & 0x3fff;
  return {
    count,
    sysUptimeMs: readUint(b, 4, 4),
    exportMs: readUint(b, 8, 4) * 1000 + Math.floor(readUint(b, 12, 4) / 1e6),
    sequence: readUint(b, 16, 4),
    engine: readUint(b, 20, 2),
    samplingInterval: Math.max(1, interval),
  };
}

/** Record `i`; its first/last stay uptime-relative for the caller to place in time. */
export function readV5Record(b: Uint8Array, i: number): FlowFields {
  const o = V5_HEADER + i * V5_RECORD;
  const f = emptyFields();
  f.srcIp = formatIPv4(b, o);
  f.dstIp = formatIPv4(b, o + 4);
  f.srcPrivate = isPrivateBytes(b, o, 4);
  f.dstPrivate = isPrivateBytes(b, o + 4, 4);
  f.ipVersion = 4;
  f.nextHop = formatIPv4(b, o + 8);
  f.ingress = readUint(b, o + 12, 2);
  f.egress = readUint(b, o + 14, 2);
  f.packets = readUint(b, o + 16, 4);
  f.bytes = readUint(b, o + 20, 4);
  f.startUptimeMs = readUint(b, o + 24, 4);
  f.endUptimeMs = readUint(b, o + 28, 4);
  f.srcPort = readUint(b, o + 32, 2);
  f.dstPort = readUint(b, o + 34, 2);
  f.tcpFlags = b[o + 37];
  f.proto = b[o + 38];
  f.tos = b[o + 39];
  f.srcAs = readUint(b, o + 40, 2);
  f.dstAs = readUint(b, o + 42, 2);
  return f;
}
