// The shapes the packet meter's stages hand each other: a capture source yields frames, the
// decoder turns a frame into a packet (or a counted drop), the flow table turns packets into
// wire.md flow records, and payload inspectors add what a packet's payload says about its app.

import { formatAddress, parseAddress } from './address.js';

/** One frame as a capture file (pcap, pcapng) or a live capture hands it over. */
export interface CapturedFrame {
  /** Capture time in epoch microseconds (finer pcapng resolutions are rounded to it). */
  tsMicros: number;
  /** LINKTYPE_* of the frame's interface: 1 Ethernet, 113 Linux SLL, 276 Linux SLL2, 101 raw IP, 0 BSD loopback, 12/14 raw IPv4/IPv6. */
  linkType: number;
  /** Length on the wire; `data` is shorter when the capture's snap length cut it. */
  wireLength: number;
  data: Uint8Array;
}

/**
 * A frame as the meter's reading path hands it over: bytes[start, end) of the chunk it was read
 * from, in one object the reader refills for every frame (valid until the visitor returns).
 */
export interface FrameSpan {
  tsMicros: number;
  linkType: number;
  wireLength: number;
  bytes: Uint8Array;
  start: number;
  end: number;
}

/** A frame decoded down to its transport header. */
export interface DecodedPacket {
  tsMicros: number;
  /** The frame's length on the wire (what `stats.size.frame` counts). */
  wireLength: number;
  /** 802.1Q/802.1ad VLAN id, the outermost one. */
  vlan?: number;
  ipVersion: 4 | 6;
  /** Canonical text (IPv4 dotted quad, IPv6 RFC 5952). */
  src: string;
  dst: string;
  /** IANA protocol number of the transport (after IPv6 extension headers). */
  protocol: number;
  ttl: number;
  /** IP total length (IPv4) or 40 + payload length (IPv6): the packet's bytes at layer 3. */
  ipLength: number;
  /** `later` fragments carry no transport header: no ports, counted by the flow of their datagram's first fragment when known. */
  fragment: 'none' | 'first' | 'later';
  /** IPv4 identification or IPv6 fragment id, when the packet is a fragment. */
  fragmentId?: number;
  srcPort?: number;
  dstPort?: number;
  tcp?: { flags: number; seq: number; ack: number; window: number; headerLength: number };
  icmp?: { type: number; code: number };
  /** The transport payload as captured (may be cut short by the snap length). */
  payload: Uint8Array;
  /** The transport payload's length on the wire, from the IP lengths. */
  payloadLength: number;
}

/**
 * One packet's headers in a structure reused for every packet: read from the WebAssembly
 * decoder's header words when JavaScript needs a packet's fields (the payload inspectors, a
 * fragment, decodeFrame), and written there for a packet made by hand (meter-core.ts). Addresses
 * stay numbers, the payload stays a range of the frame's bytes. Fields a packet lacks hold -1 (or
 * 0 for ports, as flow keys count a portless packet).
 */
export class PacketHeaders {
  tsMicros = 0;
  wireLength = 0;
  vlan = -1;
  ipVersion: 4 | 6 = 4;
  /** Source then destination, as big-endian 32-bit words: IPv4 in words 0 and 4, IPv6 in 0–3 and 4–7. */
  readonly addresses = new Uint32Array(8);
  protocol = 0;
  ttl = 0;
  ipLength = 0;
  fragment: DecodedPacket['fragment'] = 'none';
  fragmentId = -1;
  hasPorts = false;
  srcPort = 0;
  dstPort = 0;
  hasTcp = false;
  tcpFlags = 0;
  /** uint32, NaN until a TCP header is read: a double from the start, so that a value above 2^31 does not change the object's layout. */
  tcpSeq = NaN;
  tcpAck = NaN;
  tcpWindow = 0;
  tcpHeaderLength = 0;
  icmpType = -1;
  icmpCode = -1;
  /** The frame's bytes; the transport payload as captured is data[payloadStart, payloadEnd). */
  data: Uint8Array = new Uint8Array(0);
  payloadStart = 0;
  payloadEnd = 0;
  payloadLength = 0;

  get capturedPayload(): number {
    return this.payloadEnd - this.payloadStart;
  }

  /** A DecodedPacket of its own. */
  toDecodedPacket(): DecodedPacket {
    return {
      tsMicros: this.tsMicros,
      wireLength: this.wireLength,
      vlan: this.vlan < 0 ? undefined : this.vlan,
      ipVersion: this.ipVersion,
      src: formatAddress(this.addresses, 0, this.ipVersion),
      dst: formatAddress(this.addresses, 4, this.ipVersion),
      protocol: this.protocol,
      ttl: this.ttl,
      ipLength: this.ipLength,
      fragment: this.fragment,
      fragmentId: this.fragmentId < 0 ? undefined : this.fragmentId,
      srcPort: this.hasPorts ? this.srcPort : undefined,
      dstPort: this.hasPorts ? this.dstPort : undefined,
      tcp: this.hasTcp ? { flags: this.tcpFlags, seq: this.tcpSeq, ack: this.tcpAck, window: this.tcpWindow, headerLength: this.tcpHeaderLength } : undefined,
      icmp: this.icmpType < 0 ? undefined : { type: this.icmpType, code: this.icmpCode },
      // A plain view, even of a Buffer: Buffer's subarray costs more than the rest of this object.
      payload: new Uint8Array(this.data.buffer, this.data.byteOffset + this.payloadStart, this.payloadEnd - this.payloadStart),
      payloadLength: this.payloadLength,
    };
  }

  /** Takes a DecodedPacket's fields (a hand-made packet's addresses are parsed from their text). */
  setFrom(p: DecodedPacket): this {
    this.tsMicros = p.tsMicros;
    this.wireLength = p.wireLength;
    this.vlan = p.vlan ?? -1;
    this.ipVersion = p.ipVersion;
    parseAddress(p.src, this.addresses, 0);
    parseAddress(p.dst, this.addresses, 4);
    this.protocol = p.protocol;
    this.ttl = p.ttl;
    this.ipLength = p.ipLength;
    this.fragment = p.fragment;
    this.fragmentId = p.fragmentId ?? -1;
    this.hasPorts = p.srcPort !== undefined && p.dstPort !== undefined;
    this.srcPort = p.srcPort ?? 0;
    this.dstPort = p.dstPort ?? 0;
    this.hasTcp = p.tcp !== undefined;
    this.tcpFlags = p.tcp?.flags ?? 0;
    this.tcpSeq = p.tcp?.seq ?? 0;
    this.tcpAck = p.tcp?.ack ?? 0;
    this.tcpWindow = p.tcp?.window ?? 0;
    this.tcpHeaderLength = p.tcp?.headerLength ?? 0;
    this.icmpType = p.icmp?.type ?? -1;
    this.icmpCode = p.icmp?.code ?? -1;
    this.data = p.payload;
    this.payloadStart = 0;
    this.payloadEnd = p.payload.length;
    this.payloadLength = p.payloadLength;
    return this;
  }

  /** Both ends on one address (loopback). */
  sameAddresses(): boolean {
    const a = this.addresses;
    return a[0] === a[4] && a[1] === a[5] && a[2] === a[6] && a[3] === a[7];
  }
}

/** TCP flag bits, as in the header's 13th byte (plus ECE/CWR). */
export const TcpFlag = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10, URG: 0x20, ECE: 0x40, CWR: 0x80 } as const;

/** Why a frame, a record or a message was not used; each stage counts its own. */
export type DropCounts = Record<string, number>;

/** What a payload says about the application, merged into the flow's record. */
export interface AppHints {
  /** As flowgen names apps (e.g. "DNS", "HTTPS", "HTTP", "SSH"). */
  app_name?: string;
  dns?: { rrname: string; rrtype: string; rcode?: string; answers?: string[] };
  tls?: { version?: string; sni?: string; alpn?: string[]; ja4?: string };
  http?: { host?: string; method?: string; user_agent?: string; uri?: string };
}

/** What a payload inspector reads of a packet: its transport and ports, and its payload as a range of `data`. */
export type InspectedPacket = Pick<PacketHeaders, 'protocol' | 'hasPorts' | 'srcPort' | 'dstPort' | 'data' | 'payloadStart' | 'payloadEnd'>;

/**
 * Looks at one packet's payload, `headers.data[payloadStart, payloadEnd)`; `fromInitiator` is
 * true when it travels in the flow's src → dst direction. Returns nothing when the payload says
 * nothing it recognises. Pure and bounded: it never throws on hostile bytes, and it keeps no view
 * of the headers' bytes (the next frame overwrites them).
 */
export type PayloadInspector = ((headers: InspectedPacket, fromInitiator: boolean) => AppHints | undefined) & {
  /** The payloads it reads; absent, it is shown every payload the table inspects. */
  reads?: PayloadSelection;
};

/**
 * Payloads an inspector reads (payload-selection.ts): any payload of TCP or UDP to or from one of
 * `ports`, and TCP payloads that start with one of `prefixes`. The meter does not show it others.
 */
export interface PayloadSelection {
  ports: readonly number[];
  prefixes: readonly PayloadPrefix[];
}

export interface PayloadPrefix {
  bytes: readonly number[];
  /** The payload's least length (at least the prefix's). */
  minLength: number;
  /** Only payloads from the flow's initiator. */
  initiatorOnly: boolean;
}
