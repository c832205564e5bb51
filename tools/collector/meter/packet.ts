// The shapes the packet meter's stages hand each other: a capture source yields frames, the
// decoder turns a frame into a packet (or a counted drop), the flow table turns packets into
// wire.md flow records, and payload inspectors add what a packet's payload says about its app.

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

/**
 * Looks at one packet's payload; `fromInitiator` is true when it travels in the flow's src → dst
 * direction. Returns nothing when the payload says nothing it recognises. Pure and bounded: it
 * never throws on hostile bytes.
 */
export type PayloadInspector = (packet: DecodedPacket, fromInitiator: boolean) => AppHints | undefined;
