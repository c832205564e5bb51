// The frame decoder in WebAssembly: ../decode.ts says what it reads and why. A frame lies in this
// memory (the metered chunk, or a frame JavaScript copied to RECORD); decode() writes what it
// found into the header words at HEADERS, which JavaScript reads through PacketHeaders
// (../packet.ts) without copying them out, and returns 0 or the reason it dropped the frame.

import { ENTROPY_END } from './payload-entropy';

/** Header words (see HEADER in ../packet.ts, which must match). */
export const HEADERS: usize = ENTROPY_END;
export const VLAN: usize = 0;
export const IP_VERSION: usize = 4;
export const ADDRESSES: usize = 8; // 8 words: source then destination
export const PROTOCOL: usize = 40;
export const TTL: usize = 44;
export const IP_LENGTH: usize = 48;
export const FRAGMENT: usize = 52; // 0 none, 1 first, 2 later
export const HAS_PORTS: usize = 56;
export const SRC_PORT: usize = 60;
export const DST_PORT: usize = 64;
export const HAS_TCP: usize = 68;
export const TCP_FLAGS: usize = 72;
export const TCP_WINDOW: usize = 76;
export const TCP_HEADER_LENGTH: usize = 80;
export const ICMP_TYPE: usize = 84;
export const ICMP_CODE: usize = 88;
export const PAYLOAD_START: usize = 92;
export const PAYLOAD_END: usize = 96;
export const PAYLOAD_LENGTH: usize = 100;
export const FRAGMENT_ID: usize = 104; // f64, -1 when not a fragment
export const TCP_SEQ: usize = 112; // f64
export const TCP_ACK: usize = 120; // f64
export const HEADER_BYTES: usize = 128;
/** Where JavaScript copies a frame that is not in the memory (at most a record's 256 KiB + 64). */
export const RECORD: usize = HEADERS + HEADER_BYTES;
export const RECORD_BYTES: usize = 256 * 1024 + 64;
/** Where the metered chunks start. */
export const CHUNKS: usize = (RECORD + RECORD_BYTES + 63) & ~(<usize>63);

// Drop reasons, in the order of DECODE_DROPS in ../decode.ts.
const TRUNCATED_LINK: u32 = 1;
const TOO_MANY_VLAN_TAGS: u32 = 2;
const NOT_IP: u32 = 3;
const UNSUPPORTED_LINK_TYPE: u32 = 4;
const TRUNCATED_IP: u32 = 5;
const BAD_IP_HEADER: u32 = 6;
const TOO_MANY_IPV6_EXTENSIONS: u32 = 7;
const TRUNCATED_TRANSPORT: u32 = 8;
const BAD_TRANSPORT_HEADER: u32 = 9;

const ETHERTYPE_IPV4: u32 = 0x0800;
const ETHERTYPE_IPV6: u32 = 0x86dd;
const MAX_VLAN_TAGS: u32 = 4;
const MAX_IPV6_EXTENSIONS: u32 = 8;

function u16(at: usize): u32 {
  return ((<u32>load<u8>(at)) << 8) | (<u32>load<u8>(at + 1));
}
function u32be(at: usize): u32 {
  return bswap<u32>(load<u32>(at));
}
function set(field: usize, value: i32): void {
  store<i32>(HEADERS + field, value);
}
function get(field: usize): i32 {
  return load<i32>(HEADERS + field);
}

/** Where the IP header starts and its EtherType (0: read the version nibble), set by the link decoders. */
let frameEnd: usize = 0;
let linkOffset: usize = 0;
let linkEtherType: u32 = 0;

function link(offset: usize, etherType: u32): u32 {
  linkOffset = offset;
  linkEtherType = etherType;
  return 0;
}

function decodeEthernet(s: usize): u32 {
  if (frameEnd < s + 14) return TRUNCATED_LINK;
  let etherType = u16(s + 12);
  let offset = s + 14;
  for (let tags: u32 = 0; etherType == 0x8100 || etherType == 0x88a8 || etherType == 0x9100; tags++) {
    if (tags == MAX_VLAN_TAGS) return TOO_MANY_VLAN_TAGS;
    if (frameEnd < offset + 4) return TRUNCATED_LINK;
    if (tags == 0) set(VLAN, <i32>(u16(offset) & 0x0fff));
    etherType = u16(offset + 2);
    offset += 4;
  }
  return link(offset, etherType);
}

function decodeNull(s: usize): u32 {
  if (frameEnd < s + 4) return TRUNCATED_LINK;
  const family = load<u8>(s) == 0 && load<u8>(s + 1) == 0 ? u16(s + 2) : (<u32>load<u8>(s)) | ((<u32>load<u8>(s + 1)) << 8);
  if (family == 2) return link(s + 4, ETHERTYPE_IPV4);
  if (family == 24 || family == 28 || family == 30) return link(s + 4, ETHERTYPE_IPV6);
  return NOT_IP;
}

function decodeLink(s: usize, linkType: u32): u32 {
  switch (linkType) {
    case 1:
      return decodeEthernet(s);
    case 113:
      return frameEnd < s + 16 ? TRUNCATED_LINK : link(s + 16, u16(s + 14));
    case 276:
      return frameEnd < s + 20 ? TRUNCATED_LINK : link(s + 20, u16(s));
    case 101:
    case 12:
    case 14:
      return link(s, 0);
    case 0:
      return decodeNull(s);
    default:
      return UNSUPPORTED_LINK_TYPE;
  }
}

function min(a: usize, b: usize): usize {
  return a < b ? a : b;
}

function setIp(ipVersion: i32, protocol: u32, ttl: u32, ipLength: u32, start: usize, end: usize, payloadLength: i32): u32 {
  set(IP_VERSION, ipVersion);
  set(PROTOCOL, <i32>protocol);
  set(TTL, <i32>ttl);
  set(IP_LENGTH, <i32>ipLength);
  set(PAYLOAD_START, <i32>min(start, end));
  set(PAYLOAD_END, <i32>end);
  set(PAYLOAD_LENGTH, payloadLength);
  return 0;
}

function decodeIPv4(at: usize): u32 {
  if (frameEnd < at + 20) return TRUNCATED_IP;
  const headerLength = <usize>(load<u8>(at) & 0x0f) * 4;
  const totalLength = u16(at + 2);
  if (headerLength < 20 || <usize>totalLength < headerLength) return BAD_IP_HEADER;
  if (frameEnd < at + headerLength) return TRUNCATED_IP;
  const flagsOffset = u16(at + 6);
  const fragment: i32 = (flagsOffset & 0x1fff) > 0 ? 2 : (flagsOffset & 0x2000) != 0 ? 1 : 0;
  set(FRAGMENT, fragment);
  if (fragment != 0) store<f64>(HEADERS + FRAGMENT_ID, <f64>u16(at + 4));
  store<u32>(HEADERS + ADDRESSES, u32be(at + 12));
  store<u32>(HEADERS + ADDRESSES + 4, 0);
  store<u64>(HEADERS + ADDRESSES + 8, 0);
  store<u32>(HEADERS + ADDRESSES + 16, u32be(at + 16));
  store<u32>(HEADERS + ADDRESSES + 20, 0);
  store<u64>(HEADERS + ADDRESSES + 24, 0);
  const end = min(frameEnd, at + <usize>totalLength);
  return setIp(4, load<u8>(at + 9), load<u8>(at + 8), totalLength, at + headerLength, end, <i32>totalLength - <i32>headerLength);
}

function decodeIPv6(at: usize): u32 {
  if (frameEnd < at + 40) return TRUNCATED_IP;
  const payloadLength = u16(at + 4);
  const packetEnd = at + 40 + <usize>payloadLength;
  let next = <u32>load<u8>(at + 6);
  let offset = at + 40;
  for (let walked: u32 = 0; get(FRAGMENT) != 2; walked++) {
    const isExtension = next == 0 || next == 43 || next == 60 || next == 44 || next == 51;
    if (!isExtension) break;
    if (walked == MAX_IPV6_EXTENSIONS) return TOO_MANY_IPV6_EXTENSIONS;
    if (frameEnd < offset + 8) return TRUNCATED_IP;
    const length: usize = next == 44 ? 8 : next == 51 ? (<usize>load<u8>(offset + 1) + 2) * 4 : (<usize>load<u8>(offset + 1) + 1) * 8;
    if (offset + length > packetEnd) return BAD_IP_HEADER;
    if (next == 44) {
      const offsetFlags = u16(offset + 2);
      const fragment: i32 = offsetFlags >> 3 > 0 ? 2 : (offsetFlags & 1) != 0 ? 1 : 0;
      set(FRAGMENT, fragment);
      // An atomic fragment (offset 0, no more fragments) is a whole packet.
      if (fragment != 0) store<f64>(HEADERS + FRAGMENT_ID, <f64>u32be(offset + 4));
    }
    next = load<u8>(offset);
    offset += length;
  }
  for (let i: usize = 0; i < 16; i += 4) {
    store<u32>(HEADERS + ADDRESSES + i, u32be(at + 8 + i));
    store<u32>(HEADERS + ADDRESSES + 16 + i, u32be(at + 24 + i));
  }
  const end = min(frameEnd, packetEnd);
  return setIp(6, next, load<u8>(at + 7), 40 + payloadLength, offset, end, <i32>(packetEnd - offset));
}

function decodeTransport(): u32 {
  if (get(FRAGMENT) == 2) return 0;
  const at = <usize>get(PAYLOAD_START);
  const available = get(PAYLOAD_END) - <i32>at;
  const wireLength = get(PAYLOAD_LENGTH);
  let headerLength: i32 = 0;
  switch (get(PROTOCOL)) {
    case 6: {
      if (available < 20) return TRUNCATED_TRANSPORT;
      headerLength = <i32>(load<u8>(at + 12) >> 4) * 4;
      if (headerLength < 20 || headerLength > wireLength) return BAD_TRANSPORT_HEADER;
      if (available < headerLength) return TRUNCATED_TRANSPORT;
      setPorts(at);
      set(HAS_TCP, 1);
      set(TCP_FLAGS, load<u8>(at + 13));
      store<f64>(HEADERS + TCP_SEQ, <f64>u32be(at + 4));
      store<f64>(HEADERS + TCP_ACK, <f64>u32be(at + 8));
      set(TCP_WINDOW, <i32>u16(at + 14));
      set(TCP_HEADER_LENGTH, headerLength);
      break;
    }
    case 17:
      headerLength = 8;
      if (wireLength < headerLength) return BAD_TRANSPORT_HEADER;
      if (available < headerLength) return TRUNCATED_TRANSPORT;
      setPorts(at);
      break;
    case 1:
    case 58:
      // Type, code, checksum and the four bytes every message has (echo id and sequence, MTU, unused).
      headerLength = 8;
      if (wireLength < headerLength) return BAD_TRANSPORT_HEADER;
      if (available < headerLength) return TRUNCATED_TRANSPORT;
      set(ICMP_TYPE, load<u8>(at));
      set(ICMP_CODE, load<u8>(at + 1));
      break;
    default:
      // Other transports (GRE, SCTP, ESP, ...): no ports; the IP payload is the payload.
      return 0;
  }
  set(PAYLOAD_START, <i32>at + headerLength);
  set(PAYLOAD_LENGTH, wireLength - headerLength);
  return 0;
}

function setPorts(at: usize): void {
  set(HAS_PORTS, 1);
  set(SRC_PORT, <i32>u16(at));
  set(DST_PORT, <i32>u16(at + 2));
}

/** Fields a frame may not set go back to "absent" (the IP decoders write every address word). */
function reset(): void {
  set(VLAN, -1);
  set(FRAGMENT, 0);
  store<f64>(HEADERS + FRAGMENT_ID, -1);
  set(HAS_PORTS, 0);
  set(SRC_PORT, 0);
  set(DST_PORT, 0);
  set(HAS_TCP, 0);
  set(ICMP_TYPE, -1);
  set(ICMP_CODE, -1);
}

/** Decodes the frame memory[start, end) of link type `linkType` into the header words; 0 or a drop reason. */
export function decode(start: usize, end: usize, linkType: u32): u32 {
  reset();
  frameEnd = end;
  const linked = decodeLink(start, linkType);
  if (linked != 0) return linked;
  const at = linkOffset;
  let version: u32;
  if (linkEtherType == ETHERTYPE_IPV4) version = 4;
  else if (linkEtherType == ETHERTYPE_IPV6) version = 6;
  else if (linkEtherType == 0 && frameEnd > at) version = (<u32>load<u8>(at)) >> 4;
  else return linkEtherType == 0 ? TRUNCATED_IP : NOT_IP;
  if (frameEnd > at && (<u32>load<u8>(at)) >> 4 != version) return BAD_IP_HEADER;
  const ip = version == 4 ? decodeIPv4(at) : version == 6 ? decodeIPv6(at) : NOT_IP;
  return ip != 0 ? ip : decodeTransport();
}
