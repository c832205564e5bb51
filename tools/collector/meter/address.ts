// IPv6 addresses as RFC 5952 text, the one canonical form flow records and searches compare.

/**
 * The 16 bytes at `at` as RFC 5952 text: lowercase hex without leading zeros, the longest run of
 * two or more zero groups (the first of equal runs) as "::", and IPv4-mapped addresses as
 * ::ffff:a.b.c.d.
 */
export function formatIPv6(d: Uint8Array, at: number): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((d[at + 2 * i] << 8) | d[at + 2 * i + 1]);
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `::ffff:${d[at + 12]}.${d[at + 13]}.${d[at + 14]}.${d[at + 15]}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
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
