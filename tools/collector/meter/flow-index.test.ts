import { describe, expect, it } from 'vitest';
import { MeterCore } from './meter-core.js';

interface Entry {
  indexId: number;
  name: number;
}

/** A conversation's key as the index takes it (wasm/flow-index.ts): the kind word, VLAN, ends and ports. */
interface Key {
  kind: number;
  vlan: number;
  addresses: Uint32Array;
  srcPort: number;
  dstPort: number;
}

/** The WebAssembly index of a MeterCore alone, keeping entries by the ids it gives them, as the flow table does. */
class FlowIndex {
  senderFirst = false;
  private readonly wasm;
  private readonly byId: (Entry | undefined)[] = [];
  private readonly freeIds: number[] = [];

  constructor(maxSize: number) {
    this.wasm = new MeterCore({ frameBytes: 0, maxFlows: maxSize, idleMicros: 0, activeMicros: 0, lingerMicros: 0, inspectPerDirection: 0 }).wasm;
  }

  get size(): number {
    return this.wasm.size();
  }

  get capacity(): number {
    return this.wasm.capacity();
  }

  homeSlot(): number {
    return this.wasm.homeSlot();
  }

  find(k: Key): Entry | undefined {
    const a = k.addresses;
    const found = this.wasm.find(k.kind, k.vlan + 1, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], k.srcPort, k.dstPort);
    this.senderFirst = (found & 1) !== 0;
    return found < 2 ? undefined : this.byId[(found >>> 1) - 1];
  }

  insert(entry: Entry): void {
    const id = this.freeIds.pop() ?? this.byId.length;
    this.wasm.insert(id);
    this.byId[id] = entry;
    entry.indexId = id;
  }

  remove(entry: Entry): void {
    this.wasm.remove(entry.indexId);
    this.byId[entry.indexId] = undefined;
    this.freeIds.push(entry.indexId);
  }
}

/** A TCP conversation's key from a number, its addresses spread over every word as real keys are. */
function packetOf(n: number): Key {
  const addresses = new Uint32Array(8);
  for (let i = 0; i < 8; i++) addresses[i] = Math.imul(n + 1, 0x9e3779b1 + i) >>> 0;
  return { kind: 6, vlan: -1, addresses, srcPort: 1024 + (n % 60000), dstPort: 443 };
}

/** The same conversation, the other way. */
function reverse(h: Key): Key {
  const addresses = new Uint32Array(8);
  addresses.set(h.addresses.subarray(4), 0);
  addresses.set(h.addresses.subarray(0, 4), 4);
  return { ...h, addresses, srcPort: h.dstPort, dstPort: h.srcPort };
}

function add(index: FlowIndex, h: Key, name: number): Entry {
  expect(index.find(h)).toBeUndefined();
  const entry = { indexId: -1, name };
  index.insert(entry);
  return entry;
}

/** Every entry is found under its own key, both ways, and nothing else is. */
function expectConsistent(index: FlowIndex, present: Map<number, Entry>, absent: number[]): void {
  expect(index.size).toBe(present.size);
  for (const [n, entry] of present) {
    expect(index.find(packetOf(n))).toBe(entry);
    expect(index.find(reverse(packetOf(n)))).toBe(entry);
  }
  for (const n of absent) expect(index.find(packetOf(n))).toBeUndefined();
}

describe('FlowIndex', () => {
  it('finds both directions of a conversation under one key, and says which end sent', () => {
    const index = new FlowIndex(10);
    const packet = packetOf(1);
    const entry = add(index, packet, 1);
    const forward = index.find(packet) && index.senderFirst;
    expect(index.find(reverse(packet))).toBe(entry);
    expect(index.senderFirst).toBe(!forward);
    // One address at both ends (loopback): the ports order the ends.
    const loop: Key = { kind: 6, vlan: -1, addresses: new Uint32Array(8).fill(7), srcPort: 5000, dstPort: 80 };
    const looped = add(index, loop, 2);
    expect(index.senderFirst).toBe(false);
    expect(index.find(reverse(loop))).toBe(looped);
    expect(index.senderFirst).toBe(true);
  });

  it('keeps keys whose hashes share a home slot apart, through removal from the middle of their run', () => {
    // Keys with the same home slot at the initial 1,024 slots: the worst case for linear probing.
    const index = new FlowIndex(100);
    const byHome = new Map<number, number[]>();
    let colliding: number[] = [];
    for (let n = 0; colliding.length < 5; n++) {
      index.find(packetOf(n));
      const home = index.homeSlot();
      const same = [...(byHome.get(home) ?? []), n];
      byHome.set(home, same);
      if (same.length === 5) colliding = same;
    }
    const present = new Map(colliding.map((n) => [n, add(index, packetOf(n), n)]));
    expectConsistent(index, present, []);
    const removed: number[] = [];
    for (const n of [colliding[1], colliding[3], colliding[0]]) {
      index.remove(present.get(n)!);
      present.delete(n);
      removed.push(n);
      expectConsistent(index, present, removed);
    }
  });

  it('grows at half full, shrinks at an eighth, and stays consistent through random inserts and removals', () => {
    const index = new FlowIndex(100_000);
    const present = new Map<number, Entry>();
    let seed = 7;
    const random = (n: number) => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) >>> 0), seed % n);
    for (let n = 0; n < 5000; n++) present.set(n, add(index, packetOf(n), n));
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
    // Ids of removed flows are given again.
    for (let n = 5000; n < 9000; n++) present.set(n, add(index, packetOf(n), n));
    expect(Math.max(...[...present.values()].map((entry) => entry.indexId))).toBeLessThan(5000);
    expectConsistent(index, present, removed);
    for (const entry of present.values()) index.remove(entry);
    expect(index.size).toBe(0);
    expect(index.capacity).toBe(1024);
  });

  it('tells keys apart that differ in one field only', () => {
    const index = new FlowIndex(100);
    // Kinds as the table writes them: UDP, an ICMP echo, ICMP type 3 with code 1 and code 3.
    const variants: Array<(h: Key) => void> = [
      (h) => (h.kind = 17),
      (h) => (h.vlan = 0),
      (h) => (h.vlan = 1),
      (h) => (h.kind = 1 | 0x1000000),
      (h) => (h.kind = 1 | 0x2000000 | (3 << 8) | (1 << 16)),
      (h) => (h.kind = 1 | 0x2000000 | (3 << 8) | (3 << 16)),
      (h) => h.srcPort++,
      (h) => h.dstPort++,
      ...Array.from({ length: 8 }, (_, word) => (h: Key) => (h.addresses[word] ^= 1)),
    ];
    const entries = variants.map((change, n) => {
      const h = packetOf(1);
      change(h);
      return { h, entry: add(index, h, n) };
    });
    expect(index.find(packetOf(1))).toBeUndefined();
    for (const { h, entry } of entries) {
      expect(index.find(h)).toBe(entry);
      expect(index.find(reverse(h))).toBe(entry);
    }
  });

  it('refuses a size its memory cannot hold', () => {
    expect(() => new FlowIndex(0)).toThrow(RangeError);
    expect(() => new FlowIndex(1.5)).toThrow(RangeError);
    expect(() => new FlowIndex(2 ** 22 + 1)).toThrow(/1 to 4194304 flows/);
  });
});
