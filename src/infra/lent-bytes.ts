/**
 * Bytes lent by their producer, to be given back once written or copied. The chDB thread
 * (flowstore/chdb-thread.ts) lends big results in memory shared with the API thread and reuses
 * that memory as soon as it is given back, instead of learning from a garbage collection that
 * nobody holds it any more. Every view of the same memory gives back the whole loan; giving back
 * bytes that were not lent, or twice, does nothing. Lent bytes never given back are reclaimed
 * when collected (the producer's FinalizationRegistry), so forgetting costs memory for a while,
 * never correctness.
 */
const loans = new WeakMap<ArrayBufferLike, () => void>();

export function lend(bytes: Uint8Array, giveBack: () => void): void {
  loans.set(bytes.buffer, giveBack);
}

export function giveBack(bytes: Uint8Array): void {
  const back = loans.get(bytes.buffer);
  if (!back) return;
  loans.delete(bytes.buffer);
  back();
}
