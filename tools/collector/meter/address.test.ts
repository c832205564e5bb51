import { describe, expect, it } from 'vitest';
import { formatAddress, formatIPv6, parseAddress } from './address.js';

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

describe('formatAddress and parseAddress', () => {
  it.each([
    '0.0.0.0',
    '10.0.0.5',
    '255.255.255.255',
    '::',
    '::1',
    '2001:db8::1',
    'fd00::5',
    '2001:db8:0:1:1:1:1:1',
    'fe80::9ca3:c7ff:feed:72d1',
    '::ffff:192.0.2.1',
  ])('%s survives words and back', (text) => {
    const words = new Uint32Array(8);
    const version = parseAddress(text, words, 4);
    expect(version).toBe(text.includes(':') ? 6 : 4);
    expect(formatAddress(words, 4, version)).toBe(text);
  });

  it('reads uncompressed and uppercase IPv6 into its canonical form', () => {
    const words = new Uint32Array(4);
    expect(parseAddress('2001:0DB8:0:0:0:0:0:1', words, 0)).toBe(6);
    expect(formatAddress(words, 0, 6)).toBe('2001:db8::1');
    expect([...words]).toEqual([0x20010db8, 0, 0, 1]);
  });

  it.each(['10.0.0', '10.0.0.256', '1::2::3', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8::', 'g::1', 'host.example'])('refuses %s', (text) => {
    expect(() => parseAddress(text, new Uint32Array(4), 0)).toThrow(/not an IP address/);
  });
});
