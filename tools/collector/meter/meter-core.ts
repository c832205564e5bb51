// The JavaScript side of one instance of the meter's WebAssembly (wasm/meter-core.ts): it lays
// the memory out once, writes the tables JavaScript owns (the logarithms payload entropy sums, so
// that they are V8's bit for bit; the server-like ports of well-known.ts), and reads and writes
// the decoder's header words. A flow table
// has one; decoding frames one by one and payload entropy outside a table share one.

import { PacketHeaders, type DropCounts, type FrameSpan, type InspectedPacket, type PayloadSelection } from './packet.js';
import { SELECTION_LAYOUT, writeSelection } from './payload-selection.js';
import { looksLikeServerPort, PROTO_TCP, PROTO_UDP } from './well-known.js';
import { meterWasmModule } from './wasm-module.js';

/**
 * Bytes of a payload whose Shannon entropy is counted (the figure flowgen's `payload_entropy`
 * models: near 8 bits/byte for encrypted or compressed data, 4-5 for text): enough to tell
 * ciphertext from text, cheap enough for every packet.
 */
export const ENTROPY_SAMPLE_BYTES = 256;

/** Why the decoder dropped a frame: its result − 1 (wasm/decode.ts lists the same order). */
export const DECODE_DROPS = [
  'truncated_link',
  'too_many_vlan_tags',
  'not_ip',
  'unsupported_link_type',
  'truncated_ip',
  'bad_ip_header',
  'too_many_ipv6_extensions',
  'truncated_transport',
  'bad_transport_header',
] as const;

/** The most flows a table holds at once: what the module's 4 GiB fit, with room (about 700 bytes a flow). */
export const MAX_FLOWS = 2 ** 22;

/** What a call into the core asks of JavaScript: its result's bits (wasm/flow-table.ts says what each means). */
export const CORE_RESULT = { INSPECT: 2, ENDED: 4, FIRST_FRAGMENT: 8, LATER_FRAGMENT: 16, DROPPED_SHIFT: 24 } as const;
/** Where the core reports a call's work: u32 words of STATE, and STATE_TS, a double, in bytes. */
export const CORE_STATE = {
  STATE_ENDED: 0,
  STATE_BEFORE_INSPECT: 1,
  STATE_FLOW: 2,
  STATE_FROM_SRC: 3,
  STATE_RESULT: 4,
  STATE_WIRE_LENGTH: 5,
  STATE_TS: 24,
} as const;

type Address = WebAssembly.Global;

export interface MeterCoreExports {
  memory: WebAssembly.Memory;
  configure(frameBytes: number, maxFlows: number, idleMicros: number, activeMicros: number, lingerMicros: number, inspectPerDirection: number): void;
  decode(start: number, end: number, linkType: number): number;
  meterFrame(tsMicros: number, linkType: number, wireLength: number, start: number, end: number): number;
  meterPcap(at: number, end: number, until: number, littleEndian: boolean, nanos: boolean, linkType: number): number;
  meterHeaders(tsMicros: number, wireLength: number): number;
  countFragment(id: number, fromSrc: boolean, tsMicros: number, wireLength: number): void;
  advance(nowMicros: number): number;
  flush(): number;
  release(): void;
  activeFlows(): number;
  slotOf(id: number): number;
  entropy(start: number, n: number): number;
  /** 1 when an inspector reads the payload memory[start, end), else 0 (wasm/payload-selection.ts). */
  selects(protocol: number, hasPorts: boolean, srcPort: number, dstPort: number, start: number, end: number, fromInitiator: boolean): number;
  // The index alone (flow-index.test.ts).
  configureIndex(limit: number, base: number): number;
  // prettier-ignore
  find(kind: number, vlan: number, s0: number, s1: number, s2: number, s3: number, d0: number, d1: number, d2: number, d3: number, srcPort: number, dstPort: number): number;
  insert(id: number): void;
  remove(id: number): void;
  size(): number;
  capacity(): number;
  homeSlot(): number;
  // Where things are, and counts (globals).
  HEADERS: Address;
  RECORD: Address;
  RECORD_BYTES: Address;
  CHUNKS: Address;
  PORTS: Address;
  SELECTION: Address;
  MAX_PREFIXES: Address;
  MAX_PREFIX_LENGTH: Address;
  PREFIX_BYTES: Address;
  FIRST_BYTES: Address;
  PORT_MAP: Address;
  PREFIXES: Address;
  STATE: Address;
  ENDED_QUEUE: Address;
  CUT: Address;
  N_LOG_N: Address;
  LOG2: Address;
  SAMPLE: Address;
  SAMPLE_BYTES: Address;
  COUNTER_WORDS: Address;
  IDENTITY: Address;
  framesRead: Address;
  lastPacketMicros: Address;
  packets: Address;
  flows: Address;
  records: Address;
  evicted: Address;
  activeCuts: Address;
  fragments: Address;
  [field: string]: unknown;
}

/** Header fields (bytes from HEADERS, as wasm/decode.ts exports them); JavaScript keeps their index in a view of their width. */
const FIELDS = [
  'VLAN',
  'IP_VERSION',
  'ADDRESSES',
  'PROTOCOL',
  'TTL',
  'IP_LENGTH',
  'FRAGMENT',
  'HAS_PORTS',
  'SRC_PORT',
  'DST_PORT',
  'HAS_TCP',
  'TCP_FLAGS',
  'TCP_WINDOW',
  'TCP_HEADER_LENGTH',
  'ICMP_TYPE',
  'ICMP_CODE',
  'PAYLOAD_START',
  'PAYLOAD_END',
  'PAYLOAD_LENGTH',
  'FRAGMENT_ID',
  'TCP_SEQ',
  'TCP_ACK',
] as const;
type Field = (typeof FIELDS)[number];

const FRAGMENTS: readonly PacketHeaders['fragment'][] = ['none', 'first', 'later'];

export interface MeterCoreOptions {
  /** Bytes at `frames`, where a meter reads its captures. */
  frameBytes: number;
  maxFlows: number;
  idleMicros: number;
  activeMicros: number;
  lingerMicros: number;
  /** Payload-bearing packets per direction shown to the inspectors (0: none). */
  inspectPerDirection: number;
  /** Which of them are shown: those the inspectors read (absent: every one). */
  selection?: PayloadSelection;
}

export class MeterCore {
  readonly wasm: MeterCoreExports;
  /** The whole memory, as bytes, 32-bit words and doubles: payload ranges and slots are addresses in it. */
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  readonly ints: Int32Array;
  readonly doubles: Float64Array;
  /** Where a meter reads its captures: frames of the chunk metered (meterIn) are decoded where they lie. */
  readonly frames: Uint8Array;
  /** The words wasm/flow-table.ts reports a packet's work in (STATE_* there). */
  readonly state: Uint32Array;
  /** Where STATE starts, in `doubles`. */
  readonly stateDoubles: number;
  readonly counterWords: number;
  /** Where a slot's identity words start, in words from the slot (IDENTITY in wasm/flow-table.ts). */
  readonly identityWords: number;
  readonly endedQueue: number;
  readonly cut: number;
  /** Each header field's index in `ints` or `words` (8-byte fields: in `doubles`). */
  private readonly at: Record<Field, number>;
  private readonly record: number;
  private readonly recordBytes: number;
  private readonly sample: number;
  /** The chunk being metered and its address, known by identity (a typed array's `buffer` getter costs hundreds of instructions a call). */
  private chunk: Uint8Array | undefined = undefined;
  private chunkStart = 0;

  constructor(options: MeterCoreOptions) {
    if (!Number.isInteger(options.maxFlows) || options.maxFlows < 1 || options.maxFlows > MAX_FLOWS) {
      throw new RangeError(`a flow table holds 1 to ${MAX_FLOWS} flows, not ${options.maxFlows}`);
    }
    this.wasm = new WebAssembly.Instance(meterWasmModule()).exports as unknown as MeterCoreExports;
    const wasm = this.wasm;
    if (address(wasm.SAMPLE_BYTES) !== ENTROPY_SAMPLE_BYTES) throw new Error('the meter WebAssembly samples a different number of bytes');
    for (const [name, value] of Object.entries({ ...CORE_RESULT, ...CORE_STATE, ...SELECTION_LAYOUT })) {
      if (address(wasm[name] as Address) !== value) throw new Error(`the meter WebAssembly's ${name} is not JavaScript's ${value}`);
    }
    const o = options;
    wasm.configure(o.frameBytes, o.maxFlows, o.idleMicros, o.activeMicros, o.lingerMicros, o.inspectPerDirection);
    const memory = wasm.memory.buffer;
    this.bytes = new Uint8Array(memory);
    this.words = new Uint32Array(memory);
    this.ints = new Int32Array(memory);
    this.doubles = new Float64Array(memory);
    this.frames = this.bytes.subarray(address(wasm.CHUNKS), address(wasm.CHUNKS) + o.frameBytes);
    this.state = new Uint32Array(memory, address(wasm.STATE), 8);
    this.stateDoubles = address(wasm.STATE) / 8;
    this.counterWords = address(wasm.COUNTER_WORDS);
    this.identityWords = address(wasm.IDENTITY) / 4;
    this.endedQueue = address(wasm.ENDED_QUEUE) / 4;
    this.cut = address(wasm.CUT) / 8;
    const headers = address(wasm.HEADERS);
    const width = (field: Field): number => (field === 'FRAGMENT_ID' || field === 'TCP_SEQ' || field === 'TCP_ACK' ? 8 : 4);
    this.at = Object.fromEntries(FIELDS.map((field) => [field, (headers + address(wasm[field] as Address)) / width(field)])) as Record<Field, number>;
    this.record = address(wasm.RECORD);
    this.recordBytes = address(wasm.RECORD_BYTES);
    this.sample = address(wasm.SAMPLE);
    const nLogN = new Float64Array(memory, address(wasm.N_LOG_N), ENTROPY_SAMPLE_BYTES + 1);
    const log2 = new Float64Array(memory, address(wasm.LOG2), ENTROPY_SAMPLE_BYTES + 1);
    for (let n = 1; n <= ENTROPY_SAMPLE_BYTES; n++) {
      nLogN[n] = n * Math.log2(n);
      log2[n] = Math.log2(n);
    }
    this.bytes.set(serverPortMaps(), address(wasm.PORTS));
    if (o.selection !== undefined) writeSelection(this.bytes, address(wasm.SELECTION), o.selection);
  }

  /** Says which view of `frames` is being metered: its frames are decoded where they lie. */
  meterIn(chunk: Uint8Array): void {
    if (chunk.buffer !== this.bytes.buffer) throw new Error("a chunk metered in place must be a view of the meter's frames");
    this.chunk = chunk;
    this.chunkStart = chunk.byteOffset;
  }

  /** Where `bytes` start in the memory when they are the chunk metered, else -1. */
  chunkAddress(bytes: Uint8Array): number {
    return bytes === this.chunk ? this.chunkStart : -1;
  }

  /** Where a frame's bytes are in the memory: in place in the chunk metered, else copied to RECORD. */
  frameStart(frame: FrameSpan): number {
    if (frame.bytes === this.chunk) return this.chunkStart + frame.start;
    const length = frame.end - frame.start;
    // The capture reader never hands over a longer record (RECORD_BYTES is its limit).
    if (length > this.recordBytes) throw new RangeError(`a frame of ${length} bytes is longer than a capture record can be`);
    this.bytes.set(frame.bytes.subarray(frame.start, frame.end), this.record);
    return this.record;
  }

  /** One frame into the header words, read into `into`; false with the reason counted in `drops`. */
  decode(frame: FrameSpan, into: PacketHeaders, drops: DropCounts): boolean {
    const start = this.frameStart(frame);
    const dropped = this.wasm.decode(start, start + frame.end - frame.start, frame.linkType);
    if (dropped !== 0) {
      countDrop(drops, dropped);
      return false;
    }
    this.readHeaders(into, frame.tsMicros, frame.wireLength);
    return true;
  }

  /** The header words into `h` (its payload a range of `bytes`). */
  readHeaders(h: PacketHeaders, tsMicros: number, wireLength: number): void {
    const i = this.ints;
    const at = this.at;
    h.tsMicros = tsMicros;
    h.wireLength = wireLength;
    h.vlan = i[at.VLAN];
    h.ipVersion = i[at.IP_VERSION] === 6 ? 6 : 4;
    for (let k = 0; k < 8; k++) h.addresses[k] = this.words[at.ADDRESSES + k];
    h.protocol = i[at.PROTOCOL];
    h.ttl = i[at.TTL];
    h.ipLength = i[at.IP_LENGTH];
    h.fragment = FRAGMENTS[i[at.FRAGMENT]];
    h.fragmentId = this.doubles[at.FRAGMENT_ID];
    h.hasPorts = i[at.HAS_PORTS] !== 0;
    h.srcPort = i[at.SRC_PORT];
    h.dstPort = i[at.DST_PORT];
    h.hasTcp = i[at.HAS_TCP] !== 0;
    h.tcpFlags = h.hasTcp ? i[at.TCP_FLAGS] : 0;
    h.tcpSeq = h.hasTcp ? this.doubles[at.TCP_SEQ] : NaN;
    h.tcpAck = h.hasTcp ? this.doubles[at.TCP_ACK] : NaN;
    h.tcpWindow = h.hasTcp ? i[at.TCP_WINDOW] : 0;
    h.tcpHeaderLength = h.hasTcp ? i[at.TCP_HEADER_LENGTH] : 0;
    h.icmpType = i[at.ICMP_TYPE];
    h.icmpCode = i[at.ICMP_CODE];
    h.data = this.bytes;
    h.payloadStart = i[at.PAYLOAD_START];
    h.payloadEnd = i[at.PAYLOAD_END];
    h.payloadLength = i[at.PAYLOAD_LENGTH];
  }

  /** What the payload inspectors read of the header words into `p`. */
  readInspected(p: InspectedPacket): void {
    const i = this.ints;
    const at = this.at;
    p.protocol = i[at.PROTOCOL];
    p.hasPorts = i[at.HAS_PORTS] !== 0;
    p.srcPort = i[at.SRC_PORT];
    p.dstPort = i[at.DST_PORT];
    p.data = this.bytes;
    p.payloadStart = i[at.PAYLOAD_START];
    p.payloadEnd = i[at.PAYLOAD_END];
  }

  /** `h` into the header words, its payload copied to RECORD: a packet made by hand, metered as if decoded. */
  writeHeaders(h: PacketHeaders): void {
    const i = this.ints;
    const at = this.at;
    const payload = h.data.subarray(h.payloadStart, Math.min(h.payloadEnd, h.payloadStart + this.recordBytes));
    this.bytes.set(payload, this.record);
    i[at.VLAN] = h.vlan;
    i[at.IP_VERSION] = h.ipVersion;
    for (let k = 0; k < 8; k++) this.words[at.ADDRESSES + k] = h.addresses[k];
    i[at.PROTOCOL] = h.protocol;
    i[at.TTL] = h.ttl;
    i[at.IP_LENGTH] = h.ipLength;
    i[at.FRAGMENT] = FRAGMENTS.indexOf(h.fragment);
    this.doubles[at.FRAGMENT_ID] = h.fragmentId;
    i[at.HAS_PORTS] = h.hasPorts ? 1 : 0;
    i[at.SRC_PORT] = h.srcPort;
    i[at.DST_PORT] = h.dstPort;
    i[at.HAS_TCP] = h.hasTcp ? 1 : 0;
    i[at.TCP_FLAGS] = h.tcpFlags;
    this.doubles[at.TCP_SEQ] = h.tcpSeq;
    this.doubles[at.TCP_ACK] = h.tcpAck;
    i[at.TCP_WINDOW] = h.tcpWindow;
    i[at.TCP_HEADER_LENGTH] = h.tcpHeaderLength;
    i[at.ICMP_TYPE] = h.icmpType;
    i[at.ICMP_CODE] = h.icmpCode;
    i[at.PAYLOAD_START] = this.record;
    i[at.PAYLOAD_END] = this.record + payload.length;
    i[at.PAYLOAD_LENGTH] = h.payloadLength;
  }

  /**
   * Entropy in bits per byte of the first ENTROPY_SAMPLE_BYTES bytes of bytes[start, end), 0 for
   * fewer than two bytes. H = log2 n − (1/n)·Σ c·log2 c over the byte counts c, summed in the
   * order the values first occur (wasm/payload-entropy.ts). Counted where it lies when `bytes`
   * is the memory, else copied in.
   */
  entropy(bytes: Uint8Array, start = 0, end = bytes.length): number {
    const n = Math.min(end - start, ENTROPY_SAMPLE_BYTES);
    if (n < 2) return 0;
    if (bytes === this.bytes) return this.wasm.entropy(start, n);
    this.bytes.set(bytes.subarray(start, start + n), this.sample);
    return this.wasm.entropy(this.sample, n);
  }
}

let portMaps: Uint8Array | undefined;

/** well-known.ts's server-like ports as wasm/flow-table.ts reads them: a bit per port, TCP's 8 KiB then UDP's; made once. */
function serverPortMaps(): Uint8Array {
  if (portMaps === undefined) {
    portMaps = new Uint8Array(2 * 8192);
    for (const [protocol, map] of [
      [PROTO_TCP, 0],
      [PROTO_UDP, 8192],
    ]) {
      for (let port = 0; port < 65536; port++) if (looksLikeServerPort(protocol, port)) portMaps[map + (port >>> 3)] |= 1 << (port & 7);
    }
  }
  return portMaps;
}

/** Counts a decode drop (a decoder result, 1 to DECODE_DROPS.length) by its reason. */
export function countDrop(drops: DropCounts, dropped: number): void {
  const reason = DECODE_DROPS[dropped - 1];
  drops[reason] = (drops[reason] ?? 0) + 1;
}

function address(global: Address): number {
  return global.value as number;
}

let shared: MeterCore | undefined;

/** An instance for callers that meter no flows: frames decoded one by one, payload entropy. */
export function sharedMeterCore(): MeterCore {
  shared ??= new MeterCore({ frameBytes: 0, maxFlows: 1, idleMicros: 0, activeMicros: 0, lingerMicros: 0, inspectPerDirection: 0 });
  return shared;
}

/** MeterCore.entropy on the shared instance. */
export function payloadEntropy(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return sharedMeterCore().entropy(bytes, start, end);
}
