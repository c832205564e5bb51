// Decodes one captured frame down to its transport header: link layer, IPv4/IPv6 (fragments marked,
// never reassembled), then TCP, UDP, ICMP or ICMPv6. Bounded by the frame's length; a frame it
// cannot use is counted in `drops` by reason. The meter decodes into one reused PacketHeaders
// (decodeHeaders: no allocation per frame); decodeFrame gives a DecodedPacket of its own.
import { PacketHeaders, type CapturedFrame, type DecodedPacket, type DropCounts, type FrameSpan } from './packet.js';

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
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

function count(drops: DropCounts, reason: string): false {
  drops[reason] = (drops[reason] ?? 0) + 1;
  return false;
}

const u16 = (d: Uint8Array, at: number): number => (d[at] << 8) | d[at + 1];
const u32 = (d: Uint8Array, at: number): number => ((d[at] << 24) | (d[at + 1] << 16) | (d[at + 2] << 8) | d[at + 3]) >>> 0;

/**
 * The frame is d[s, frameEnd) (offsets are into the chunk it was read from). The link decoders set
 * `linkOffset` (where the IP header starts), `linkEtherType` (0 for "read the version nibble") and
 * the packet's VLAN. Module state rather than a result object: nothing is allocated per frame.
 */
let frameEnd = 0;
let linkOffset = 0;
let linkEtherType = 0;

function decodeEthernet(d: Uint8Array, s: number, h: PacketHeaders, drops: DropCounts): boolean {
  if (frameEnd < s + 14) return count(drops, 'truncated_link');
  let etherType = u16(d, s + 12);
  let offset = s + 14;
  for (let tags = 0; isVlanTag(etherType); tags++) {
    if (tags === MAX_VLAN_TAGS) return count(drops, 'too_many_vlan_tags');
    if (frameEnd < offset + 4) return count(drops, 'truncated_link');
    if (tags === 0) h.vlan = u16(d, offset) & 0x0fff;
    etherType = u16(d, offset + 2);
    offset += 4;
  }
  return link(offset, etherType);
}

/** 802.1Q, 802.1ad and the older 0x9100 QinQ tag. */
const isVlanTag = (etherType: number): boolean => etherType === 0x8100 || etherType === 0x88a8 || etherType === 0x9100;

function link(offset: number, etherType: number): true {
  linkOffset = offset;
  linkEtherType = etherType;
  return true;
}

/** BSD loopback: a 4-byte address family in the capturing host's byte order; inet6 is 24, 28 or 30 depending on the BSD. */
function decodeNull(d: Uint8Array, s: number, drops: DropCounts): boolean {
  if (frameEnd < s + 4) return count(drops, 'truncated_link');
  const family = d[s] === 0 && d[s + 1] === 0 ? u16(d, s + 2) : d[s] | (d[s + 1] << 8);
  if (family === 2) return link(s + 4, ETHERTYPE_IPV4);
  if (family === 24 || family === 28 || family === 30) return link(s + 4, ETHERTYPE_IPV6);
  return count(drops, 'not_ip');
}

function decodeLink(frame: FrameSpan, h: PacketHeaders, drops: DropCounts): boolean {
  const d = frame.bytes;
  const s = frame.start;
  switch (frame.linkType) {
    case 1:
      return decodeEthernet(d, s, h, drops);
    case 113: // Linux cooked v1: the protocol is the last field of a 16-byte header
      return frameEnd < s + 16 ? count(drops, 'truncated_link') : link(s + 16, u16(d, s + 14));
    case 276: // Linux cooked v2: the protocol is the first field of a 20-byte header
      return frameEnd < s + 20 ? count(drops, 'truncated_link') : link(s + 20, u16(d, s));
    case 101:
    case 12:
    case 14:
      return link(s, 0);
    case 0:
      return decodeNull(d, s, drops);
    default:
      return count(drops, 'unsupported_link_type');
  }
}

/** The IP layer's fields; the payload is the IP payload until the transport decoder narrows it. */
function setIp(h: PacketHeaders, ipVersion: 4 | 6, protocol: number, ttl: number, ipLength: number, start: number, end: number, payloadLength: number): true {
  h.ipVersion = ipVersion;
  h.protocol = protocol;
  h.ttl = ttl;
  h.ipLength = ipLength;
  // A frame cut inside the IP header chain captured none of the payload: an empty range at its end.
  h.payloadStart = Math.min(start, end);
  h.payloadEnd = end;
  h.payloadLength = payloadLength;
  return true;
}

function decodeIPv4(d: Uint8Array, at: number, h: PacketHeaders, drops: DropCounts): boolean {
  if (frameEnd < at + 20) return count(drops, 'truncated_ip');
  const headerLength = (d[at] & 0x0f) * 4;
  const totalLength = u16(d, at + 2);
  if (headerLength < 20 || totalLength < headerLength) return count(drops, 'bad_ip_header');
  if (frameEnd < at + headerLength) return count(drops, 'truncated_ip');
  const flagsOffset = u16(d, at + 6);
  const moreFragments = (flagsOffset & 0x2000) !== 0;
  const fragmentOffset = flagsOffset & 0x1fff;
  h.fragment = fragmentOffset > 0 ? 'later' : moreFragments ? 'first' : 'none';
  if (h.fragment !== 'none') h.fragmentId = u16(d, at + 4);
  const a = h.addresses;
  a[0] = u32(d, at + 12);
  a[1] = a[2] = a[3] = 0;
  a[4] = u32(d, at + 16);
  a[5] = a[6] = a[7] = 0;
  // Ethernet pads short frames: bytes past the IP total length are not the packet's.
  const end = Math.min(frameEnd, at + totalLength);
  return setIp(h, 4, d[at + 9], d[at + 8], totalLength, at + headerLength, end, totalLength - headerLength);
}

function decodeIPv6(d: Uint8Array, at: number, h: PacketHeaders, drops: DropCounts): boolean {
  if (frameEnd < at + 40) return count(drops, 'truncated_ip');
  const payloadLength = u16(d, at + 4);
  const packetEnd = at + 40 + payloadLength;
  let next = d[at + 6];
  let offset = at + 40;
  for (let walked = 0; h.fragment !== 'later'; walked++) {
    const isExtension = next === IPV6_HOP_BY_HOP || next === IPV6_ROUTING || next === IPV6_DEST_OPTIONS || next === IPV6_FRAGMENT || next === IPV6_AUTH;
    if (!isExtension) break;
    if (walked === MAX_IPV6_EXTENSIONS) return count(drops, 'too_many_ipv6_extensions');
    if (frameEnd < offset + 8) return count(drops, 'truncated_ip');
    const length = next === IPV6_FRAGMENT ? 8 : next === IPV6_AUTH ? (d[offset + 1] + 2) * 4 : (d[offset + 1] + 1) * 8;
    if (offset + length > packetEnd) return count(drops, 'bad_ip_header');
    if (next === IPV6_FRAGMENT) {
      const offsetFlags = u16(d, offset + 2);
      h.fragment = offsetFlags >> 3 > 0 ? 'later' : offsetFlags & 1 ? 'first' : 'none';
      // An atomic fragment (offset 0, no more fragments) is a whole packet.
      if (h.fragment !== 'none') h.fragmentId = u32(d, offset + 4);
    }
    next = d[offset];
    offset += length;
  }
  const a = h.addresses;
  for (let i = 0; i < 4; i++) {
    a[i] = u32(d, at + 8 + 4 * i);
    a[4 + i] = u32(d, at + 24 + 4 * i);
  }
  const end = Math.min(frameEnd, packetEnd);
  return setIp(h, 6, next, d[at + 7], 40 + payloadLength, offset, end, packetEnd - offset);
}

/** Adds the transport header's fields to an IP packet: a first fragment or whole packet only. */
function decodeTransport(d: Uint8Array, h: PacketHeaders, drops: DropCounts): boolean {
  if (h.fragment === 'later') return true;
  const at = h.payloadStart;
  const available = h.payloadEnd - at;
  const wireLength = h.payloadLength;
  let headerLength = 0;
  switch (h.protocol) {
    case PROTO_TCP: {
      if (available < 20) return count(drops, 'truncated_transport');
      headerLength = (d[at + 12] >> 4) * 4;
      if (headerLength < 20 || headerLength > wireLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      setPorts(d, at, h);
      h.hasTcp = true;
      h.tcpFlags = d[at + 13];
      h.tcpSeq = u32(d, at + 4);
      h.tcpAck = u32(d, at + 8);
      h.tcpWindow = u16(d, at + 14);
      h.tcpHeaderLength = headerLength;
      break;
    }
    case PROTO_UDP:
      headerLength = 8;
      if (wireLength < headerLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      setPorts(d, at, h);
      break;
    case PROTO_ICMP:
    case PROTO_ICMPV6:
      // Type, code, checksum and the four bytes every message has (echo id and sequence, MTU, unused).
      headerLength = 8;
      if (wireLength < headerLength) return count(drops, 'bad_transport_header');
      if (available < headerLength) return count(drops, 'truncated_transport');
      h.icmpType = d[at];
      h.icmpCode = d[at + 1];
      break;
    default:
      // Other transports (GRE, SCTP, ESP, ...): no ports; the IP payload is the payload.
      return true;
  }
  h.payloadStart = at + headerLength;
  h.payloadLength = wireLength - headerLength;
  return true;
}

function setPorts(d: Uint8Array, at: number, h: PacketHeaders): void {
  h.hasPorts = true;
  h.srcPort = u16(d, at);
  h.dstPort = u16(d, at + 2);
}

/** Fields a frame may not set go back to "absent" before it is decoded (the IP decoders write every address word). */
function reset(h: PacketHeaders, frame: FrameSpan): void {
  h.tsMicros = frame.tsMicros;
  h.wireLength = frame.wireLength;
  h.data = frame.bytes;
  h.vlan = -1;
  h.fragment = 'none';
  h.fragmentId = -1;
  h.hasPorts = false;
  h.srcPort = 0;
  h.dstPort = 0;
  h.hasTcp = false;
  h.icmpType = -1;
  h.icmpCode = -1;
}

/** One frame into `h` (overwritten whether or not it decodes); false with the reason counted in `drops`. */
export function decodeHeaders(frame: FrameSpan, h: PacketHeaders, drops: DropCounts): boolean {
  reset(h, frame);
  frameEnd = frame.end;
  if (!decodeLink(frame, h, drops)) return false;
  const d = frame.bytes;
  const at = linkOffset;
  let version: number;
  if (linkEtherType === ETHERTYPE_IPV4) version = 4;
  else if (linkEtherType === ETHERTYPE_IPV6) version = 6;
  else if (linkEtherType === 0 && frameEnd > at) version = d[at] >> 4;
  else return count(drops, linkEtherType === 0 ? 'truncated_ip' : 'not_ip');
  if (frameEnd > at && d[at] >> 4 !== version) return count(drops, 'bad_ip_header');
  const ip = version === 4 ? decodeIPv4(d, at, h, drops) : version === 6 ? decodeIPv6(d, at, h, drops) : count(drops, 'not_ip');
  return ip && decodeTransport(d, h, drops);
}

/** One frame to one packet of its own, or undefined with the reason counted in `drops`. */
export function decodeFrame(frame: CapturedFrame, drops: DropCounts): DecodedPacket | undefined {
  const h = new PacketHeaders();
  const span = { tsMicros: frame.tsMicros, linkType: frame.linkType, wireLength: frame.wireLength, bytes: frame.data, start: 0, end: frame.data.length };
  return decodeHeaders(span, h, drops) ? h.toDecodedPacket() : undefined;
}
