import { describe, expect, it } from 'vitest';
import { formatIpv6, parseCidr, parseIp } from './ip.js';

describe('IP parsing', () => {
  it('maps IPv4 into IPv6 the way ClickHouse does', () => {
    expect(formatIpv6(parseIp('10.1.2.3')!)).toBe('0:0:0:0:0:ffff:a01:203');
    expect(parseIp('::ffff:10.1.2.3')).toBe(parseIp('10.1.2.3'));
    expect(parseIp('2001:DB8:0:0:0:0:0:1')).toBe(parseIp('2001:db8::1'));
    expect(parseIp('::')).toBe(0n);
    for (const bad of ['10.1.2', '256.1.1.1', '1::2::3', '2001:db8::g', 'x', '1.2.3.4.5', '1:2:3:4:5:6:7:8:9']) expect(parseIp(bad), bad).toBeNull();
  });

  it('turns CIDR blocks into inclusive ranges', () => {
    const r = parseCidr('10.0.0.0/8')!;
    expect(formatIpv6(r.lo)).toBe('0:0:0:0:0:ffff:a00:0');
    expect(formatIpv6(r.hi)).toBe('0:0:0:0:0:ffff:aff:ffff');
    const v6 = parseCidr('2001:db8::/32')!;
    expect(v6.lo).toBe(parseIp('2001:db8::'));
    expect(v6.hi).toBe(parseIp('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'));
    expect(parseCidr('10.1.2.3/32')).toEqual({ lo: parseIp('10.1.2.3'), hi: parseIp('10.1.2.3') });
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('10.0.0.0')).toBeNull();
  });
});
