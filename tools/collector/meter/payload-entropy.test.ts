import { describe, expect, it } from 'vitest';
import { ENTROPY_SAMPLE_BYTES, MeterCore, payloadEntropy } from './meter-core.js';

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

  it('reads a payload at an offset in a larger buffer, as the meter hands over a frame of a chunk', () => {
    const chunk = Buffer.alloc(4096);
    for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 7919) >>> 3;
    const frame = chunk.subarray(1000, 3000);
    for (const [start, end] of [
      [0, 2000],
      [13, 40],
      [1999, 2000],
      [500, 501 + 256],
    ]) {
      expect(payloadEntropy(frame, start, end)).toBe(payloadEntropy(Uint8Array.from(frame.subarray(start, end))));
    }
    expect(payloadEntropy(frame, 13, 40)).toBeGreaterThan(0);
  });

  it('counts payloads in its memory where they lie, and others copied in, alike', () => {
    const core = new MeterCore({ frameBytes: 4096, maxFlows: 1, idleMicros: 0, activeMicros: 0, lingerMicros: 0, inspectPerDirection: 0 });
    const frames = core.frames;
    expect(frames.length).toBe(4096);
    let x = 99;
    for (let i = 0; i < frames.length; i++) frames[i] = (x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 12345) >>> 24;
    for (const [start, end] of [
      [0, 4096],
      [7, 9],
      [100, 180],
      [4000, 4096],
      [5, 5],
    ]) {
      const copy = Uint8Array.from(frames.subarray(start, end));
      expect(core.entropy(core.bytes, frames.byteOffset + start, frames.byteOffset + end)).toBe(payloadEntropy(copy));
      // A view of the same bytes that is not the whole memory is copied in: the same value.
      expect(core.entropy(frames.subarray(start, end))).toBe(payloadEntropy(copy));
    }
  });
});
