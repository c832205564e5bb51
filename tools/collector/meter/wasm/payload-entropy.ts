// Payload entropy in WebAssembly: what ../payload-entropy.ts describes, the same sum in the same
// order. On ciphertext (a byte value new at about every other byte) it was the largest cost of a
// packet in JavaScript: 256 random bytes took about 1.5 µs there, about 0.75 µs here.
//
// Memory: the histogram (256 u32, zero between calls), the distinct values of the current
// sample (256 u8), n·log2(n) and log2(n) for n = 0 to 256 (f64, written by JavaScript so
// that the logarithms are V8's, bit for bit), SAMPLE, where JavaScript copies a payload that is
// not in this memory already, and FRAMES, where the meter reads its captures.

/** After the flow index's key (44 bytes at 0). */
const HISTOGRAM: usize = 64;
const DISTINCT: usize = HISTOGRAM + 256 * 4;
export const N_LOG_N: usize = DISTINCT + 256;
export const LOG2: usize = N_LOG_N + 257 * 8;
export const SAMPLE: usize = LOG2 + 257 * 8;
export const SAMPLE_BYTES: u32 = 256;
/** Where the next part of the memory starts (decode.ts's header words). */
export const ENTROPY_END: usize = (SAMPLE + SAMPLE_BYTES + 63) & ~(<usize>63);

/** Entropy in bits per byte of memory[start, start + n), 2 ≤ n ≤ SAMPLE_BYTES. */
export function entropy(start: usize, n: u32): f64 {
  if (n < 2 || n > SAMPLE_BYTES) unreachable();
  const stop = start + n;
  let kinds: u32 = 0;
  for (let i = start; i < stop;) {
    const value = <usize>load<u8>(i);
    let run: u32 = 1;
    while (i + run < stop && <usize>load<u8>(i + run) == value) run++;
    const at = HISTOGRAM + (value << 2);
    const count = load<u32>(at);
    // Noted as distinct without a branch, as in JavaScript.
    store<u8>(DISTINCT + kinds, <u8>value);
    kinds += <u32>(count == 0);
    store<u32>(at, count + run);
    i += run;
  }
  let sum: f64 = 0;
  for (let k: u32 = 0; k < kinds; k++) {
    const at = HISTOGRAM + ((<usize>load<u8>(DISTINCT + k)) << 2);
    sum += load<f64>(N_LOG_N + ((<usize>load<u32>(at)) << 3));
    store<u32>(at, 0);
  }
  return load<f64>(LOG2 + ((<usize>n) << 3)) - sum / <f64>n;
}
