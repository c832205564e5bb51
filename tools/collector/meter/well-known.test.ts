import { describe, expect, it } from 'vitest';
import { parseAddress } from './address.js';
import { flagNames, isPrivateAt, isPrivateBytes } from './well-known.js';
import { TcpFlag } from './packet.js';

/** Each address with whether it is private: RFC 1918, and for IPv6 fc00::/7 and fe80::/10. */
const ADDRESSES: Array<[string, boolean]> = [
  ['10.1.2.3', true],
  ['172.16.0.1', true],
  ['172.31.255.255', true],
  ['172.32.0.1', false],
  ['172.15.255.255', false],
  ['192.168.1.1', true],
  ['192.169.0.1', false],
  ['8.8.8.8', false],
  ['127.0.0.1', false],
  ['fd00::1', true],
  ['fc00::', true],
  ['fe80::1', true],
  ['febf::1', true],
  ['fec0::1', false],
  ['2001:db8::1', false],
];

describe('private addresses', () => {
  it.each(ADDRESSES)('%s: the same from its words and from its bytes', (text, expected) => {
    const words = new Uint32Array(4);
    const version = parseAddress(text, words, 0);
    const bytes = new Uint8Array(16);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < 4; i++) view.setUint32(4 * i, words[i]);
    expect(isPrivateAt(words, 0, version)).toBe(expected);
    // At an offset, as a packet or an export datagram carries it.
    const framed = new Uint8Array(3 + 16);
    framed.set(bytes, 3);
    expect(isPrivateBytes(framed, 3, version)).toBe(expected);
  });
});

describe('flagNames', () => {
  it("names the flags set, in flowgen's order, ignoring bits beyond the eight flags", () => {
    expect(flagNames(0)).toEqual([]);
    expect(flagNames(TcpFlag.FIN | TcpFlag.SYN | TcpFlag.ACK | TcpFlag.RST)).toEqual(['SYN', 'ACK', 'FIN', 'RST']);
    expect(flagNames(0xff)).toEqual(['SYN', 'ACK', 'PSH', 'FIN', 'RST', 'URG', 'ECE', 'CWR']);
    expect(flagNames(0x100 | TcpFlag.PSH)).toEqual(['PSH']);
  });

  it('hands each caller a list of its own', () => {
    const first = flagNames(TcpFlag.SYN);
    first.push('changed');
    expect(flagNames(TcpFlag.SYN)).toEqual(['SYN']);
  });
});
