import { describe, expect, it } from 'vitest';
import { FlowIndex } from './flow-index.js';
import { PacketHeaders } from './packet.js';

interface Entry {
  indexId: number;
  name: number;
}

/** A TCP packet from a number, its addresses spread over every word as real keys are. */
function packetOf(n: number): PacketHeaders {
  const h = new PacketHeaders();
  h.protocol = 6;
  h.ipVersion = 6;
  for (let i = 0; i < 8; i++) h.addresses[i] = Math.imul(n + 1, 0x9e3779b1 + i) >>> 0;
  h.srcPort = 1024 + (n % 60000);
  h.dstPort = 443;
  return h;
}

/** The same conversation, the other way. */
function reverse(h: PacketHeaders): PacketHeaders {
  const r = new PacketHeaders();
  Object.assign(r, { protocol: h.protocol, ipVersion: h.ipVersion, vlan: h.vlan, icmpType: h.icmpType, icmpCode: h.icmpCode });
  r.addresses.set(h.addresses.subarray(4), 0);
  r.addresses.set(h.addresses.subarray(0, 4), 4);
  r.srcPort = h.dstPort;
  r.dstPort = h.srcPort;
  return r;
}

function add(index: FlowIndex<Entry>, h: PacketHeaders, name: number): Entry {
  expect(index.find(h)).toBeUndefined();
  const entry = { indexId: -1, name };
  index.insert(entry);
  return entry;
}

/** Every entry is found under its own key, both ways, and nothing else is. */
function expectConsistent(index: FlowIndex<Entry>, present: Map<number, Entry>, absent: number[]): void {
  expect(index.size).toBe(present.size);
  for (const [n, entry] of present) {
    expect(index.find(packetOf(n))).toBe(entry);
    expect(index.find(reverse(packetOf(n)))).toBe(entry);
  }
  for (const n of absent) expect(index.find(packetOf(n))).toBeUndefined();
}

describe('FlowIndex', () => {
  it('finds both directions of a conversation under one key, and says which end sent', () => {
    const index = new FlowIndex<Entry>(10);
    const packet = packetOf(1);
    const entry = add(index, packet, 1);
    const forward = index.find(packet) && index.senderFirst;
    expect(index.find(reverse(packet))).toBe(entry);
    expect(index.senderFirst).toBe(!forward);
    // One address at both ends (loopback): the ports order the ends.
    const loop = new PacketHeaders();
    loop.addresses.fill(7);
    loop.srcPort = 5000;
    loop.dstPort = 80;
    const looped = add(index, loop, 2);
    expect(index.senderFirst).toBe(false);
    expect(index.find(reverse(loop))).toBe(looped);
    expect(index.senderFirst).toBe(true);
  });

  it('keeps keys whose hashes share a home slot apart, through removal from the middle of their run', () => {
    // Keys with the same home slot at the initial 1,024 slots: the worst case for linear probing.
    const index = new FlowIndex<Entry>(100);
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
    const index = new FlowIndex<Entry>(100_000);
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
    const index = new FlowIndex<Entry>(100);
    const variants: Array<(h: PacketHeaders) => void> = [
      (h) => (h.protocol = 17),
      (h) => (h.vlan = 0),
      (h) => (h.vlan = 1),
      (h) => ((h.protocol = 1), (h.icmpType = 8), (h.icmpCode = 0)),
      (h) => ((h.protocol = 1), (h.icmpType = 3), (h.icmpCode = 1)),
      (h) => ((h.protocol = 1), (h.icmpType = 3), (h.icmpCode = 3)),
      (h) => h.srcPort++,
      (h) => h.dstPort++,
      ...Array.from({ length: 8 }, (_, word) => (h: PacketHeaders) => (h.addresses[word] ^= 1)),
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

  it('holds no more than its size, and refuses what would corrupt it', () => {
    expect(() => new FlowIndex<Entry>(0)).toThrow(RangeError);
    expect(() => new FlowIndex<Entry>(1.5)).toThrow(RangeError);
    expect(() => new FlowIndex<Entry>(2 ** 29)).toThrow(RangeError);
    const index = new FlowIndex<Entry>(2);
    const first = add(index, packetOf(1), 1);
    add(index, packetOf(2), 2);
    index.find(packetOf(3));
    expect(() => index.insert({ indexId: -1, name: 3 })).toThrow(/full \(2 flows\)/);
    index.remove(first);
    expect(() => index.remove(first)).toThrow(/does not hold/);
    expect(index.size).toBe(1);
  });
});
