// A DecodedPacket back into the Ethernet frame it was decoded from (802.1Q tag when it has a
// VLAN, IPv4 or IPv6 with a fragment header when fragmented, TCP/UDP/ICMP without options), for
// tests that drive the whole capture path with generated traffic. Checksums are left zero: the
// decoder does not read them.

import { parseAddress } from '../address.js';
import type { CapturedFrame, DecodedPacket } from '../packet.js';

const ETHERNET = 14;
const VLAN_TAG = 4;
const IPV4_HEADER = 20;
const IPV6_HEADER = 40;
const IPV6_FRAGMENT_HEADER = 8;
const IPV6_FRAGMENT = 44;

/** The transport header's bytes (none for a later fragment, which carries only payload). */
function transportHeader(p: DecodedPacket): Uint8Array {
  if (p.fragment === 'later') return new Uint8Array(0);
  if (p.tcp !== undefined) {
    const h = new Uint8Array(20);
    const v = new DataView(h.buffer);
    v.setUint16(0, p.srcPort!);
    v.setUint16(2, p.dstPort!);
    v.setUint32(4, p.tcp.seq);
    v.setUint32(8, p.tcp.ack);
    h[12] = 5 << 4;
    h[13] = p.tcp.flags;
    v.setUint16(14, p.tcp.window);
    return h;
  }
  const h = new Uint8Array(8);
  const v = new DataView(h.buffer);
  if (p.icmp !== undefined) {
    h[0] = p.icmp.type;
    h[1] = p.icmp.code;
  } else {
    v.setUint16(0, p.srcPort!);
    v.setUint16(2, p.dstPort!);
    v.setUint16(4, 8 + p.payloadLength);
  }
  return h;
}

function writeAddress(text: string, frame: Uint8Array, at: number): void {
  const words = new Uint32Array(4);
  const version = parseAddress(text, words, 0);
  const view = new DataView(frame.buffer, frame.byteOffset);
  for (let i = 0; i < (version === 4 ? 1 : 4); i++) view.setUint32(at + 4 * i, words[i]);
}

/**
 * The packet's frame, cut to `snapLength` bytes as a capture would keep it. Its payload must be
 * whole (payload.length === payloadLength): the cut is the capture's, made here.
 */
export function encodeFrame(p: DecodedPacket, snapLength = 262144): CapturedFrame {
  const transport = transportHeader(p);
  const fragmented = p.fragment !== 'none';
  const ipHeader = p.ipVersion === 4 ? IPV4_HEADER : IPV6_HEADER + (fragmented ? IPV6_FRAGMENT_HEADER : 0);
  const link = ETHERNET + (p.vlan === undefined ? 0 : VLAN_TAG);
  const ipLength = ipHeader + transport.length + p.payload.length;
  const frame = new Uint8Array(link + ipLength);
  const view = new DataView(frame.buffer);
  if (p.vlan !== undefined) {
    view.setUint16(12, 0x8100);
    view.setUint16(14, p.vlan);
  }
  view.setUint16(link - 2, p.ipVersion === 4 ? 0x0800 : 0x86dd);
  const ip = link;
  if (p.ipVersion === 4) {
    frame[ip] = 0x45;
    view.setUint16(ip + 2, ipLength);
    view.setUint16(ip + 4, p.fragmentId ?? 0);
    // A later fragment's offset only needs to be non-zero: the decoder reads no more of it.
    view.setUint16(ip + 6, p.fragment === 'first' ? 0x2000 : p.fragment === 'later' ? 0x0010 : 0);
    frame[ip + 8] = p.ttl;
    frame[ip + 9] = p.protocol;
    writeAddress(p.src, frame, ip + 12);
    writeAddress(p.dst, frame, ip + 16);
  } else {
    frame[ip] = 0x60;
    view.setUint16(ip + 4, ipLength - IPV6_HEADER);
    frame[ip + 6] = fragmented ? IPV6_FRAGMENT : p.protocol;
    frame[ip + 7] = p.ttl;
    writeAddress(p.src, frame, ip + 8);
    writeAddress(p.dst, frame, ip + 24);
    if (fragmented) {
      const at = ip + IPV6_HEADER;
      frame[at] = p.protocol;
      view.setUint16(at + 2, p.fragment === 'first' ? 1 : 0x0010 << 3);
      view.setUint32(at + 4, p.fragmentId ?? 0);
    }
  }
  frame.set(transport, ip + ipHeader);
  frame.set(p.payload, ip + ipHeader + transport.length);
  return { tsMicros: p.tsMicros, linkType: 1, wireLength: frame.length, data: frame.subarray(0, Math.min(frame.length, snapLength)) };
}
