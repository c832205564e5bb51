// The meter's per-packet work in WebAssembly: ../flow-table.ts says what a flow is and when its
// record leaves; this is that table's counting part. Per frame, meterFrame() decodes it
// (decode.ts), finds or opens its flow (flow-index.ts), counts it (tallies, TCP flags, payload
// entropy), follows TCP to its end, keeps the flows in recency order and ends those due. It
// returns what JavaScript must do: show a payload to the inspectors, note a first fragment, take
// the flows ended (whose identity and counters it reads once). JavaScript keeps a flow's state
// only once a payload or fragment gives it something to hold, so most packets cost it one call.
//
// Memory, all sized by configure() (it never grows after, so JavaScript's views stay valid): the
// index's key at 0; payload entropy's part; the header words (decode.ts); RECORD; the frames
// metered; the server-port maps; the payload selection; one SLOT per flow id; the free ids; the
// ended queue; the cut counters; the index's ids and table.

import { entropy } from './payload-entropy';
// prettier-ignore
import { ADDRESSES, CHUNKS, decode, RECORD_BYTES, DST_PORT, FRAGMENT, FRAGMENT_ID, HAS_PORTS, HAS_TCP, HEADERS, ICMP_CODE, ICMP_TYPE, IP_LENGTH, IP_VERSION, PAYLOAD_END, PAYLOAD_LENGTH, PAYLOAD_START, PROTOCOL, SRC_PORT, TCP_ACK, TCP_FLAGS, TCP_SEQ, TCP_WINDOW, VLAN } from './decode';
import { configureIndex, find, insert, remove, size } from './flow-index';
import { keyHash, sessionHash } from './identity-hash';
import { placeSelection, selects, showEveryPayload } from './payload-selection';

// Counters: 33 doubles at the start of a slot, in the order ../flow-state.ts reads them.
const TALLY_SRC_BYTES: usize = 0;
const TALLY_DST_BYTES: usize = 4 * 8;
const TALLY_FRAMES: usize = 8 * 8;
const TALLY_ENTROPY: usize = 12 * 8;
const TALLY_WINDOW: usize = 16 * 8;
const TALLY_GAPS: usize = 20 * 8;
const START: usize = 24 * 8;
const LAST: usize = 25 * 8;
const MIN_GAP: usize = 26 * 8;
const MAX_GAP: usize = 27 * 8;
const FLAGS: usize = 28 * 8;
const FRAGMENTS: usize = 29 * 8;
const RETRANS_PACKETS: usize = 30 * 8;
const RETRANS_BYTES: usize = 31 * 8;
const HANDSHAKE_RTT: usize = 32 * 8;
export const COUNTER_WORDS: u32 = 33;
const COUNTER_BYTES: usize = <usize>COUNTER_WORDS * 8;
// The rest of a slot.
const END_MICROS: usize = COUNTER_BYTES; // when its record became due
const DEADLINE: usize = END_MICROS + 8; // the end of its TCP linger
const SYN_MICROS: usize = DEADLINE + 8;
const SYN_ACK_MICROS: usize = SYN_MICROS + 8;
const OLDER: usize = SYN_ACK_MICROS + 8; // links in RECENCY (see append)
const NEWER: usize = OLDER + 4;
const LINGER_PREV: usize = NEWER + 4; // links in LINGERING
const LINGER_NEXT: usize = LINGER_PREV + 4;
const SRC_END: usize = LINGER_NEXT + 4; // sequence ends (u32), valid by TCP_BITS
const DST_END: usize = SRC_END + 4;
const SRC_FIN_END: usize = DST_END + 4;
const DST_FIN_END: usize = SRC_FIN_END + 4;
const FINAL_ACK: usize = DST_FIN_END + 4;
const TCP_BITS: usize = FINAL_ACK + 4;
/**
 * Who the flow is between, as its first packet showed it, initiator first (IDENTITY_WORDS u32
 * words, which ../flow-key.ts reads): the ends' addresses (4 words each), their ports (ICMP: 0 and
 * type · 256 + code), protocol, VLAN (-1: none), the first ICMP type and code (-1: none), IP
 * version, whether the first packet was an answer (the initiator is its receiver), and the
 * record's key and session hashes (identity-hash.ts).
 */
export const IDENTITY: usize = TCP_BITS + 4;
export const IDENTITY_WORDS: u32 = 18;
const ID_ADDRESSES: usize = IDENTITY;
const ID_SRC_PORT: usize = IDENTITY + 32;
const ID_DST_PORT: usize = IDENTITY + 36;
const ID_PROTOCOL: usize = IDENTITY + 40;
const ID_VLAN: usize = IDENTITY + 44;
const ID_ICMP_TYPE: usize = IDENTITY + 48;
const ID_ICMP_CODE: usize = IDENTITY + 52;
const ID_IP_VERSION: usize = IDENTITY + 56;
const ID_FLIPPED: usize = IDENTITY + 60;
const ID_KEY_HASH: usize = IDENTITY + 64;
const ID_SESSION_HASH: usize = IDENTITY + 68;
const PHASE: usize = IDENTITY + <usize>IDENTITY_WORDS * 4; // u8: OPEN, CLOSING, CLOSED
const INITIATOR_FIRST: usize = PHASE + 1; // u8
const INSPECTED_SRC: usize = INITIATOR_FIRST + 1; // u8
const INSPECTED_DST: usize = INSPECTED_SRC + 1; // u8
const DNS_EXCHANGE: usize = INSPECTED_DST + 1; // u8: UDP to port 53, ended by its answer
const IN_LINGERING: usize = DNS_EXCHANGE + 1; // u8
const SLOT: usize = (IN_LINGERING + 1 + 7) & ~(<usize>7);

const HAS_SRC_END: u32 = 1;
const HAS_DST_END: u32 = 2;
const HAS_SRC_FIN: u32 = 4;
const HAS_DST_FIN: u32 = 8;
const HAS_FINAL_ACK: u32 = 16;
const FINAL_ACK_FROM_SRC: u32 = 32;
const RTT_MEASURED: u32 = 64;

const OPEN: u8 = 0;
const CLOSING: u8 = 1;
const CLOSED: u8 = 2;

const NONE: u32 = 0xffffffff;
const TCP: u32 = 6;
const UDP: u32 = 17;
const FIN: u32 = 0x01;
const SYN: u32 = 0x02;
const RST: u32 = 0x04;
const ACK: u32 = 0x10;

// What meterFrame() asks of JavaScript: bits of its result (the high byte: a decode drop reason).
export const INSPECT: u32 = 2; // show the payload to the inspectors (flow STATE_FLOW, STATE_FROM_SRC)
export const ENDED: u32 = 4; // flows ended: take them (STATE_ENDED entries), then release()
export const FIRST_FRAGMENT: u32 = 8; // the packet is a first fragment of flow STATE_FLOW
export const LATER_FRAGMENT: u32 = 16; // a later fragment: JavaScript finds its flow (countFragment)
export const DROPPED_SHIFT: u32 = 24;

/** Server-like ports (../well-known.ts's looksLikeServerPort, written by JavaScript): a bit per port, TCP then UDP. */
export let PORTS: usize = 0;
const PORT_MAP_BYTES: usize = 65536 / 8;
let slots: usize = 0;
let freeIds: usize = 0;
let freeCount: u32 = 0;
/** Ended flows, in the order their records are due: id · 2, plus 1 for a cut (its counters at CUT). */
export let ENDED_QUEUE: usize = 0;
export let CUT: usize = 0;
/**
 * What JavaScript reads after a call, as u32 words: STATE_ENDED entries in the ended queue, of
 * which STATE_BEFORE_INSPECT came before the packet's inspection (a cut takes the hints from
 * before it); the packet's flow and whether it travels src → dst.
 */
export let STATE: usize = 0;
export const STATE_ENDED: u32 = 0;
export const STATE_BEFORE_INSPECT: u32 = 1;
export const STATE_FLOW: u32 = 2;
export const STATE_FROM_SRC: u32 = 3;
/** After meterPcap(): the result of the frame it stopped after (0: none), and that frame's length; its time is the f64 at STATE_TS. */
export const STATE_RESULT: u32 = 4;
export const STATE_WIRE_LENGTH: u32 = 5;
export const STATE_TS: u32 = 24;
let endedCount: u32 = 0;
let endedBeforeInspect: u32 = 0;

let maxFlows: u32 = 0;
let idleMicros: f64 = 0;
let activeMicros: f64 = 0;
let lingerMicros: f64 = 0;
let inspectPerDirection: u32 = 0;
let clock: f64 = 0;
/** No record is due before this packet time (see nextDue in ../flow-table.ts). */
let nextDue: f64 = Infinity;
/** The flows, least recently seen first; ended TCP flows lingering, earliest deadline first (see append). */
let RECENCY: usize = 0;
let LINGERING: usize = 0;

/** Frames given to meterFrame, and the newest time of a packet counted. */
export let framesRead: f64 = 0;
export let lastPacketMicros: f64 = -Infinity;
export let packets: f64 = 0;
export let flows: f64 = 0;
export let records: f64 = 0;
export let evicted: f64 = 0;
export let activeCuts: f64 = 0;
export let fragments: f64 = 0;

/**
 * Sizes the memory once: frames of `chunkBytes`, up to `limit` flows active. The entropy tables,
 * port maps and payload selection are JavaScript's to write next.
 */
export function configure(chunkBytes: u32, limit: u32, idle: f64, active: f64, linger: f64, perDirection: u32): void {
  maxFlows = limit;
  idleMicros = idle;
  activeMicros = active;
  lingerMicros = linger;
  inspectPerDirection = perDirection;
  PORTS = align(CHUNKS + <usize>chunkBytes);
  slots = align(placeSelection(align(PORTS + 2 * PORT_MAP_BYTES)));
  // Two more ids than flows: an evicted flow and one a new connection ended wait for JavaScript beside a full table.
  const ids = limit + 2;
  freeIds = align(slots + <usize>ids * SLOT);
  ENDED_QUEUE = align(freeIds + <usize>ids * 4);
  CUT = align(ENDED_QUEUE + <usize>(ids + 1) * 4);
  STATE = align(CUT + COUNTER_BYTES);
  RECENCY = STATE + 32;
  LINGERING = RECENCY + 8;
  const end = configureIndex(limit, STATE + 64);
  const pages = <i32>((end + 0xffff) >>> 16) - memory.size();
  if (pages > 0 && memory.grow(pages) < 0) unreachable();
  memory.fill(PORTS, 0, 2 * PORT_MAP_BYTES);
  showEveryPayload();
  for (let id: u32 = 0; id < ids; id++) store<u32>(freeIds + <usize>id * 4, ids - 1 - id);
  store<u64>(RECENCY, <u64>-1);
  store<u64>(LINGERING, <u64>-1);
  freeCount = ids;
}

/** Where flow `id`'s slot starts (its counters). */
export function slotOf(id: u32): usize {
  return slots + <usize>id * SLOT;
}

/**
 * Meters the pcap records in memory[at, end) that it can take whole, until one ends at or past
 * `until`, or after a frame whose result JavaScript must follow (STATE_RESULT). Returns where it
 * stopped: a record it cannot take (cut by `end`, or longer than a capture record can be) is
 * JavaScript's capture reader's, which counts what is wrong with it.
 */
export function meterPcap(at: usize, end: usize, until: usize, littleEndian: bool, nanos: bool, linkType: u32): usize {
  store<u32>(STATE + STATE_RESULT * 4, 0);
  while (at < until && end - at >= 16) {
    const captured = pcapWord(at + 8, littleEndian);
    if (captured > <u32>RECORD_BYTES || end - at - 16 < <usize>captured) break;
    const fraction = <f64>pcapWord(at + 4, littleEndian);
    const ts = <f64>pcapWord(at, littleEndian) * 1e6 + (nanos ? round(fraction / 1000) : fraction);
    const original = pcapWord(at + 12, littleEndian);
    const wireLength = original > captured ? original : captured;
    const result = meterFrame(ts, linkType, wireLength, at + 16, at + 16 + captured);
    at += 16 + <usize>captured;
    if (result != 0) {
      store<u32>(STATE + STATE_RESULT * 4, result);
      store<u32>(STATE + STATE_WIRE_LENGTH * 4, wireLength);
      store<f64>(STATE + STATE_TS, ts);
      break;
    }
  }
  return at;
}

function pcapWord(at: usize, littleEndian: bool): u32 {
  const word = load<u32>(at);
  return littleEndian ? word : bswap<u32>(word);
}

/** Meters the frame memory[start, end): see the result bits above. */
export function meterFrame(ts: f64, linkType: u32, wireLength: u32, start: usize, end: usize): u32 {
  framesRead += 1;
  const dropped = decode(start, end, linkType);
  if (dropped != 0) return dropped << DROPPED_SHIFT;
  return meterHeaders(ts, wireLength);
}

/** Meters the packet in the header words (meterFrame, or JavaScript's hand-made packet). */
export function meterHeaders(ts: f64, wireLength: u32): u32 {
  endedCount = 0;
  endedBeforeInspect = 0;
  packets += 1;
  if (ts > clock) clock = ts;
  if (ts > lastPacketMicros) lastPacketMicros = ts;
  const fragment = get(FRAGMENT);
  if (fragment != 0) fragments += 1;
  if (fragment == 2) return report(LATER_FRAGMENT);

  let result: u32 = 0;
  const protocol = <u32>get(PROTOCOL);
  const icmpType = get(ICMP_TYPE);
  const found = find(
    flowKind(protocol, icmpType),
    <u32>(get(VLAN) + 1),
    word(0),
    word(1),
    word(2),
    word(3),
    word(4),
    word(5),
    word(6),
    word(7),
    <u32>get(SRC_PORT),
    <u32>get(DST_PORT),
  );
  const senderFirst = (found & 1) != 0;
  let id = found < 2 ? NONE : (found >>> 1) - 1;
  if (id != NONE) {
    const slot = slotOf(id);
    if (load<u32>(slot, ID_PROTOCOL) == TCP && load<u8>(slot, PHASE) != OPEN && isConnectionStart()) {
      // A new connection on the same ports after the old one ended.
      finish(id);
      id = NONE;
    } else if (ts - load<f64>(slot, START) >= activeMicros) {
      memory.copy(CUT, slot, COUNTER_BYTES);
      pushEnded((id << 1) | 1);
      restart(slot, ts);
      records += 1;
      activeCuts += 1;
    }
  }
  if (id == NONE) id = open(ts, senderFirst, protocol, icmpType);
  touch(id);
  const slot = slotOf(id);
  const fromSrc = directionOf(slot, senderFirst, protocol, icmpType);
  const isTcp = load<u32>(slot, ID_PROTOCOL) == TCP;
  const wasOpen = isTcp && load<u8>(slot, PHASE) == OPEN;
  add(slot, ts, wireLength, fromSrc);
  store<u32>(STATE + STATE_FLOW * 4, id);
  store<u32>(STATE + STATE_FROM_SRC * 4, <u32>fromSrc);
  endedBeforeInspect = endedCount;
  if (inspectPerDirection > 0 && get(PAYLOAD_END) > get(PAYLOAD_START)) {
    const at = fromSrc ? INSPECTED_SRC : INSPECTED_DST;
    const seen = <u32>load<u8>(slot + at);
    if (seen < inspectPerDirection) {
      store<u8>(slot + at, <u8>(seen + 1));
      const hasPorts = get(HAS_PORTS) != 0;
      if (selects(protocol, hasPorts, <u32>get(SRC_PORT), <u32>get(DST_PORT), <usize>get(PAYLOAD_START), <usize>get(PAYLOAD_END), fromSrc)) result |= INSPECT;
    }
  }
  if (fragment == 1 && load<f64>(HEADERS + FRAGMENT_ID) >= 0) result |= FIRST_FRAGMENT;

  const phase = isTcp ? load<u8>(slot, PHASE) : OPEN;
  if (phase == CLOSED || (!fromSrc && load<u8>(slot, DNS_EXCHANGE) != 0)) finish(id);
  else if (wasOpen && phase == CLOSING) {
    const deadline = ts + lingerMicros;
    store<f64>(slot, deadline, DEADLINE);
    store<u8>(slot, 1, IN_LINGERING);
    append(LINGERING, LINGER_PREV, id);
    if (deadline < nextDue) nextDue = deadline;
  }
  advanceTo(ts);
  return report(result);
}

/** The result, with the ENDED bit when flows ended, and the ended counts in STATE. */
function report(result: u32): u32 {
  store<u32>(STATE + STATE_ENDED * 4, endedCount);
  store<u32>(STATE + STATE_BEFORE_INSPECT * 4, endedBeforeInspect);
  return endedCount > 0 ? result | ENDED : result;
}

/** A later fragment whose first fragment's flow JavaScript found: counted there, as sent `fromSrc`. */
export function countFragment(id: u32, fromSrc: bool, ts: f64, wireLength: u32): void {
  touch(id);
  add(slotOf(id), ts, wireLength, fromSrc);
}

/** Ends the flows due by `now` (packet time); the ENDED bit when some did. */
export function advance(now: f64): u32 {
  endedCount = 0;
  endedBeforeInspect = 0;
  advanceTo(now);
  return report(0);
}

/** Ends every flow: the end of the input. */
export function flush(): u32 {
  endedCount = 0;
  endedBeforeInspect = 0;
  while (first(RECENCY) != NONE) finish(first(RECENCY));
  nextDue = Infinity;
  return report(0);
}

/** JavaScript took the ended flows: their ids are free again. */
export function release(): void {
  for (let i: u32 = 0; i < endedCount; i++) {
    const entry = load<u32>(ENDED_QUEUE + <usize>i * 4);
    if ((entry & 1) == 0) {
      store<u32>(freeIds + <usize>freeCount * 4, entry >>> 1);
      freeCount++;
    }
  }
  endedCount = 0;
}

export function activeFlows(): u32 {
  return size();
}

function get(field: usize): i32 {
  return load<i32>(HEADERS + field);
}

function word(i: usize): u32 {
  return load<u32>(HEADERS + ADDRESSES + i * 4);
}

function align(at: usize): usize {
  return (at + 63) & ~(<usize>63);
}

/** Echo request and reply: the one ICMP exchange whose two directions form one flow. */
function isEcho(protocol: u32, type: i32): bool {
  return protocol == 1 ? type == 8 || type == 0 : protocol == 58 && (type == 128 || type == 129);
}

function isEchoReply(protocol: u32, type: i32): bool {
  return protocol == 1 ? type == 0 : protocol == 58 && type == 129;
}

/** The first word of the flow key (see flow-index.ts): the protocol; for ICMP, echo or else type and code. */
function flowKind(protocol: u32, icmpType: i32): u32 {
  if (icmpType < 0) return protocol;
  if (isEcho(protocol, icmpType)) return protocol | 0x1000000;
  return protocol | 0x2000000 | ((<u32>icmpType) << 8) | ((<u32>get(ICMP_CODE)) << 16);
}

function isConnectionStart(): bool {
  return get(HAS_TCP) != 0 && ((<u32>get(TCP_FLAGS)) & (SYN | ACK)) == SYN;
}

/** Only TCP and UDP have ports. */
function looksLikeServerPort(protocol: u32, port: u32): bool {
  const map = PORTS + (protocol == TCP ? 0 : PORT_MAP_BYTES);
  return (load<u8>(map + ((<usize>port) >>> 3)) & (1 << (port & 7))) != 0;
}

/** Whether the flow's first packet is an answer, so its receiver started it (../flow-key.ts lists the rules). */
function answersFirst(protocol: u32, icmpType: i32): bool {
  if (icmpType >= 0) return isEchoReply(protocol, icmpType);
  const flags = <u32>get(TCP_FLAGS);
  if (protocol == TCP && get(HAS_TCP) != 0 && (flags & SYN) != 0) return (flags & ACK) != 0;
  if (get(HAS_PORTS) == 0) return false;
  return looksLikeServerPort(protocol, <u32>get(SRC_PORT)) && !looksLikeServerPort(protocol, <u32>get(DST_PORT));
}

function open(ts: f64, senderFirst: bool, protocol: u32, icmpType: i32): u32 {
  if (size() >= maxFlows) {
    evicted += 1;
    finish(first(RECENCY));
  }
  flows += 1;
  if (ts + idleMicros < nextDue) nextDue = ts + idleMicros;
  if (freeCount == 0) unreachable();
  freeCount--;
  const id = load<u32>(freeIds + <usize>freeCount * 4);
  insert(id);
  const slot = slotOf(id);
  restart(slot, ts);
  const flipped = answersFirst(protocol, icmpType);
  const ends = HEADERS + ADDRESSES;
  memory.copy(slot + ID_ADDRESSES, flipped ? ends + 16 : ends, 16);
  memory.copy(slot + ID_ADDRESSES + 16, flipped ? ends : ends + 16, 16);
  const srcPort = <u32>(icmpType >= 0 ? 0 : flipped ? get(DST_PORT) : get(SRC_PORT));
  const dstPort = <u32>(icmpType >= 0 ? icmpType * 256 + get(ICMP_CODE) : flipped ? get(SRC_PORT) : get(DST_PORT));
  store<u32>(slot, srcPort, ID_SRC_PORT);
  store<u32>(slot, dstPort, ID_DST_PORT);
  store<u32>(slot, protocol, ID_PROTOCOL);
  store<i32>(slot, get(VLAN), ID_VLAN);
  store<i32>(slot, icmpType, ID_ICMP_TYPE);
  store<i32>(slot, get(ICMP_CODE), ID_ICMP_CODE);
  store<i32>(slot, get(IP_VERSION), ID_IP_VERSION);
  store<u32>(slot, <u32>flipped, ID_FLIPPED);
  const src = slot + ID_ADDRESSES;
  const dst = src + 16;
  store<u32>(slot, keyHash(protocol, get(VLAN), src, srcPort, dst, dstPort), ID_KEY_HASH);
  store<u32>(slot, sessionHash(protocol, src, dst, dstPort), ID_SESSION_HASH);
  store<u8>(slot, <u8>(senderFirst != flipped), INITIATOR_FIRST);
  store<u8>(slot, <u8>(protocol == UDP && icmpType < 0 && dstPort == 53), DNS_EXCHANGE);
  store<u8>(slot, OPEN, PHASE);
  store<u8>(slot, 0, INSPECTED_SRC);
  store<u8>(slot, 0, INSPECTED_DST);
  store<u8>(slot, 0, IN_LINGERING);
  store<u32>(slot, 0, TCP_BITS);
  store<f64>(slot, -1, SYN_MICROS);
  store<f64>(slot, -1, SYN_ACK_MICROS);
  store<u32>(slot, NONE, OLDER);
  store<u32>(slot, NONE, NEWER);
  return id;
}

/** Counters from zero for a record starting at `ts`. */
function restart(slot: usize, ts: f64): void {
  memory.fill(slot, 0, COUNTER_BYTES);
  store<f64>(slot, ts, START);
  store<f64>(slot, ts, LAST);
  store<f64>(slot, Infinity, MIN_GAP);
  store<f64>(slot, -1, HANDSHAKE_RTT);
}

/** Whether the packet travels the flow's src → dst direction. */
function directionOf(slot: usize, senderFirst: bool, protocol: u32, icmpType: i32): bool {
  const sameAddresses = word(0) == word(4) && word(1) == word(5) && word(2) == word(6) && word(3) == word(7);
  if (!sameAddresses) return senderFirst == (load<u8>(slot, INITIATOR_FIRST) != 0);
  // Both ends on one address (loopback): for ICMP the message tells, else the ports do.
  if (icmpType >= 0) return !isEchoReply(protocol, icmpType);
  return <u32>get(SRC_PORT) == load<u32>(slot, ID_SRC_PORT);
}

function tallyAdd(at: usize, value: f64): void {
  const sq = value * value;
  store<f64>(at, load<f64>(at) + 1);
  store<f64>(at, load<f64>(at, 8) + value, 8);
  store<f64>(at, load<f64>(at, 16) + sq, 16);
  store<f64>(at, load<f64>(at, 24) + sq * value, 24);
}

/** Math.round, as JavaScript rounds (half up). */
function round(x: f64): f64 {
  const up = Math.ceil(x);
  return up - 0.5 > x ? up - 1 : up;
}

/** The packet in the flow's counters, and what TCP learns from it. */
function add(slot: usize, ts: f64, wireLength: u32, fromSrc: bool): void {
  const last = load<f64>(slot, LAST);
  if (load<f64>(slot, TALLY_SRC_BYTES) + load<f64>(slot, TALLY_DST_BYTES) > 0) {
    // Out-of-order timestamps (merged captures) count as no gap rather than a negative one.
    const g = Math.max((ts - last) / 1e6, 0);
    tallyAdd(slot + TALLY_GAPS, g);
    if (g < load<f64>(slot, MIN_GAP)) store<f64>(slot, g, MIN_GAP);
    if (g > load<f64>(slot, MAX_GAP)) store<f64>(slot, g, MAX_GAP);
  }
  if (ts > last) store<f64>(slot, ts, LAST);
  tallyAdd(slot + (fromSrc ? TALLY_SRC_BYTES : TALLY_DST_BYTES), <f64>get(IP_LENGTH));
  tallyAdd(slot + TALLY_FRAMES, <f64>wireLength);
  const payload = get(PAYLOAD_END) - get(PAYLOAD_START);
  if (payload > 1) {
    const n = payload < 256 ? payload : 256;
    tallyAdd(slot + TALLY_ENTROPY, round(entropy(<usize>get(PAYLOAD_START), <u32>n) * 1e4) / 1e4);
  }
  const hasTcp = get(HAS_TCP) != 0;
  if (hasTcp) {
    store<f64>(slot, <f64>((<u32>load<f64>(slot, FLAGS)) | (<u32>get(TCP_FLAGS))), FLAGS);
    tallyAdd(slot + TALLY_WINDOW, <f64>get(TCP_WINDOW));
  }
  if (get(FRAGMENT) != 0) store<f64>(slot, load<f64>(slot, FRAGMENTS) + 1, FRAGMENTS);
  if (hasTcp && load<u32>(slot, ID_PROTOCOL) == TCP) observe(slot, ts, fromSrc);
}

/** a ≤ b in sequence space (RFC 1982 serial arithmetic). */
function seqAtMost(a: u32, b: u32): bool {
  return <i32>(a - b) <= 0;
}

/** What a TCP segment says beyond its counts (../tcp-tracker.ts described it): retransmissions, the handshake, the end. */
function observe(slot: usize, ts: f64, fromSrc: bool): void {
  const flags = <u32>get(TCP_FLAGS);
  const syn = (flags & SYN) != 0;
  const fin = (flags & FIN) != 0;
  const ack = (flags & ACK) != 0;
  let bits = load<u32>(slot, TCP_BITS);
  // SYN and FIN each take one sequence number; a pure ACK takes none and is never a retransmission.
  const length = <u32>get(PAYLOAD_LENGTH) + (syn ? 1 : 0) + (fin ? 1 : 0);
  const end = <u32>load<f64>(HEADERS + TCP_SEQ) + length;
  const hasHighest = (bits & (fromSrc ? HAS_SRC_END : HAS_DST_END)) != 0;
  const highest = load<u32>(slot + (fromSrc ? SRC_END : DST_END));
  if (length > 0 && hasHighest && seqAtMost(end, highest)) {
    store<f64>(slot, load<f64>(slot, RETRANS_PACKETS) + 1, RETRANS_PACKETS);
    store<f64>(slot, load<f64>(slot, RETRANS_BYTES) + <f64>get(IP_LENGTH), RETRANS_BYTES);
  } else if (length > 0 || !hasHighest) {
    store<u32>(slot + (fromSrc ? SRC_END : DST_END), end);
    bits |= fromSrc ? HAS_SRC_END : HAS_DST_END;
  }

  // The handshake's round trip: the last SYN before the answer (a retried SYN would add its timeout), the SYN-ACK, the ACK.
  if (syn && !ack && fromSrc) {
    if (load<f64>(slot, SYN_ACK_MICROS) == -1) store<f64>(slot, ts, SYN_MICROS);
  } else if (syn && ack && !fromSrc) {
    if (load<f64>(slot, SYN_MICROS) != -1 && load<f64>(slot, SYN_ACK_MICROS) == -1) store<f64>(slot, ts, SYN_ACK_MICROS);
  } else if (!syn && ack && fromSrc && load<f64>(slot, SYN_ACK_MICROS) != -1 && (bits & RTT_MEASURED) == 0) {
    store<f64>(slot, ts - load<f64>(slot, SYN_MICROS), HANDSHAKE_RTT);
    bits |= RTT_MEASURED;
  }

  const phase = load<u8>(slot, PHASE);
  if ((flags & RST) != 0) {
    if (phase == OPEN) store<u8>(slot, CLOSING, PHASE);
  } else if (fin) {
    if (fromSrc && (bits & HAS_SRC_FIN) == 0) {
      store<u32>(slot, end, SRC_FIN_END);
      bits |= HAS_SRC_FIN;
    }
    if (!fromSrc && (bits & HAS_DST_FIN) == 0) {
      store<u32>(slot, end, DST_FIN_END);
      bits |= HAS_DST_FIN;
    }
    if (phase == OPEN && (bits & (HAS_SRC_FIN | HAS_DST_FIN)) == (HAS_SRC_FIN | HAS_DST_FIN)) {
      store<u8>(slot, CLOSING, PHASE);
      store<u32>(slot, end, FINAL_ACK);
      bits |= HAS_FINAL_ACK;
      bits = fromSrc ? bits & ~FINAL_ACK_FROM_SRC : bits | FINAL_ACK_FROM_SRC;
    }
  } else if (
    phase == CLOSING &&
    (bits & HAS_FINAL_ACK) != 0 &&
    ack &&
    fromSrc == ((bits & FINAL_ACK_FROM_SRC) != 0) &&
    <u32>load<f64>(HEADERS + TCP_ACK) == load<u32>(slot, FINAL_ACK)
  ) {
    store<u8>(slot, CLOSED, PHASE);
  }
  store<u32>(slot, bits, TCP_BITS);
}

/** Marks flow `id` most recently seen. */
function touch(id: u32): void {
  if (last(RECENCY) == id) return;
  // Any flow but the newest has a newer one once linked; one just opened has neither.
  if (load<u32>(slotOf(id), NEWER) != NONE) unlink(RECENCY, OLDER, id);
  append(RECENCY, OLDER, id);
}

// A list of flows through their slots: its first and last ids are two words at `list`, and each
// flow's links, the previous and the next id, two words at `links` in its slot (NONE at the ends).

function first(list: usize): u32 {
  return load<u32>(list);
}

function last(list: usize): u32 {
  return load<u32>(list, 4);
}

function append(list: usize, links: usize, id: u32): void {
  const at = slotOf(id) + links;
  const tail = last(list);
  store<u32>(at, tail);
  store<u32>(at, NONE, 4);
  if (tail != NONE) store<u32>(slotOf(tail) + links, id, 4);
  else store<u32>(list, id);
  store<u32>(list, id, 4);
}

function unlink(list: usize, links: usize, id: u32): void {
  const at = slotOf(id) + links;
  const prev = load<u32>(at);
  const next = load<u32>(at, 4);
  if (prev != NONE) store<u32>(slotOf(prev) + links, next, 4);
  else store<u32>(list, next);
  if (next != NONE) store<u32>(slotOf(next) + links, prev);
  else store<u32>(list, prev, 4);
}

function pushEnded(entry: u32): void {
  store<u32>(ENDED_QUEUE + <usize>endedCount * 4, entry);
  endedCount++;
}

/** Flow `id`'s record is due now: it leaves the index and the lists, its id waits for release(). */
function finish(id: u32): void {
  remove(id);
  unlink(RECENCY, OLDER, id);
  const slot = slotOf(id);
  if (load<u8>(slot, IN_LINGERING) != 0) {
    unlink(LINGERING, LINGER_PREV, id);
    store<u8>(slot, 0, IN_LINGERING);
  }
  store<f64>(slot, clock, END_MICROS);
  pushEnded(id << 1);
  records += 1;
}

function advanceTo(now: f64): void {
  if (now > clock) clock = now;
  if (now < nextDue) return;
  while (first(LINGERING) != NONE && load<f64>(slotOf(first(LINGERING)), DEADLINE) <= now) finish(first(LINGERING));
  while (first(RECENCY) != NONE && load<f64>(slotOf(first(RECENCY)), LAST) + idleMicros <= now) finish(first(RECENCY));
  const oldest = first(RECENCY);
  const idleDue = oldest == NONE ? Infinity : load<f64>(slotOf(oldest), LAST) + idleMicros;
  const closing = first(LINGERING);
  nextDue = closing != NONE ? Math.min(load<f64>(slotOf(closing), DEADLINE), idleDue) : idleDue;
}
