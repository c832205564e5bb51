/**
 * Memory the chDB thread shares with the API thread for big results (chdb-thread.ts).
 *
 * A result transferred to the API thread arrives as new memory of that thread's heap, and V8
 * collects garbage to match: a 25,000-record page (~60 MB) cost the API thread ~1.4 full
 * collections, ~28 ms of stalls per page (measured; tools/bench/HISTORY.md). Copied into a slab that both
 * threads already share, a result is no new memory to the API thread; the slab is reused once the
 * result is given back (infra/lent-bytes.ts), or, failing that, once the API thread has collected
 * every view of it. Slabs are capped in total; past the cap results are transferred as before.
 */

/**
 * Results smaller than this are transferred. A records page of 100 (~250 KB) transferred was new
 * memory to the API thread on every search too, which its collector then had to reclaim.
 */
export const MIN_SLAB_RESULT_BYTES = 64 * 1024;
/** The smallest slab; sizes double from it up to SLAB_STEP_BYTES, so a slab serves results of similar sizes. */
const MIN_SLAB_BYTES = 1024 * 1024;
/** Past it, slab sizes are multiples of this. */
const SLAB_STEP_BYTES = 16 * 1024 * 1024;
/** All slabs together, in use or free. */
export const MAX_SLAB_BYTES = 256 * 1024 * 1024;
/** A free slab unused this long is dropped (its memory goes once no view of it is left). */
const IDLE_SLAB_MS = 30_000;

/** A result placed in a slab: `use` tells this placement from the slab's later ones. */
export interface SlabResult {
  slab: number;
  use: number;
  memory: SharedArrayBuffer;
  length: number;
}

interface Slab {
  id: number;
  memory: SharedArrayBuffer;
  /** The placement the slab holds, 0 when free. */
  use: number;
  freedAt: number;
}

export class SlabPool {
  private readonly slabs: Slab[] = [];
  private nextSlab = 1;
  private nextUse = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Copies `bytes` into a free slab, or answers undefined when they should be transferred. */
  place(bytes: Uint8Array): SlabResult | undefined {
    if (bytes.byteLength < MIN_SLAB_RESULT_BYTES) return undefined;
    this.dropIdle();
    const size = slabSizeFor(bytes.byteLength);
    // A free slab of up to 4× the result's own size: a 100-record page must not hold a slab
    // that a 25,000-record page then has to do without.
    const fits = (s: Slab) => s.use === 0 && s.memory.byteLength >= bytes.byteLength && s.memory.byteLength <= 4 * size;
    let slab = this.slabs.filter(fits).sort((a, b) => a.memory.byteLength - b.memory.byteLength)[0];
    if (!slab) {
      if (this.totalBytes() + size > MAX_SLAB_BYTES) return undefined;
      slab = { id: this.nextSlab++, memory: new SharedArrayBuffer(size), use: 0, freedAt: 0 };
      this.slabs.push(slab);
    }
    new Uint8Array(slab.memory, 0, bytes.byteLength).set(bytes);
    slab.use = this.nextUse++;
    return { slab: slab.id, use: slab.use, memory: slab.memory, length: bytes.byteLength };
  }

  /** The API thread is done with placement `use` of `slab` (a late word about an earlier placement is ignored). */
  free(slab: number, use: number): void {
    const s = this.slabs.find((x) => x.id === slab);
    if (!s || s.use !== use) return;
    s.use = 0;
    s.freedAt = this.now();
  }

  totalBytes(): number {
    return this.slabs.reduce((n, s) => n + s.memory.byteLength, 0);
  }

  private dropIdle(): void {
    const now = this.now();
    for (let i = this.slabs.length - 1; i >= 0; i--) {
      const s = this.slabs[i]!;
      if (s.use === 0 && now - s.freedAt > IDLE_SLAB_MS) this.slabs.splice(i, 1);
    }
  }
}

function slabSizeFor(resultBytes: number): number {
  if (resultBytes > SLAB_STEP_BYTES) return Math.ceil(resultBytes / SLAB_STEP_BYTES) * SLAB_STEP_BYTES;
  let size = MIN_SLAB_BYTES;
  while (size < resultBytes) size *= 2;
  return size;
}
