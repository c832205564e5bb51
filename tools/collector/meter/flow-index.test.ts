import { describe, expect, it } from 'vitest';
import { FLOW_KEY_WORDS, FlowIndex, hashKey } from './flow-index.js';

interface Entry {
  slot: number;
  name: number;
}

/** A key from a number, spread over every word as flow keys are. */
function keyOf(n: number): Uint32Array {
  const key = new Uint32Array(FLOW_KEY_WORDS);
  for (let i = 0; i < FLOW_KEY_WORDS; i++) key[i] = Math.imul(n + 1, 0x9e3779b1 + i) >>> 0;
  return key;
}

/** Every entry is found under its own key at the slot it records, and nothing else is. */
function expectConsistent(index: FlowIndex<Entry>, present: Map<number, Entry>, absent: number[]): void {
  expect(index.size).toBe(present.size);
  for (const [n, entry] of present) expect(index.get(keyOf(n))).toBe(entry);
  for (const n of absent) expect(index.get(keyOf(n))).toBeUndefined();
}

describe('FlowIndex', () => {
  it('keeps keys whose hashes share a home slot apart, through removal from the middle of their run', () => {
    // Keys with the same home slot at the initial 1,024 slots: the worst case for linear probing.
    const byHome = new Map<number, number[]>();
    let colliding: number[] = [];
    for (let n = 0; colliding.length < 5; n++) {
      const home = hashKey(keyOf(n)) & 1023;
      const same = [...(byHome.get(home) ?? []), n];
      byHome.set(home, same);
      if (same.length === 5) colliding = same;
    }
    const index = new FlowIndex<Entry>();
    const present = new Map(colliding.map((n) => [n, { slot: -1, name: n }]));
    for (const [n, entry] of present) index.insert(keyOf(n), entry);
    expectConsistent(index, present, []);
    for (const n of [colliding[1], colliding[3], colliding[0]]) {
      index.remove(present.get(n)!);
      present.delete(n);
      expectConsistent(
        index,
        present,
        [colliding[1], colliding[3], colliding[0]].filter((m) => !present.has(m)),
      );
    }
  });

  it('grows at half full, shrinks at an eighth, and stays consistent through random inserts and removals', () => {
    const index = new FlowIndex<Entry>();
    const present = new Map<number, Entry>();
    let seed = 7;
    const random = (n: number) => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) >>> 0), seed % n);
    for (let n = 0; n < 5000; n++) {
      const entry = { slot: -1, name: n };
      index.insert(keyOf(n), entry);
      present.set(n, entry);
    }
    expect(index.capacity).toBe(16384);
    const removed: number[] = [];
    while (present.size > 500) {
      const n = [...present.keys()][random(present.size)];
      index.remove(present.get(n)!);
      present.delete(n);
      removed.push(n);
    }
    expectConsistent(index, present, removed);
    expect(index.capacity).toBeLessThanOrEqual(4096);
    for (const entry of present.values()) index.remove(entry);
    expect(index.size).toBe(0);
    expect(index.capacity).toBe(1024);
  });

  it('tells keys apart that differ in one word only', () => {
    const index = new FlowIndex<Entry>();
    const base = keyOf(1);
    const entries = Array.from({ length: FLOW_KEY_WORDS }, (_, word) => {
      const key = base.slice();
      key[word] ^= 1;
      const entry = { slot: -1, name: word };
      index.insert(key, entry);
      return { key, entry };
    });
    expect(index.get(base)).toBeUndefined();
    for (const { key, entry } of entries) expect(index.get(key)).toBe(entry);
  });
});
