// Which flow a packet belongs to, and who started it. Both directions of a conversation share
// one key: (protocol, VLAN, the two address:port ends in a fixed order), which the flow index
// writes. ICMP has no ports: echo requests and replies between two hosts share one flow; any
// other message is keyed by its type and code. The packet carries no echo identifier, so
// concurrent pings between the same two hosts are one flow.

import { formatAddress } from './address.js';
import { TcpFlag, type PacketHeaders } from './packet.js';
import type { FlowIdentity } from './flow-state.js';
import { isIcmpEcho, isIcmpEchoReply, isPrivateAt, looksLikeServerPort, PROTO_TCP } from './well-known.js';

/**
 * The first word of a packet's flow key (wasm/flow-index.ts lays out the rest): the protocol, and
 * for ICMP whether it is an echo (request and reply share a flow) or else its type and code.
 */
export function flowKind(h: PacketHeaders): number {
  if (h.icmpType < 0) return h.protocol;
  return isIcmpEcho(h.protocol, h.icmpType) ? h.protocol | 0x1000000 : h.protocol | 0x2000000 | (h.icmpType << 8) | (h.icmpCode << 16);
}

/**
 * Who the flow is between, from its first packet. The initiator (src) is that packet's sender,
 * except when the packet shows it is an answer:
 * - a TCP SYN-ACK: its receiver sent the SYN;
 * - an ICMP echo reply: its receiver sent the request;
 * - when the start was not seen (TCP without SYN, UDP and the rest): a packet from a server-like
 *   port (below 1024 or a known service port) to one that is not comes from the server.
 * The addresses become text here, once per flow.
 */
export function identityOf(h: PacketHeaders): FlowIdentity {
  const flipped = answersFirst(h);
  const src = formatAddress(h.addresses, 0, h.ipVersion);
  const dst = formatAddress(h.addresses, 4, h.ipVersion);
  const srcPrivate = isPrivateAt(h.addresses, 0, h.ipVersion);
  const dstPrivate = isPrivateAt(h.addresses, 4, h.ipVersion);
  const sp = h.srcPort;
  const dp = h.dstPort;
  const id: FlowIdentity = flipped
    ? {
        protocol: h.protocol,
        ipVersion: h.ipVersion,
        srcIp: dst,
        srcPort: dp,
        dstIp: src,
        dstPort: sp,
        srcPrivate: dstPrivate,
        dstPrivate: srcPrivate,
        flipped,
      }
    : { protocol: h.protocol, ipVersion: h.ipVersion, srcIp: src, srcPort: sp, dstIp: dst, dstPort: dp, srcPrivate, dstPrivate, flipped };
  if (h.icmpType >= 0) {
    // ICMP has no ports: the record carries type·256 + code as dst.port, as NetFlow exporters do.
    id.icmp = { type: h.icmpType, code: h.icmpCode };
    id.srcPort = 0;
    id.dstPort = h.icmpType * 256 + h.icmpCode;
  }
  if (h.vlan >= 0) id.vlan = h.vlan;
  return id;
}

function answersFirst(h: PacketHeaders): boolean {
  if (h.icmpType >= 0) return isIcmpEchoReply(h.protocol, h.icmpType);
  if (h.protocol === PROTO_TCP && h.hasTcp && (h.tcpFlags & TcpFlag.SYN) !== 0) return (h.tcpFlags & TcpFlag.ACK) !== 0;
  if (!h.hasPorts) return false;
  return looksLikeServerPort(h.protocol, h.srcPort) && !looksLikeServerPort(h.protocol, h.dstPort);
}
