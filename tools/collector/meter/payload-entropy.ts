// Shannon entropy of a payload's leading bytes, the figure flowgen's `payload_entropy` models:
// near 8 bits/byte for encrypted or compressed data, 4-5 for text. Bounded work per packet.
// Counted in WebAssembly (wasm/payload-entropy.ts): on ciphertext JavaScript spent about 1.5 µs
// per packet on it, where WebAssembly spends about 0.75.

import { meterWasmModule } from './wasm-module.js';

/** Bytes sampled per packet: enough to tell ciphertext from text, cheap enough for every packet. */
export const ENTROPY_SAMPLE_BYTES = 256;

interface EntropyExports {
  memory: WebAssembly.Memory;
  N_LOG_N: WebAssembly.Global;
  LOG2: WebAssembly.Global;
  SAMPLE: WebAssembly.Global;
  SAMPLE_BYTES: WebAssembly.Global;
  FRAMES: WebAssembly.Global;
  prepareEntropy(frameBytes: number): void;
  entropy(start: number, n: number): number;
}

/**
 * Payload entropy in an instance of the meter's module of its own, whose memory never grows once
 * made (views of it stay valid). A payload in the chunk being metered (a view of `frames`) is
 * counted where it is; any other is copied in first, which costs more than counting a short run
 * of one value.
 */
export class EntropyCounter {
  /** Bytes in the module's memory: read captures into it, and their payloads are not copied. */
  readonly frames: Uint8Array;
  private readonly wasm: EntropyExports;
  private readonly memory: ArrayBuffer;
  private readonly bytes: Uint8Array;
  private readonly sample: number;
  /**
   * The chunk being metered and where it starts in the memory. Known by identity: a typed
   * array's `buffer` getter, asked per packet, cost about as much as the rest of its decoding.
   */
  private chunk: Uint8Array | undefined = undefined;
  private chunkStart = 0;

  constructor(frameBytes = 0) {
    this.wasm = new WebAssembly.Instance(meterWasmModule()).exports as unknown as EntropyExports;
    const wasm = this.wasm;
    if (wasm.SAMPLE_BYTES.value !== ENTROPY_SAMPLE_BYTES) throw new Error('the meter WebAssembly samples a different number of bytes');
    wasm.prepareEntropy(frameBytes);
    this.memory = wasm.memory.buffer;
    this.bytes = new Uint8Array(this.memory);
    this.frames = this.bytes.subarray(wasm.FRAMES.value as number, (wasm.FRAMES.value as number) + frameBytes);
    this.sample = wasm.SAMPLE.value as number;
    const nLogN = new Float64Array(this.memory, wasm.N_LOG_N.value as number, ENTROPY_SAMPLE_BYTES + 1);
    const log2 = new Float64Array(this.memory, wasm.LOG2.value as number, ENTROPY_SAMPLE_BYTES + 1);
    for (let n = 1; n <= ENTROPY_SAMPLE_BYTES; n++) {
      nLogN[n] = n * Math.log2(n);
      log2[n] = Math.log2(n);
    }
  }

  /** Says which view of `frames` is being metered: payloads in it are counted in place. */
  meterIn(chunk: Uint8Array): void {
    if (chunk.buffer !== this.memory) throw new Error("a chunk metered in place must be a view of the entropy counter's frames");
    this.chunk = chunk;
    this.chunkStart = chunk.byteOffset;
  }

  /**
   * Entropy in bits per byte of the first ENTROPY_SAMPLE_BYTES bytes of bytes[start, end), 0 for
   * fewer than two bytes. H = log2 n − (1/n)·Σ c·log2 c over the byte counts c, summed in the
   * order the values first occur. Runs of one value (padding, zero fill) are counted as a run,
   * and the sum visits each distinct value once.
   */
  of(bytes: Uint8Array, start = 0, end = bytes.length): number {
    const n = Math.min(end - start, ENTROPY_SAMPLE_BYTES);
    if (n < 2) return 0;
    if (bytes === this.chunk) return this.wasm.entropy(this.chunkStart + start, n);
    this.bytes.set(bytes.subarray(start, start + n), this.sample);
    return this.wasm.entropy(this.sample, n);
  }
}

let shared: EntropyCounter | undefined;

/** One counter for every caller that reads no frames into one: it keeps nothing between calls. */
export function sharedEntropyCounter(): EntropyCounter {
  shared ??= new EntropyCounter();
  return shared;
}

/** EntropyCounter.of on the shared counter. */
export function payloadEntropy(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return sharedEntropyCounter().of(bytes, start, end);
}
