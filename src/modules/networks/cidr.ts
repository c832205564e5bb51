/**
 * CIDR text as an operator writes it, checked and put in one canonical spelling. Addresses are
 * 128-bit integers as ClickHouse's IPv6 type sees them (flowstore/ip.ts): an IPv4 network is its
 * IPv4-mapped IPv6 range, so `10.0.0.0/8` and `::ffff:10.0.0.0/104` are the same network and
 * both spell `10.0.0.0/8`.
 */
import { parseIp } from '../../flowstore/index.js';

const V4_MAPPED = 0xffffn << 32n;
const ALL = (1n << 128n) - 1n;

export interface Cidr {
  /** Canonical text: the network address without host bits; IPv4 as `a.b.c.d/n`, IPv6 compressed (RFC 5952). */
  text: string;
  /** Prefix length in the 128-bit space (IPv4 /8 is 104): the larger, the more specific. */
  bits: number;
  lo: bigint;
  hi: bigint;
}

/** The parsed network, or a phrase saying what is wrong (it follows the value in a message). */
export function parseNetwork(raw: string): Cidr | string {
  const text = raw.trim();
  const slash = text.indexOf('/');
  if (slash < 0) return 'is not in CIDR notation (address/prefix length, e.g. 10.1.0.0/16)';
  const address = parseIp(text.slice(0, slash));
  if (address === null) return 'does not start with an IPv4 or IPv6 address';
  const isV4 = !text.slice(0, slash).includes(':');
  const lengthText = text.slice(slash + 1);
  const max = isV4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > max) return `has a prefix length that is not a number from 0 to ${max}`;
  const bits = Number(lengthText) + (isV4 ? 96 : 0);
  const hostMask = (1n << BigInt(128 - bits)) - 1n;
  const lo = address & ~hostMask & ALL;
  const cidr = { bits, lo, hi: lo | hostMask };
  if (address !== lo) return `has host bits set (the network is ${formatNetwork(cidr)})`;
  return { ...cidr, text: formatNetwork(cidr) };
}

function formatNetwork({ lo, bits }: { lo: bigint; bits: number }): string {
  if (bits >= 96 && lo >> 32n === 0xffffn) {
    const v4 = Number(lo - V4_MAPPED);
    return `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}/${bits - 96}`;
  }
  return `${compressIpv6(lo)}/${bits}`;
}

/** RFC 5952: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function compressIpv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt((7 - i) * 16)) & 0xffffn));
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}
