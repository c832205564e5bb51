// Which flow a packet belongs to, and who started it. Both directions of a conversation share
// one key: (protocol, VLAN, the two address:port ends in a fixed order). ICMP has no ports: echo
// requests and replies between two hosts share one flow; any other message is keyed by its
// type and code. DecodedPacket carries no echo identifier, so concurrent pings between the same
// two hosts are one flow.

import { TcpFlag, type DecodedPacket } from './packet.js';
import type { FlowIdentity } from './flow-state.js';
import { isIcmpEcho, isIcmpEchoReply, looksLikeServerPort, PROTO_TCP } from './well-known.js';

/** The key both directions of the packet's conversation share. */
export function flowKeyOf(p: DecodedPacket): string {
  const sp = p.srcPort ?? 0;
  const dp = p.dstPort ?? 0;
  const srcFirst = p.src < p.dst || (p.src === p.dst && sp <= dp);
  const kind = p.icmp === undefined ? p.protocol : isIcmpEcho(p.protocol, p.icmp.type) ? `${p.protocol}e` : `${p.protocol}t${p.icmp.type}/${p.icmp.code}`;
  const vlan = p.vlan ?? '';
  return srcFirst ? `${kind}|${vlan}|${p.src}|${sp}|${p.dst}|${dp}` : `${kind}|${vlan}|${p.dst}|${dp}|${p.src}|${sp}`;
}

/**
 * Who the flow is between, from its first packet. The initiator (src) is that packet's sender,
 * except when the packet shows it is an answer:
 * - a TCP SYN-ACK: its receiver sent the SYN;
 * - an ICMP echo reply: its receiver sent the request;
 * - when the start was not seen (TCP without SYN, UDP and the rest): a packet from a server-like
 *   port (below 1024 or a known service port) to one that is not comes from the server.
 */
export function identityOf(p: DecodedPacket): FlowIdentity {
  const flipped = answersFirst(p);
  const icmp = p.icmp === undefined ? undefined : { type: p.icmp.type, code: p.icmp.code };
  const sp = p.srcPort ?? 0;
  const dp = p.dstPort ?? 0;
  const id: FlowIdentity = flipped
    ? { protocol: p.protocol, ipVersion: p.ipVersion, srcIp: p.dst, srcPort: dp, dstIp: p.src, dstPort: sp, flipped }
    : { protocol: p.protocol, ipVersion: p.ipVersion, srcIp: p.src, srcPort: sp, dstIp: p.dst, dstPort: dp, flipped };
  if (icmp !== undefined) {
    // ICMP has no ports: the record carries type·256 + code as dst.port, as NetFlow exporters do.
    id.icmp = icmp;
    id.srcPort = 0;
    id.dstPort = icmp.type * 256 + icmp.code;
  }
  if (p.vlan !== undefined) id.vlan = p.vlan;
  return id;
}

function answersFirst(p: DecodedPacket): boolean {
  if (p.icmp !== undefined) return isIcmpEchoReply(p.protocol, p.icmp.type);
  if (p.protocol === PROTO_TCP && p.tcp !== undefined && (p.tcp.flags & TcpFlag.SYN) !== 0) {
    return (p.tcp.flags & TcpFlag.ACK) !== 0;
  }
  if (p.srcPort === undefined || p.dstPort === undefined) return false;
  return looksLikeServerPort(p.protocol, p.srcPort) && !looksLikeServerPort(p.protocol, p.dstPort);
}
