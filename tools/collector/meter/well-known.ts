// Names a flow sensor gives what it sees before any payload is read: the app behind a port
// (as flowgen names apps), the transport behind a protocol number, the ICMP message behind a type,
// TCP flags, and whether an address is private. The packet meter and the flow-export decoder
// both name things this way.

import { isPrivateIPv4 } from '../flowgen/ip.js';
import { TcpFlag } from './packet.js';

/** Service ports as flowgen's catalog uses them; the table is small on purpose (payload hints refine it). */
const TCP_APPS: ReadonlyMap<number, string> = new Map([
  [22, 'SSH'],
  [25, 'SMTP'],
  [53, 'DNS'],
  [80, 'HTTP'],
  [88, 'KERBEROS'],
  [389, 'LDAP'],
  [443, 'HTTPS'],
  [445, 'SMB'],
  [587, 'SMTP'],
  [993, 'IMAPS'],
  [3389, 'RDP'],
  [5223, 'APNS'],
  [5432, 'POSTGRESQL'],
]);

const UDP_APPS: ReadonlyMap<number, string> = new Map([
  [53, 'DNS'],
  [88, 'KERBEROS'],
  [123, 'NTP'],
  [443, 'QUIC'],
  [8801, 'ZOOM'],
  [9000, 'WEBEX'],
]);

export const PROTO_TCP = 6;
export const PROTO_UDP = 17;
export const PROTO_ICMP = 1;
export const PROTO_ICMPV6 = 58;

/** The app a service port names, or undefined. */
export function appByPort(protocol: number, port: number): string | undefined {
  if (protocol === PROTO_TCP) return TCP_APPS.get(port);
  if (protocol === PROTO_UDP) return UDP_APPS.get(port);
  return undefined;
}

/**
 * Whether a port looks like a server's: below 1024 (the system ports) or a service port in the
 * table above. Used only when a flow's start was not seen, to tell its client from its server.
 */
export function looksLikeServerPort(protocol: number, port: number): boolean {
  return port < 1024 || appByPort(protocol, port) !== undefined;
}

const TRANSPORT_NAMES: ReadonlyMap<number, string> = new Map([
  [PROTO_ICMP, 'ICMP'],
  [2, 'IGMP'],
  [PROTO_TCP, 'TCP'],
  [PROTO_UDP, 'UDP'],
  [47, 'GRE'],
  [50, 'ESP'],
  [51, 'AH'],
  [PROTO_ICMPV6, 'IPv6-ICMP'],
  [89, 'OSPF'],
  [132, 'SCTP'],
]);

/** IANA keyword of a protocol number ("TCP", "IPv6-ICMP"), or the number as text. */
export function transportName(protocol: number): string {
  return TRANSPORT_NAMES.get(protocol) ?? String(protocol);
}

const ICMP_TYPES: ReadonlyMap<number, string> = new Map([
  [0, 'echo-reply'],
  [3, 'destination-unreachable'],
  [5, 'redirect'],
  [8, 'echo-request'],
  [11, 'time-exceeded'],
  [12, 'parameter-problem'],
  [13, 'timestamp-request'],
  [14, 'timestamp-reply'],
]);

const ICMPV6_TYPES: ReadonlyMap<number, string> = new Map([
  [1, 'destination-unreachable'],
  [2, 'packet-too-big'],
  [3, 'time-exceeded'],
  [4, 'parameter-problem'],
  [128, 'echo-request'],
  [129, 'echo-reply'],
  [133, 'router-solicitation'],
  [134, 'router-advertisement'],
  [135, 'neighbor-solicitation'],
  [136, 'neighbor-advertisement'],
]);

export function icmpTypeName(protocol: number, type: number): string {
  return (protocol === PROTO_ICMPV6 ? ICMPV6_TYPES : ICMP_TYPES).get(type) ?? `type-${type}`;
}

/** Flag names in flowgen's order (SYN, ACK, PSH, FIN, then RST). */
const FLAG_NAMES: ReadonlyArray<[number, string]> = [
  [TcpFlag.SYN, 'SYN'],
  [TcpFlag.ACK, 'ACK'],
  [TcpFlag.PSH, 'PSH'],
  [TcpFlag.FIN, 'FIN'],
  [TcpFlag.RST, 'RST'],
  [TcpFlag.URG, 'URG'],
  [TcpFlag.ECE, 'ECE'],
  [TcpFlag.CWR, 'CWR'],
];

/** The names for every combination of the eight flags, listed once: a record takes a copy of its list. */
const NAMES_OF_FLAGS: readonly (readonly string[])[] = Array.from({ length: 256 }, (_, bits) =>
  FLAG_NAMES.filter(([bit]) => (bits & bit) !== 0).map(([, name]) => name),
);

/** The names of the flags set in `bits`, in flowgen's order (bits above the eight flags have none). */
export function flagNames(bits: number): string[] {
  return NAMES_OF_FLAGS[bits & 0xff].slice();
}

/** flagNames() as one list shared by every caller: for writers that only read it (a Native row). */
export function sharedFlagNames(bits: number): readonly string[] {
  return NAMES_OF_FLAGS[bits & 0xff];
}

// Private addresses by flowgen's rule for IPv4 (RFC 1918); for IPv6 unique-local fc00::/7 and
// link-local fe80::/10. Judged from an address's numbers, never its text.

/** Whether an address as words (address.ts) is private: words[at] for IPv4, words[at..at+3] for IPv6. */
export function isPrivateAt(words: Uint32Array, at: number, version: 4 | 6): boolean {
  return version === 4 ? isPrivateIPv4(words[at]) : isPrivateIPv6Group(words[at] >>> 16);
}

/** Whether an address as bytes (as packets and exports carry it) is private, bytes[at..] in network order. */
export function isPrivateBytes(bytes: Uint8Array, at: number, version: 4 | 6): boolean {
  return version === 4
    ? isPrivateIPv4(((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0)
    : isPrivateIPv6Group((bytes[at] << 8) | bytes[at + 1]);
}

/** The rule for IPv6 needs only the first 16-bit group. */
function isPrivateIPv6Group(first: number): boolean {
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80;
}
