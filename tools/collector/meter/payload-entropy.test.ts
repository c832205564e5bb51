import { describe, expect, it } from 'vitest';
import { ENTROPY_SAMPLE_BYTES, payloadEntropy } from './payload-entropy.js';

describe('payloadEntropy', () => {
  it('is log2 of the number of equally frequent byte values', () => {
    expect(payloadEntropy(Uint8Array.from({ length: 256 }, (_, i) => i))).toBeCloseTo(8, 10);
    expect(payloadEntropy(new TextEncoder().encode('abababab'))).toBeCloseTo(1, 10);
    expect(payloadEntropy(new Uint8Array(1000).fill(7))).toBe(0);
    expect(payloadEntropy(new Uint8Array(1))).toBe(0);
  });

  it('reads only the sampled prefix, and leaves nothing behind for the next call', () => {
    const prefixThenNoise = Uint8Array.from({ length: 4000 }, (_, i) => (i < ENTROPY_SAMPLE_BYTES ? 0 : i & 255));
    expect(payloadEntropy(prefixThenNoise)).toBe(0);
    expect(payloadEntropy(new TextEncoder().encode('abababab'))).toBeCloseTo(1, 10);
  });

  it('gives, bit for bit, the plain two-pass sum over the sample (values summed in first-occurrence order)', () => {
    const plain = (bytes: Uint8Array): number => {
      const n = Math.min(bytes.length, ENTROPY_SAMPLE_BYTES);
      const counts = new Map<number, number>();
      for (const b of bytes.subarray(0, n)) counts.set(b, (counts.get(b) ?? 0) + 1);
      let sum = 0;
      for (const c of counts.values()) sum += c * Math.log2(c); // a Map iterates in insertion order
      return Math.log2(n) - sum / n;
    };
    let x = 12345;
    const random = (limit: number) => ((x = Math.imul(x ^ (x >>> 13), 0x5bd1e995) >>> 0), x % limit);
    for (let trial = 0; trial < 500; trial++) {
      const alphabet = 1 + random(256);
      const bytes = Uint8Array.from({ length: 2 + random(400) }, () => (random(3) === 0 ? 0 : random(alphabet)));
      expect(payloadEntropy(bytes)).toBe(plain(bytes));
    }
  });
});
