// Shannon entropy of a payload's leading bytes, the figure flowgen's `payload_entropy` models:
// near 8 bits/byte for encrypted or compressed data, 4-5 for text. Bounded work per packet.

/** Bytes sampled per packet: enough to tell ciphertext from text, cheap enough for every packet. */
export const ENTROPY_SAMPLE_BYTES = 256;

/** n·log2(n) for every count a sample can reach. */
const N_LOG_N = Float64Array.from({ length: ENTROPY_SAMPLE_BYTES + 1 }, (_, n) => (n > 0 ? n * Math.log2(n) : 0));
const histogram = new Uint16Array(256);
/** The byte values of the current sample, in the order they first occur. */
const distinct = new Uint8Array(256);

/**
 * Entropy in bits per byte of the first ENTROPY_SAMPLE_BYTES bytes of bytes[start, end), 0 for
 * fewer than two bytes. H = log2 n − (1/n)·Σ c·log2 c over the byte counts c, summed in the order
 * the values first occur. Runs of one value (padding, zero fill) are counted as a run, and the sum
 * visits each distinct value once; the histogram is cleared as it is read.
 */
export function payloadEntropy(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const n = Math.min(end - start, ENTROPY_SAMPLE_BYTES);
  if (n < 2) return 0;
  const stop = start + n;
  let kinds = 0;
  for (let i = start; i < stop;) {
    const value = bytes[i];
    let run = 1;
    while (i + run < stop && bytes[i + run] === value) run++;
    // Noted as distinct without a branch: on ciphertext whether a value is new is a coin toss,
    // which the processor mispredicted about 110 times in 256 bytes (cachegrind's branch model).
    const count = histogram[value];
    distinct[kinds] = value;
    kinds += (count - 1) >>> 31;
    histogram[value] = count + run;
    i += run;
  }
  let sum = 0;
  for (let k = 0; k < kinds; k++) {
    const value = distinct[k];
    sum += N_LOG_N[histogram[value]];
    histogram[value] = 0;
  }
  return Math.log2(n) - sum / n;
}
