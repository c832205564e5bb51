import { describe, expect, it } from 'vitest';
import { formatIPv6 } from './address.js';

/** The 16 bytes of a fully written-out address, so each case states its input without our formatter's help. */
const bytes = (full: string) => Uint8Array.from(Buffer.from(full.replaceAll(':', ''), 'hex'));

describe('formatIPv6 (RFC 5952)', () => {
  it.each([
    ['0000:0000:0000:0000:0000:0000:0000:0000', '::'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '::1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    // §4.2.2: a single zero group is not shortened; §4.2.3: the first of two equal runs is.
    ['2001:0db8:0000:0001:0001:0001:0001:0001', '2001:db8:0:1:1:1:1:1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    // §4.2.3: the longest run wins over an earlier shorter one.
    ['2001:0000:0000:0001:0000:0000:0000:0001', '2001:0:0:1::1'],
    ['fe80:0000:0000:0000:9ca3:c7ff:feed:72d1', 'fe80::9ca3:c7ff:feed:72d1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0000', '2001:db8::'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    // §5: IPv4-mapped addresses end in dotted quad.
    ['0000:0000:0000:0000:0000:ffff:c000:0201', '::ffff:192.0.2.1'],
  ])('%s is %s', (full, text) => {
    expect(formatIPv6(bytes(full), 0)).toBe(text);
  });

  it('reads the 16 bytes at the offset given', () => {
    const framed = new Uint8Array(20);
    framed.set(bytes('2001:0db8:0000:0000:0000:0000:0000:0002'), 4);
    expect(formatIPv6(framed, 4)).toBe('2001:db8::2');
  });
});
