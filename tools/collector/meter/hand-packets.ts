// DecodedPackets built by hand, as packet.ts specifies them, for the flow table's tests and its
// benchmark: what the decoder yields for Ethernet + IPv4/IPv6 + TCP/UDP/ICMP frames without
// options (TCP headers of 20 bytes, IPv4 headers of 20, IPv6 of 40, Ethernet of 14).

import { TcpFlag, type DecodedPacket } from './packet.js';

const ETHERNET = 14;
const TCP_HEADER = 20;
const UDP_HEADER = 8;
const ICMP_HEADER = 8;

export interface Ends {
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  vlan?: number;
}

function ipVersionOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

function base(ts: number, ends: Ends, protocol: number, transportLength: number, payload: Uint8Array): DecodedPacket {
  const ipVersion = ipVersionOf(ends.src);
  const ipLength = (ipVersion === 4 ? 20 : 40) + transportLength + payload.length;
  const p: DecodedPacket = {
    tsMicros: ts,
    wireLength: ipLength + ETHERNET + (ends.vlan === undefined ? 0 : 4),
    ipVersion,
    src: ends.src,
    dst: ends.dst,
    protocol,
    ttl: 64,
    ipLength,
    fragment: 'none',
    payload,
    payloadLength: payload.length,
  };
  if (ends.vlan !== undefined) p.vlan = ends.vlan;
  return p;
}

export function reversed(ends: Ends): Ends {
  return { ...ends, src: ends.dst, dst: ends.src, srcPort: ends.dstPort, dstPort: ends.srcPort };
}

export function tcpPacket(
  ts: number,
  ends: Ends,
  flags: number,
  seq: number,
  ack: number,
  payload: Uint8Array = new Uint8Array(0),
  window = 64240,
): DecodedPacket {
  const p = base(ts, ends, 6, TCP_HEADER, payload);
  p.srcPort = ends.srcPort;
  p.dstPort = ends.dstPort;
  p.tcp = { flags, seq: seq >>> 0, ack: ack >>> 0, window, headerLength: TCP_HEADER };
  return p;
}

export function udpPacket(ts: number, ends: Ends, payload: Uint8Array): DecodedPacket {
  const p = base(ts, ends, 17, UDP_HEADER, payload);
  p.srcPort = ends.srcPort;
  p.dstPort = ends.dstPort;
  return p;
}

export function icmpPacket(ts: number, ends: Ends, type: number, code: number, payload: Uint8Array = new Uint8Array(56)): DecodedPacket {
  const p = base(ts, ends, ipVersionOf(ends.src) === 4 ? 1 : 58, ICMP_HEADER, payload);
  p.icmp = { type, code };
  return p;
}

/** A TCP connection's segments, keeping both sides' sequence numbers as a real stack would. */
export class TcpConversation {
  private clientSeq: number;
  private serverSeq: number;

  constructor(
    readonly client: Ends,
    clientIsn = 1000,
    serverIsn = 5000,
  ) {
    this.clientSeq = clientIsn;
    this.serverSeq = serverIsn;
  }

  /** One segment; SYN and FIN take a sequence number, as does every payload byte. */
  segment(ts: number, fromClient: boolean, flags: number, payload: Uint8Array = new Uint8Array(0)): DecodedPacket {
    const ends = fromClient ? this.client : reversed(this.client);
    const seq = fromClient ? this.clientSeq : this.serverSeq;
    const ack = fromClient ? this.serverSeq : this.clientSeq;
    const p = tcpPacket(ts, ends, flags, seq, (flags & TcpFlag.ACK) !== 0 ? ack : 0, payload);
    const used = payload.length + ((flags & TcpFlag.SYN) !== 0 ? 1 : 0) + ((flags & TcpFlag.FIN) !== 0 ? 1 : 0);
    if (fromClient) this.clientSeq = (this.clientSeq + used) >>> 0;
    else this.serverSeq = (this.serverSeq + used) >>> 0;
    return p;
  }

  handshake(ts: number, rttMicros: number): DecodedPacket[] {
    return [
      this.segment(ts, true, TcpFlag.SYN),
      this.segment(ts + rttMicros / 2, false, TcpFlag.SYN | TcpFlag.ACK),
      this.segment(ts + rttMicros, true, TcpFlag.ACK),
    ];
  }

  /** Client FIN, server FIN, client's last ACK. */
  close(ts: number, stepMicros: number): DecodedPacket[] {
    return [
      this.segment(ts, true, TcpFlag.FIN | TcpFlag.ACK),
      this.segment(ts + stepMicros, false, TcpFlag.FIN | TcpFlag.ACK),
      this.segment(ts + 2 * stepMicros, true, TcpFlag.ACK),
    ];
  }
}
