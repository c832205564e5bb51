// The record's `key` and `session_key` hashes (../flow-record.ts), taken from a flow's identity
// words when it opens: murmur3's 32-bit hash over the words, either IP version alike. `key`
// covers protocol, VLAN, both ends and both ports, `session_key` protocol, both ends and the
// server's port, so a client's repeated connections to one service share it. Hashing the
// identity's text instead cost about 1,200 instructions a flow, 4% of a first metering run.

const C1: u32 = 0xcc9e2d51;
const C2: u32 = 0x1b873593;

/** One word into murmur3's running hash. */
function mixIn(h: u32, word: u32): u32 {
  h ^= rotl<u32>(word * C1, 15) * C2;
  return rotl<u32>(h, 13) * 5 + 0xe6546b64;
}

/** murmur3's finaliser, with the count of words hashed. */
function finish(h: u32, words: u32): u32 {
  h ^= words * 4;
  h ^= h >>> 16;
  h *= 0x85ebca6b;
  h ^= h >>> 13;
  h *= 0xc2b2ae35;
  return h ^ (h >>> 16);
}

/** The 4 words of the address at `at`. */
function address(h: u32, at: usize): u32 {
  return mixIn(mixIn(mixIn(mixIn(h, load<u32>(at)), load<u32>(at, 4)), load<u32>(at, 8)), load<u32>(at, 12));
}

/** protocol, VLAN (-1: none), the source's address and port, the destination's. */
export function keyHash(protocol: u32, vlan: i32, src: usize, srcPort: u32, dst: usize, dstPort: u32): u32 {
  return finish(mixIn(address(mixIn(address(mixIn(mixIn(0, protocol), <u32>vlan), src), srcPort), dst), dstPort), 12);
}

/** protocol, the source's address, the destination's address and port. */
export function sessionHash(protocol: u32, src: usize, dst: usize, dstPort: u32): u32 {
  return finish(mixIn(address(address(mixIn(0, protocol), src), dst), dstPort), 10);
}
