/**
 * IP addresses as 128-bit integers, the way ClickHouse's IPv6 type sees them: an IPv4 address is
 * the IPv4-mapped IPv6 address ::ffff:a.b.c.d. Used to turn CIDR filters into address ranges and
 * by the reference evaluator; stored IP text is never rewritten.
 */

const V4_MAPPED_PREFIX = 0xffffn << 32n;

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = (n << 8n) | BigInt(v);
  }
  return n;
}

function parseV6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const all = [...head, ...tail];
  const last = all[all.length - 1];
  let v4Tail: bigint | null = null;
  if (last !== undefined && last.includes('.')) {
    v4Tail = parseV4(last);
    if (v4Tail === null) return null;
    if (tail.length) tail.pop();
    else head.pop();
  }
  const groupCount = head.length + tail.length + (v4Tail !== null ? 2 : 0);
  if (halves.length === 1 ? groupCount !== 8 : groupCount > 7) return null;
  const zeros = 8 - groupCount;
  const groups: bigint[] = [];
  for (const g of head) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    groups.push(BigInt(`0x${g}`));
  }
  for (let i = 0; i < zeros; i++) groups.push(0n);
  for (const g of tail) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    groups.push(BigInt(`0x${g}`));
  }
  let n = 0n;
  for (const g of groups) n = (n << 16n) | g;
  if (v4Tail !== null) n = (n << 32n) | v4Tail;
  return n;
}

/** The address as a 128-bit integer, or null when `text` is not an IPv4 or IPv6 address. */
export function parseIp(text: string): bigint | null {
  if (text.includes(':')) return parseV6(text);
  const v4 = parseV4(text);
  return v4 === null ? null : V4_MAPPED_PREFIX | v4;
}

/** Full (uncompressed) IPv6 text for a 128-bit address; ClickHouse parses it as IPv6. */
export function formatIpv6(n: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(i * 16)) & 0xffffn).toString(16));
  return groups.join(':');
}

export interface IpRange {
  lo: bigint;
  hi: bigint;
}

/** The IPv4 addresses among the IPv6 ones: ::ffff:0.0.0.0 to ::ffff:255.255.255.255. */
export const IPV4_RANGE: IpRange = { lo: V4_MAPPED_PREFIX, hi: V4_MAPPED_PREFIX | 0xffffffffn };

export const isIpv4 = (n: bigint): boolean => n >= IPV4_RANGE.lo && n <= IPV4_RANGE.hi;

/** `10.0.0.0/8` or `2001:db8::/32` as an inclusive address range; null when not a CIDR. */
export function parseCidr(text: string): IpRange | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const addrText = text.slice(0, slash);
  const bitsText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const isV4 = !addrText.includes(':');
  const addr = parseIp(addrText);
  if (addr === null) return null;
  const bits = Number(bitsText) + (isV4 ? 96 : 0);
  if (bits > 128) return null;
  const hostMask = (1n << BigInt(128 - bits)) - 1n;
  const lo = addr & ~hostMask & ((1n << 128n) - 1n);
  return { lo, hi: lo | hostMask };
}
