// Addresses as the one canonical text flow records and searches compare: IPv4 dotted quads, IPv6
// as RFC 5952 writes it.

/** The 4 bytes at `at` as a dotted quad. */
export function formatIPv4(d: Uint8Array, at: number): string {
  return `${d[at]}.${d[at + 1]}.${d[at + 2]}.${d[at + 3]}`;
}

/**
 * The 16 bytes at `at` as RFC 5952 text: lowercase hex without leading zeros, the longest run of
 * two or more zero groups (the first of equal runs) as "::", and IPv4-mapped addresses as
 * ::ffff:a.b.c.d.
 */
export function formatIPv6(d: Uint8Array, at: number): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((d[at + 2 * i] << 8) | d[at + 2 * i + 1]);
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `::ffff:${formatIPv4(d, at + 12)}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return hexGroups(groups, 0, 8);
  return `${hexGroups(groups, 0, bestStart)}::${hexGroups(groups, bestStart + bestLength, 8)}`;
}

function hexGroups(groups: number[], from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += (i > from ? ':' : '') + groups[i].toString(16);
  return text;
}

const scratch = new Uint8Array(16);

/** The address in words[at] (IPv4) or words[at..at+3] (IPv6, big-endian words) as canonical text. */
export function formatAddress(words: Uint32Array, at: number, version: 4 | 6): string {
  if (version === 4) {
    const w = words[at];
    return `${w >>> 24}.${(w >>> 16) & 255}.${(w >>> 8) & 255}.${w & 255}`;
  }
  for (let i = 0; i < 16; i++) scratch[i] = words[at + (i >> 2)] >>> (24 - 8 * (i & 3));
  return formatIPv6(scratch, 0);
}

/**
 * Text (IPv4 dotted quad, or IPv6 with `::` and an optional dotted-quad tail) into words as
 * formatAddress reads them: IPv4 in words[at], IPv6 in words[at..at+3]. Returns the version;
 * throws on anything else, since only hand-made packets carry text addresses in.
 */
export function parseAddress(text: string, words: Uint32Array, at: number): 4 | 6 {
  words.fill(0, at, at + 4);
  if (!text.includes(':')) {
    words[at] = dottedQuad(text, text);
    return 4;
  }
  const halves = text.split('::');
  if (halves.length > 2) throw new Error(`not an IP address: ${text}`);
  const groupsOf = (half: string): number[] => {
    if (half === '') return [];
    const parts = half.split(':');
    const tail = parts[parts.length - 1].includes('.') ? dottedQuad(parts.pop()!, text) : undefined;
    const groups = parts.map((part) => (/^[0-9a-f]{1,4}$/i.test(part) ? parseInt(part, 16) : NaN));
    if (tail !== undefined) groups.push(tail >>> 16, tail & 0xffff);
    return groups;
  };
  const head = groupsOf(halves[0]);
  const rest = halves.length === 2 ? groupsOf(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 2 ? missing < 1 : missing !== 0) || [...head, ...rest].some(Number.isNaN)) throw new Error(`not an IP address: ${text}`);
  const groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  for (let i = 0; i < 4; i++) words[at + i] = ((groups[2 * i] << 16) | groups[2 * i + 1]) >>> 0;
  return 6;
}

function dottedQuad(text: string, whole: string): number {
  const octets = text.split('.').map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : NaN));
  if (octets.length !== 4 || octets.some((o) => !(o <= 255))) throw new Error(`not an IP address: ${whole}`);
  return ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
}
