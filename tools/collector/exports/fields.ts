// What one NetFlow v9 / IPFIX data record says about a flow, filled field by
// field from the template. Information element numbers are IANA's IPFIX ones
// (NetFlow v9 uses the same numbers below 128). RFC 5103 reverse elements are
// the same numbers under private enterprise 29305.

import { formatIPv4, formatIPv6 } from '../meter/address.js';
import { isPrivateBytes } from '../meter/well-known.js';

const REVERSE_PEN = 29305;

/** The fields a flow record is built from; absent ones stay undefined. */
export interface FlowFields {
  srcIp?: string;
  dstIp?: string;
  /** Whether each address is private (well-known.ts's rule), judged from its bytes as it is read. */
  srcPrivate?: boolean;
  dstPrivate?: boolean;
  ipVersion?: number;
  srcPort?: number;
  dstPort?: number;
  proto?: number;
  bytes: number;
  packets: number;
  reverseBytes: number;
  reversePackets: number;
  tcpFlags: number;
  icmpType?: number;
  icmpCode?: number;
  tos?: number;
  ingress?: number;
  egress?: number;
  srcAs?: number;
  dstAs?: number;
  srcVlan?: number;
  dstVlan?: number;
  nextHop?: string;
  /** Milliseconds since the exporter's boot (v9 / IPFIX flowStart/EndSysUpTime). */
  startUptimeMs?: number;
  endUptimeMs?: number;
  /** Absolute epoch milliseconds (IPFIX flowStart/End*). */
  startMs?: number;
  endMs?: number;
  /** Options records: the exporter's sampling (1 in N, or PSAMP's packets taken and skipped) and boot time. */
  samplingInterval?: number;
  samplingSpace?: number;
  systemInitMs?: number;
}

export function emptyFields(): FlowFields {
  return { bytes: 0, packets: 0, reverseBytes: 0, reversePackets: 0, tcpFlags: 0 };
}

/** Big-endian unsigned integer of 1..8 bytes; above 2^53 it loses precision, never throws. */
export function readUint(buf: Uint8Array, off: number, len: number): number {
  let n = 0;
  for (let i = 0; i < len; i++) n = n * 256 + buf[off + i];
  return n;
}

/** NTP timestamp (RFC 7011 dateTimeMicro/Nano): seconds since 1900 and a binary fraction. */
function ntpMs(buf: Uint8Array, off: number): number {
  return (readUint(buf, off, 4) - 2_208_988_800) * 1000 + Math.floor((readUint(buf, off + 4, 4) / 4294967296) * 1000);
}

/**
 * Applies one field to `f`. Returns false when the field's length cannot hold
 * its element (a hostile or broken template), so the caller counts the record.
 */
export function applyField(f: FlowFields, ie: number, pen: number, buf: Uint8Array, off: number, len: number): boolean {
  if (pen === REVERSE_PEN) {
    if (ie === 1 || ie === 85) f.reverseBytes = readUint(buf, off, len);
    else if (ie === 2 || ie === 86) f.reversePackets = readUint(buf, off, len);
    else if (ie === 6) f.tcpFlags |= readUint(buf, off, len) & 0xff;
    return len <= 8;
  }
  if (pen !== 0) return true; // other vendors' elements: skipped by length
  switch (ie) {
    case 1:
    case 85:
      f.bytes = readUint(buf, off, len);
      return len <= 8;
    case 2:
    case 86:
      f.packets = readUint(buf, off, len);
      return len <= 8;
    case 4:
      f.proto = buf[off];
      return len === 1;
    case 5:
      f.tos = buf[off];
      return len === 1;
    case 6:
      f.tcpFlags |= readUint(buf, off, len) & 0xff;
      return len <= 2;
    case 7:
      f.srcPort = readUint(buf, off, len);
      return len === 2;
    case 11:
      f.dstPort = readUint(buf, off, len);
      return len === 2;
    case 8:
      if (len !== 4) return false;
      f.srcIp = formatIPv4(buf, off);
      f.srcPrivate = isPrivateBytes(buf, off, 4);
      f.ipVersion = 4;
      return true;
    case 12:
      if (len !== 4) return false;
      f.dstIp = formatIPv4(buf, off);
      f.dstPrivate = isPrivateBytes(buf, off, 4);
      f.ipVersion = 4;
      return true;
    case 27:
      if (len !== 16) return false;
      f.srcIp = formatIPv6(buf, off);
      f.srcPrivate = isPrivateBytes(buf, off, 6);
      f.ipVersion = 6;
      return true;
    case 28:
      if (len !== 16) return false;
      f.dstIp = formatIPv6(buf, off);
      f.dstPrivate = isPrivateBytes(buf, off, 6);
      f.ipVersion = 6;
      return true;
    case 15:
      if (len !== 4) return false;
      f.nextHop = formatIPv4(buf, off);
      return true;
    case 62:
      if (len !== 16) return false;
      f.nextHop = formatIPv6(buf, off);
      return true;
    case 60:
      f.ipVersion = buf[off];
      return len === 1;
    case 10:
      f.ingress = readUint(buf, off, len);
      return len <= 4;
    case 14:
      f.egress = readUint(buf, off, len);
      return len <= 4;
    case 16:
      f.srcAs = readUint(buf, off, len);
      return len <= 4;
    case 17:
      f.dstAs = readUint(buf, off, len);
      return len <= 4;
    case 58:
      f.srcVlan = readUint(buf, off, len);
      return len <= 2;
    case 59:
      f.dstVlan = readUint(buf, off, len);
      return len <= 2;
    case 32:
    case 139:
      if (len !== 2) return false;
      f.icmpType = buf[off];
      f.icmpCode = buf[off + 1];
      return true;
    case 176:
    case 178:
      f.icmpType = buf[off];
      return len === 1;
    case 177:
    case 179:
      f.icmpCode = buf[off];
      return len === 1;
    case 21:
      f.endUptimeMs = readUint(buf, off, len);
      return len <= 4;
    case 22:
      f.startUptimeMs = readUint(buf, off, len);
      return len <= 4;
    case 150:
      f.startMs = readUint(buf, off, len) * 1000;
      return len === 4;
    case 151:
      f.endMs = readUint(buf, off, len) * 1000;
      return len === 4;
    case 152:
      f.startMs = readUint(buf, off, len);
      return len === 8;
    case 153:
      f.endMs = readUint(buf, off, len);
      return len === 8;
    case 154:
    case 156:
      if (len !== 8) return false;
      f.startMs = ntpMs(buf, off);
      return true;
    case 155:
    case 157:
      if (len !== 8) return false;
      f.endMs = ntpMs(buf, off);
      return true;
    case 160:
      f.systemInitMs = readUint(buf, off, len);
      return len === 8;
    case 34:
    case 50:
    case 305:
      f.samplingInterval = readUint(buf, off, len);
      return len <= 4;
    case 306:
      f.samplingSpace = readUint(buf, off, len);
      return len <= 4;
    default:
      return true;
  }
}
