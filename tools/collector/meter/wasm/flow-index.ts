// The flow index of the meter, in WebAssembly (AssemblyScript, built by ../wasm-module.ts): from
// a packet's headers to the id of its flow. It runs once per packet; as JavaScript it was the
// largest single cost of a first metering run, compiled and deoptimised on the way (docs/meter.md).
//
// A flow key is KEY_WORDS 32-bit words: the kind (protocol; ICMP echo or type and code, from
// flowKind in ../flow-key.ts), VLAN + 1, the lower end's address (4 words, IPv4 in the first), the
// higher end's, and the two ports (the lower end's in the high half). Ends are ordered by address,
// then port, so both directions of a conversation write the same key.
//
// The table is open addressing with linear probing over FNV-1a hashes spread by murmur3's
// finaliser. A removal shifts back the entries behind it in their probe run (no tombstones, so
// lookups stay short however many flows came and went). It doubles when half full and halves
// when an eighth full, never under MIN_CAPACITY slots.
//
// Memory: the latest key at KEY; payload entropy's part (payload-entropy.ts); from IDS, each flow
// id's slot (4 bytes per id, up to the index's maximum size); then the table, ENTRY bytes per
// slot: hash, id + 1 (0: empty), key. A resize builds the new table after the current one and
// moves it down.

const KEY: usize = 0;
const KEY_WORDS: u32 = 11;
const KEY_BYTES: usize = <usize>KEY_WORDS * 4;
const ENTRY: usize = 8 + KEY_BYTES;
const MIN_CAPACITY: u32 = 1024;

let ids: usize = 0;
let maxIds: u32 = 0;
let table: usize = 0;
let mask: u32 = MIN_CAPACITY - 1;
let count: u32 = 0;
let keyHash: u32 = 0;

/**
 * Sets up an empty index of at most `limit` flows, with ids up to limit + 1, its memory from
 * `base`. Returns where its memory ends, room for its largest table and the one a resize builds
 * beside it, which the caller reserves: the memory never grows while flows come and go.
 */
export function configureIndex(limit: u32, base: usize): usize {
  maxIds = limit + 2;
  ids = base;
  table = (ids + <usize>maxIds * 4 + 63) & ~(<usize>63);
  mask = MIN_CAPACITY - 1;
  count = 0;
  let largest: u32 = MIN_CAPACITY;
  while (largest < limit * 2) largest <<= 1;
  const end = table + ((<usize>largest * 3) / 2) * ENTRY;
  const pages = <i32>((end + 0xffff) >>> 16) - memory.size();
  if (pages > 0 && memory.grow(pages) < 0) unreachable();
  memory.fill(table, 0, <usize>MIN_CAPACITY * ENTRY);
  return end;
}

export function size(): u32 {
  return count;
}

export function capacity(): u32 {
  return mask + 1;
}

/** The slot where the probe for the latest key starts. */
export function homeSlot(): u32 {
  return keyHash & mask;
}

/**
 * Writes the key of a packet's conversation and looks it up. Returns (id + 1) · 2 when found, else
 * 0, plus 1 when the packet's sender is the lower end of the key.
 */
export function find(kind: u32, vlan: u32, s0: u32, s1: u32, s2: u32, s3: u32, d0: u32, d1: u32, d2: u32, d3: u32, srcPort: u32, dstPort: u32): u32 {
  const senderFirst = before(s0, s1, s2, s3, d0, d1, d2, d3, srcPort, dstPort);
  store<u32>(KEY, kind);
  store<u32>(KEY, vlan, 4);
  if (senderFirst) {
    writeEnds(s0, s1, s2, s3, d0, d1, d2, d3);
    store<u32>(KEY, (srcPort << 16) | dstPort, 40);
  } else {
    writeEnds(d0, d1, d2, d3, s0, s1, s2, s3);
    store<u32>(KEY, (dstPort << 16) | srcPort, 40);
  }
  let h: u32 = 0x811c9dc5;
  for (let at: usize = 0; at < KEY_BYTES; at += 4) h = (h ^ load<u32>(KEY + at)) * 0x01000193;
  keyHash = finalise(h);
  const side: u32 = senderFirst ? 1 : 0;
  for (let slot = keyHash & mask; ; slot = (slot + 1) & mask) {
    const entry = table + <usize>slot * ENTRY;
    const id1 = load<u32>(entry, 4);
    if (id1 == 0) return side;
    if (load<u32>(entry) == keyHash && sameKey(entry + 8)) return (id1 << 1) | side;
  }
  // Never reached (the table is at most half full, so a probe meets an empty slot); AssemblyScript asks for a return.
  return side;
}

/** Adds flow `id` under the key of the latest find(), which found nothing (removals since are fine). */
export function insert(id: u32): void {
  if (id >= maxIds) unreachable();
  if ((count + 1) * 2 > mask + 1) resize((mask + 1) * 2);
  let slot = keyHash & mask;
  while (load<u32>(table + <usize>slot * ENTRY, 4) != 0) slot = (slot + 1) & mask;
  const entry = table + <usize>slot * ENTRY;
  store<u32>(entry, keyHash);
  store<u32>(entry, id + 1, 4);
  memory.copy(entry + 8, KEY, KEY_BYTES);
  store<u32>(ids + <usize>id * 4, slot);
  count++;
}

/** Removes flow `id`, then moves back the entries its slot kept from their home. */
export function remove(id: u32): void {
  let hole = load<u32>(ids + <usize>id * 4);
  store<u32>(table + <usize>hole * ENTRY, 0, 4);
  count--;
  for (let slot = (hole + 1) & mask; ; slot = (slot + 1) & mask) {
    const entry = table + <usize>slot * ENTRY;
    const id1 = load<u32>(entry, 4);
    if (id1 == 0) break;
    // An entry may fill the hole when the hole lies between its home slot and where it sits.
    if (((slot - (load<u32>(entry) & mask)) & mask) < ((slot - hole) & mask)) continue;
    memory.copy(table + <usize>hole * ENTRY, entry, ENTRY);
    store<u32>(ids + <usize>(id1 - 1) * 4, hole);
    store<u32>(entry, 0, 4);
    hole = slot;
  }
  if (count * 8 < mask + 1 && mask + 1 > MIN_CAPACITY) resize((mask + 1) / 2);
}

/** Whether the source end sorts before the destination end: by address, then port. */
function before(s0: u32, s1: u32, s2: u32, s3: u32, d0: u32, d1: u32, d2: u32, d3: u32, srcPort: u32, dstPort: u32): bool {
  if (s0 != d0) return s0 < d0;
  if (s1 != d1) return s1 < d1;
  if (s2 != d2) return s2 < d2;
  if (s3 != d3) return s3 < d3;
  return srcPort <= dstPort;
}

function writeEnds(l0: u32, l1: u32, l2: u32, l3: u32, h0: u32, h1: u32, h2: u32, h3: u32): void {
  store<u32>(KEY, l0, 8);
  store<u32>(KEY, l1, 12);
  store<u32>(KEY, l2, 16);
  store<u32>(KEY, l3, 20);
  store<u32>(KEY, h0, 24);
  store<u32>(KEY, h1, 28);
  store<u32>(KEY, h2, 32);
  store<u32>(KEY, h3, 36);
}

function sameKey(at: usize): bool {
  for (let i: usize = 0; i < KEY_BYTES; i += 4) if (load<u32>(at + i) != load<u32>(KEY + i)) return false;
  return true;
}

/** murmur3's 32-bit finaliser. */
function finalise(h: u32): u32 {
  h ^= h >>> 16;
  h *= 0x85ebca6b;
  h ^= h >>> 13;
  h *= 0xc2b2ae35;
  return h ^ (h >>> 16);
}

function resize(newCapacity: u32): void {
  const oldCapacity = mask + 1;
  const built = table + <usize>oldCapacity * ENTRY;
  memory.fill(built, 0, <usize>newCapacity * ENTRY);
  const newMask = newCapacity - 1;
  for (let from: u32 = 0; from < oldCapacity; from++) {
    const entry = table + <usize>from * ENTRY;
    const id1 = load<u32>(entry, 4);
    if (id1 == 0) continue;
    let slot = load<u32>(entry) & newMask;
    while (load<u32>(built + <usize>slot * ENTRY, 4) != 0) slot = (slot + 1) & newMask;
    memory.copy(built + <usize>slot * ENTRY, entry, ENTRY);
    store<u32>(ids + <usize>(id1 - 1) * 4, slot);
  }
  memory.copy(table, built, <usize>newCapacity * ENTRY);
  mask = newMask;
}
