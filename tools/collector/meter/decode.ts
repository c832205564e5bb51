// Decodes one captured frame down to its transport header: link layer (Ethernet with up to 4
// VLAN tags, Linux cooked v1 and v2, raw IP, BSD loopback), IPv4/IPv6 (fragments marked, never
// reassembled; at most 8 IPv6 extension headers), then TCP, UDP, ICMP or ICMPv6. Bounded by the
// frame's length; a frame it cannot use is counted in `drops` by reason (DECODE_DROPS). The
// decoder is WebAssembly (wasm/decode.ts): a flow table decodes each frame where it lies in its
// memory and counts it there; these functions decode a frame on their own, for tools and tests.
import { sharedMeterCore } from './meter-core.js';
import { PacketHeaders, type CapturedFrame, type DecodedPacket, type DropCounts, type FrameSpan } from './packet.js';

/** One frame into `h` (overwritten when it decodes); false with the reason counted in `drops`. */
export function decodeHeaders(frame: FrameSpan, h: PacketHeaders, drops: DropCounts): boolean {
  return sharedMeterCore().decode(frame, h, drops);
}

/** One frame to one packet of its own, or undefined with the reason counted in `drops`. */
export function decodeFrame(frame: CapturedFrame, drops: DropCounts): DecodedPacket | undefined {
  const h = new PacketHeaders();
  const span = { tsMicros: frame.tsMicros, linkType: frame.linkType, wireLength: frame.wireLength, bytes: frame.data, start: 0, end: frame.data.length };
  if (!decodeHeaders(span, h, drops)) return undefined;
  const packet = h.toDecodedPacket();
  // Its own bytes: the headers' payload is a range of the decoder's memory, which the next frame overwrites.
  packet.payload = packet.payload.slice();
  return packet;
}
