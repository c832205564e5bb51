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
});
