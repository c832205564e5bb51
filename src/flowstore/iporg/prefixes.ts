/**
 * Inclusive address ranges (as the ip-location-db CSVs give them) turned into the CIDR prefixes
 * ClickHouse's `ip_trie` dictionary takes: the fewest aligned blocks that cover the range exactly.
 */

/** `lo..hi` (IPv4 as numbers, 0..2^32−1) as `a.b.c.d/len` prefixes. */
export function* ipv4Prefixes(lo: number, hi: number): Generator<string> {
  while (lo <= hi) {
    // The largest block that starts at lo (alignment) and does not pass hi.
    let bits = 0;
    while (bits < 32 && lo % 2 ** (bits + 1) === 0 && lo + 2 ** (bits + 1) - 1 <= hi) bits++;
    yield `${ipv4Text(lo)}/${32 - bits}`;
    lo += 2 ** bits;
  }
}

export function ipv4Text(n: number): string {
  return `${Math.floor(n / 16_777_216) % 256}.${Math.floor(n / 65_536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

const bitLength = (n: bigint): number => (n === 0n ? 0 : n.toString(2).length);

/** `lo..hi` (IPv6 as 128-bit integers) as `xxxx:…:xxxx/len` prefixes. */
export function* ipv6Prefixes(lo: bigint, hi: bigint): Generator<string> {
  while (lo <= hi) {
    const alignment = lo === 0n ? 128 : bitLength(lo & -lo) - 1;
    const fits = bitLength(hi - lo + 1n) - 1;
    const bits = Math.min(alignment, fits);
    yield `${ipv6Text(lo)}/${128 - bits}`;
    lo += 1n << BigInt(bits);
  }
}

export function ipv6Text(n: bigint): string {
  const hex = n.toString(16).padStart(32, '0');
  const groups: string[] = [];
  for (let i = 0; i < 32; i += 4) groups.push(hex.slice(i, i + 4).replace(/^0{1,3}/, ''));
  return groups.join(':');
}

/** One CSV line `start,end,asn,organization` (organization quoted when it has a comma or quote). */
export function parseRangeLine(line: string): { start: string; end: string; asn: number; org: string } | undefined {
  const m = /^([^,]+),([^,]+),(\d+),(.*)$/.exec(line.trim());
  if (!m) return undefined;
  let org = m[4]!;
  if (org.startsWith('"') && org.endsWith('"') && org.length >= 2) org = org.slice(1, -1).replace(/""/g, '"');
  return { start: m[1]!, end: m[2]!, asn: Number(m[3]), org };
}
