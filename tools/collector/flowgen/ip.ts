// IPv4 helpers. Addresses are kept as uint32 for hashing and as strings for the record.

export function ipToNumber(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4) throw new Error(`not an IPv4 address: ${ip}`);
  let n = 0;
  for (const part of parts) {
    const octet = Number(part);
    if (!Number.isInteger(octet) || octet < 0 || octet > 255) throw new Error(`not an IPv4 address: ${ip}`);
    n = n * 256 + octet;
  }
  return n;
}

export function numberToIp(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export interface Cidr {
  base: number;
  size: number;
  text: string;
}

export function parseCidr(text: string): Cidr {
  const [address, bitsText] = text.split('/');
  const bits = Number(bitsText);
  if (!Number.isInteger(bits) || bits < 8 || bits > 32) throw new Error(`bad prefix: ${text}`);
  const size = 2 ** (32 - bits);
  const base = ipToNumber(address) - (ipToNumber(address) % size);
  return { base, size, text };
}

/** Host `index` of a prefix, never its network or broadcast address. */
export function hostInCidr(cidr: Cidr, index: number): string {
  const usable = Math.max(1, cidr.size - 2);
  return numberToIp(cidr.base + 1 + (index % usable));
}

/** RFC 1918 ranges: what a sensor labels `private`. */
export function isPrivate(ip: string): boolean {
  return isPrivateIPv4(ipToNumber(ip));
}

/** isPrivate of an address as its uint32. */
export function isPrivateIPv4(n: number): boolean {
  const a = n >>> 24;
  const b = (n >>> 16) & 255;
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}
