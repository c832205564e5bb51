// Decodes one captured frame down to its transport header: link layer, IPv4/IPv6 (fragments marked,
// never reassembled), then TCP, UDP, ICMP or ICMPv6. Pure and bounded by the frame's length; a
// frame it cannot use is counted in `drops` by reason and gives undefined.
import { formatIPv6 } from './address.js';
import type { CapturedFrame, DecodedPacket, DropCounts } from './packet.js';

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const VLAN_ETHERTYPES = new Set([0x8100, 0x88a8, 0x9100]);
/** More stacked tags than this is not a real network's frame. */
const MAX_VLAN_TAGS = 4;
/** Nor is a longer chain of IPv6 extension headers. */
const MAX_IPV6_EXTENSIONS = 8;
const PROTO_ICMP = 1;
const PROTO_TCP = 6;
const PROTO_UDP = 17;
const PROTO_ICMPV6 = 58;
const IPV6_HOP_BY_HOP = 0;
const IPV6_ROUTING = 43;
const IPV6_FRAGMENT = 44;
const IPV6_AUTH = 51;
const IPV6_DEST_OPTIONS = 60;

function count(drops: DropCounts, reason: string): undefined {
  drops[reason] = (drops[reason] ?? 0) + 1;
  return undefined;
}

const u16 = (d: Uint8Array, at: number): number => (d[at] << 8) | d[at + 1];
const u32 = (d: Uint8Array, at: number): number => ((d[at] << 24) | (d[at + 1] << 16) | (d[at + 2] << 8) | d[at + 3]) >>> 0;

/** Where the IP header starts and what the link says it is: an ethertype, or 0 for "read the version nibble". */
interface LinkResult {
  offset: number;
  etherType: number;
  vlan?: number;
}

function decodeEthernet(d: Uint8Array, drops: DropCounts): LinkResult | undefined {
  if (d.length < 14) return count(drops, 'truncated_link');
  let etherType = u16(d, 12);
  let offset = 14;
  let vlan: number | undefined;
  for (let tags = 0; VLAN_ETHERTYPES.has(etherType); tags++) {
    if (tags === MAX_VLAN_TAGS) return count(drops, 'too_many_vlan_tags');
    if (d.length < offset + 4) return count(drops, 'truncated_link');
    vlan ??= u16(d, offset) & 0x0fff;
    etherType = u16(d, offset + 2);
    offset += 4;
  }
  return { offset, etherType, vlan };
}

/** BSD loopback: a 4-byte address family in the capturing host's byte order; inet6 is 24, 28 or 30 depending on the BSD. */
function decodeNull(d: Uint8Array, drops: DropCounts): LinkResult | undefined {
  if (d.length < 4) return count(drops, 'truncated_link');
  const family = d[0] === 0 && d[1] === 0 ? u16(d, 2) : d[0] | (d[1] << 8);
  if (family === 2) return { offset: 4, etherType: ETHERTYPE_IPV4 };
  if (family === 24 || family === 28 || family === 30) return { offset: 4, etherType: ETHERTYPE_IPV6 };
  return count(drops, 'not_ip');
}

function decodeLink(frame: CapturedFrame, drops: DropCounts): LinkResult | undefined {
  const d = frame.data;
  switch (frame.linkType) {
    case 1:
      return decodeEthernet(d, drops);
    case 113: // Linux cooked v1: the protocol is the last field of a 16-byte header
      return d.length < 16 ? count(drops, 'truncated_link') : { offset: 16, etherType: u16(d, 14) };
    case 276: // Linux cooked v2: the protocol is the first field of a 20-byte header
      return d.length < 20 ? count(drops, 'truncated_link') : { offset: 20, etherType: u16(d, 0) };
    case 101:
    case 12:
    case 14:
      return { offset: 0, etherType: 0 };
    case 0:
      return decodeNull(d, drops);
    default:
      return count(drops, 'unsupported_link_type');
  }
}

/**
 * The packet as the IP layer sees it, payload = the IP payload; the transport decoder then narrows
 * it. Every field is present, undefined or not, so that all packets share one object shape (a
 * spread or a field added later makes V8 fall back to slow objects: ten times slower here).
 */
function ipPacket(frame: CapturedFrame, ipVersion: 4 | 6, src: string, dst: string, protocol: number, ttl: number, ipLength: number,
  fragment: DecodedPacket['fragment'], fragmentId: number | undefined, start: number, end: number, payloadLength: number): DecodedPacket {
  return {
    tsMicros: frame.tsMicros, wireLength: frame.wireLength, vlan: undefined, ipVersion, src, dst, protocol, ttl, ipLength, fragment, fragmentId,
    srcPort: undefined, dstPort: undefined, tcp: undefined, icmp: undefined, payload: frame.data.subarray(start, end), payloadLength,
  };
}

function decodeIPv4(frame: CapturedFrame, at: number, drops: DropCounts): DecodedPacket | undefined {
  const d = frame.data;
  if (d.length < at + 20) return count(drops, 'truncated_ip');
  const headerLength = (d[at] & 0x0f) * 4;
  const totalLength = u16(d, at + 2);
  if (headerLength < 20 || totalLength < headerLength) return count(drops, 'bad_ip_header');
  if (d.length < at + headerLength) return count(drops, 'truncated_ip');
  const flagsOffset = u16(d, at + 6);
  const moreFragments = (flagsOffset & 0x2000) !== 0;
  const fragmentOffset = flagsOffset & 0x1fff;
  const fragment = fragmentOffset > 0 ? 'later' : moreFragments ? 'first' : 'none';
  const src = `${d[at + 12]}.${d[at + 13]}.${d[at + 14]}.${d[at + 15]}`;
  const dst = `${d[at + 16]}.${d[at + 17]}.${d[at + 18]}.${d[at + 19]}`;
  const fragmentId = fragment === 'none' ? undefined : u16(d, at + 4);
  // Ethernet pads short frames: bytes past the IP total length are not the packet's.
  const end = Math.min(d.length, at + totalLength);
  return ipPacket(frame, 4, src, dst, d[at + 9], d[at + 8], totalLength, fragment, fragmentId, at + headerLength, end, totalLength - headerLength);
}

function decodeIPv6(frame: CapturedFrame, at: number, drops: DropCounts): DecodedPacket | undefined {
  const d = frame.data;
  if (d.length < at + 40) return count(drops, 'truncated_ip');
  const payloadLength = u16(d, at + 4);
  const packetEnd = at + 40 + payloadLength;
  let next = d[at + 6];
  let offset = at + 40;
  let fragment: DecodedPacket['fragment'] = 'none';
  let fragmentId: number | undefined;
  for (let walked = 0; fragment !== 'later'; walked++) {
    const isExtension = next === IPV6_HOP_BY_HOP || next === IPV6_ROUTING || next === IPV6_DEST_OPTIONS || next === IPV6_FRAGMENT || next === IPV6_AUTH;
    if (!isExtension) break;
    if (walked === MAX_IPV6_EXTENSIONS) return count(drops, 'too_many_ipv6_extensions');
    if (d.length < offset + 8) return count(drops, 'truncated_ip');
    const length = next === IPV6_FRAGMENT ? 8 : next === IPV6_AUTH ? (d[offset + 1] + 2) * 4 : (d[offset + 1] + 1) * 8;
    if (offset + length > packetEnd) return count(drops, 'bad_ip_header');
    if (next === IPV6_FRAGMENT) {
      const offsetFlags = u16(d, offset + 2);
      fragment = offsetFlags >> 3 > 0 ? 'later' : offsetFlags & 1 ? 'first' : 'none';
      // An atomic fragment (offset 0, no more fragments) is a whole packet.
      if (fragment !== 'none') fragmentId = u32(d, offset + 4);
    }
    next = d[offset];
    offset += length;
  }
  const end = Math.min(d.length, packetEnd);
  return ipPacket(frame, 6, formatIPv6(d, at + 8), formatIPv6(d, at + 24), next, d[at + 7], 40 + payloadLength, fragment, fragmentId, offset, end, packetEnd - offset);
}

/** Adds the transport header's fields to an IP packet: a first fragment or whole packet only. */
function decodeTransport(decoded: DecodedPacket, drops: DropCounts): DecodedPacket | undefined {
  if (decoded.fragment === 'later') return decoded;
  const { payload: d, payloadLength: wireLength } = decoded;
  const available = d.length;
  let headerLength = 0;
  switch (decoded.protocol) {
    case PROTO_TCP: {
      if (available < 20) return count(drops, 'truncated_transport');
      headerLength = (d[12] >> 4) * 4;
      if (headerLength < 20 || headerLength > wireLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      decoded.srcPort = u16(d, 0);
      decoded.dstPort = u16(d, 2);
      decoded.tcp = { flags: d[13], seq: u32(d, 4), ack: u32(d, 8), window: u16(d, 14), headerLength };
      break;
    }
    case PROTO_UDP:
      headerLength = 8;
      if (wireLength < headerLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      decoded.srcPort = u16(d, 0);
      decoded.dstPort = u16(d, 2);
      break;
    case PROTO_ICMP:
    case PROTO_ICMPV6:
      // Type, code, checksum and the four bytes every message has (echo id and sequence, MTU, unused).
      headerLength = 8;
      if (wireLength < headerLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      decoded.icmp = { type: d[0], code: d[1] };
      break;
    default:
      // Other transports (GRE, SCTP, ESP, ...): no ports; the IP payload is the payload.
      return decoded;
  }
  decoded.payload = d.subarray(headerLength);
  decoded.payloadLength = wireLength - headerLength;
  return decoded;
}

/** One frame to one packet, or undefined with the reason counted in `drops`. */
export function decodeFrame(frame: CapturedFrame, drops: DropCounts): DecodedPacket | undefined {
  const link = decodeLink(frame, drops);
  if (link === undefined) return undefined;
  const d = frame.data;
  let version: number;
  if (link.etherType === ETHERTYPE_IPV4) version = 4;
  else if (link.etherType === ETHERTYPE_IPV6) version = 6;
  else if (link.etherType === 0 && d.length > link.offset) version = d[link.offset] >> 4;
  else return count(drops, link.etherType === 0 ? 'truncated_ip' : 'not_ip');
  if (d.length > link.offset && d[link.offset] >> 4 !== version) return count(drops, 'bad_ip_header');
  const ip = version === 4 ? decodeIPv4(frame, link.offset, drops) : version === 6 ? decodeIPv6(frame, link.offset, drops) : count(drops, 'not_ip');
  if (ip === undefined) return undefined;
  const packet = decodeTransport(ip, drops);
  if (packet !== undefined && link.vlan !== undefined) packet.vlan = link.vlan;
  return packet;
}
