import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, hotp, matchingStep, newTotpSecret, totpStep } from './totp.js';

// RFC 6238 appendix B: the seeds are the ASCII digits 1234567890 repeated to each hash's key size.
const seed = (length: number) => Buffer.from('1234567890'.repeat(7).slice(0, length));
const VECTORS: Array<[number, string, string, string]> = [
  // [unix seconds, SHA1, SHA256, SHA512], 8 digits
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('at %i s gives the RFC values for SHA1, SHA256 and SHA512', (seconds, sha1, sha256, sha512) => {
    const step = totpStep(seconds * 1000);
    expect(hotp(seed(20), step, 8, 'sha1')).toBe(sha1);
    expect(hotp(seed(32), step, 8, 'sha256')).toBe(sha256);
    expect(hotp(seed(64), step, 8, 'sha512')).toBe(sha512);
  });

  it('accepts a code of the step before, now and after, nothing further, and no malformed code', () => {
    const secret = base32Encode(seed(20));
    const at = 1234567890_000;
    const code = (offset: bigint) => hotp(seed(20), totpStep(at) + offset);
    for (const offset of [-1n, 0n, 1n]) expect(matchingStep(secret, code(offset), at)).toBe(totpStep(at) + offset);
    for (const offset of [-2n, 2n]) expect(matchingStep(secret, code(offset), at)).toBeNull();
    for (const bad of ['', '12345', '1234567', 'abcdef', ' 123456']) expect(matchingStep(secret, bad, at)).toBeNull();
  });

  it('round-trips base32 and makes 160-bit secrets', () => {
    expect(base32Encode(Buffer.from('12345678901234567890'))).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ').toString()).toBe('12345678901234567890');
    expect(base32Decode(newTotpSecret())).toHaveLength(20);
  });
});
