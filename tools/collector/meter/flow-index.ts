// Flows by key, in an open-addressing hash table over numeric keys: a flow key is FLOW_KEY_WORDS
// 32-bit words (flow-key.ts), kept in one typed array, so a packet's lookup builds no string and
// allocates nothing. Linear probing; a removal shifts the entries behind it back (no tombstones,
// so lookups never slow down as flows come and go). The table doubles when half full and halves
// when an eighth full: its memory follows the number of flows it holds.

import { mix32 } from '../flowgen/prng.js';

export const FLOW_KEY_WORDS = 11;
const MIN_CAPACITY = 1024;

/** What the index stores: it keeps the value's slot up to date, so removal needs no key. */
export interface Indexed {
  slot: number;
}

/** FNV-1a over the words, spread by the murmur3 finaliser. */
export function hashKey(key: Uint32Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < FLOW_KEY_WORDS; i++) h = Math.imul(h ^ key[i], 0x01000193);
  return mix32(h);
}

export class FlowIndex<T extends Indexed> {
  size = 0;
  private mask: number;
  private keys: Uint32Array;
  private hashes: Uint32Array;
  private values: (T | undefined)[];

  constructor(capacity = MIN_CAPACITY) {
    this.mask = capacity - 1;
    this.keys = new Uint32Array(capacity * FLOW_KEY_WORDS);
    this.hashes = new Uint32Array(capacity);
    this.values = new Array<T | undefined>(capacity).fill(undefined);
  }

  get capacity(): number {
    return this.mask + 1;
  }

  get(key: Uint32Array): T | undefined {
    const hash = hashKey(key);
    const { values, hashes, mask } = this;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = values[slot];
      if (value === undefined) return undefined;
      if (hashes[slot] === hash && this.keyAt(slot, key)) return value;
    }
  }

  /** Adds a value under a key the index does not hold. */
  insert(key: Uint32Array, value: T): void {
    if ((this.size + 1) * 2 > this.capacity) this.resize(this.capacity * 2);
    const hash = hashKey(key);
    let slot = hash & this.mask;
    while (this.values[slot] !== undefined) slot = (slot + 1) & this.mask;
    this.keys.set(key, slot * FLOW_KEY_WORDS);
    this.hashes[slot] = hash;
    this.values[slot] = value;
    value.slot = slot;
    this.size++;
  }

  /** Removes a value the index holds, then moves back the entries its slot kept from their home. */
  remove(value: T): void {
    const { values, hashes, keys, mask } = this;
    let hole = value.slot;
    values[hole] = undefined;
    this.size--;
    for (let slot = (hole + 1) & mask; values[slot] !== undefined; slot = (slot + 1) & mask) {
      // An entry may fill the hole when the hole lies between its home slot and where it sits.
      if (((slot - (hashes[slot] & mask)) & mask) < ((slot - hole) & mask)) continue;
      keys.copyWithin(hole * FLOW_KEY_WORDS, slot * FLOW_KEY_WORDS, (slot + 1) * FLOW_KEY_WORDS);
      hashes[hole] = hashes[slot];
      const moved = values[slot]!;
      values[hole] = moved;
      moved.slot = hole;
      values[slot] = undefined;
      hole = slot;
    }
    if (this.size * 8 < this.capacity && this.capacity > MIN_CAPACITY) this.resize(this.capacity / 2);
  }

  private keyAt(slot: number, key: Uint32Array): boolean {
    const keys = this.keys;
    const at = slot * FLOW_KEY_WORDS;
    for (let i = 0; i < FLOW_KEY_WORDS; i++) if (keys[at + i] !== key[i]) return false;
    return true;
  }

  private resize(capacity: number): void {
    const { keys, hashes, values } = this;
    this.mask = capacity - 1;
    this.keys = new Uint32Array(capacity * FLOW_KEY_WORDS);
    this.hashes = new Uint32Array(capacity);
    this.values = new Array<T | undefined>(capacity).fill(undefined);
    for (let from = 0; from < values.length; from++) {
      const value = values[from];
      if (value === undefined) continue;
      let slot = hashes[from] & this.mask;
      while (this.values[slot] !== undefined) slot = (slot + 1) & this.mask;
      // Word by word: a subarray per entry would be an allocation per flow at every resize.
      for (let w = 0; w < FLOW_KEY_WORDS; w++) this.keys[slot * FLOW_KEY_WORDS + w] = keys[from * FLOW_KEY_WORDS + w];
      this.hashes[slot] = hashes[from];
      this.values[slot] = value;
      value.slot = slot;
    }
  }
}
