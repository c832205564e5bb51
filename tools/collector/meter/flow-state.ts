// One flow as JavaScript knows it: who it is between (fixed when its first packet is seen), what
// its payloads said (hints), and, once its record is due, what it counted.

import { momentsOfSums } from '../flowgen/packets.js';
import type { Moments } from '../flowgen/types.js';
import type { AppHints, InspectedPacket, PayloadInspector } from './packet.js';
import { PROTO_TCP } from './well-known.js';

/** Where each tally's power sums (count, Σx, Σx², Σx³) sit in FlowCounters' words. */
export const TALLY = { srcBytes: 0, dstBytes: 4, frames: 8, entropy: 12, window: 16, gaps: 20 } as const;
// The other words, in wasm/flow-table.ts's order.
const START = 24;
const LAST = 25;
const MIN_GAP = 26;
const MAX_GAP = 27;
const FLAGS = 28;
const FRAGMENTS = 29;
const RETRANS_PACKETS = 30;
const RETRANS_BYTES = 31;
const HANDSHAKE_RTT = 32;
export const COUNTER_WORDS = 33;

/**
 * What one record of a flow counted: from the first packet after the previous record was cut.
 * WebAssembly counts (wasm/flow-table.ts); a flow's counters are copied here once, when its
 * record is due. Reused (copyFrom) once the record is built.
 */
export class FlowCounters {
  private readonly words = new Float64Array(COUNTER_WORDS);

  /** Takes the COUNTER_WORDS doubles at `from` in `doubles` (a flow's slot). */
  copyFrom(doubles: Float64Array, from: number): this {
    const w = this.words;
    for (let i = 0; i < COUNTER_WORDS; i++) w[i] = doubles[from + i];
    return this;
  }

  get startMicros(): number {
    return this.words[START];
  }

  get lastMicros(): number {
    return this.words[LAST];
  }

  /** Gaps between consecutive packets, both directions, in seconds: the smallest and largest. */
  get minGap(): number {
    return this.words[MIN_GAP];
  }

  get maxGap(): number {
    return this.words[MAX_GAP];
  }

  /** TCP flag bits seen in either direction. */
  get flags(): number {
    return this.words[FLAGS];
  }

  get fragments(): number {
    return this.words[FRAGMENTS];
  }

  get retransPackets(): number {
    return this.words[RETRANS_PACKETS];
  }

  get retransBytes(): number {
    return this.words[RETRANS_BYTES];
  }

  /** Handshake round trip seen at the sensor (SYN → SYN-ACK → ACK), in microseconds, or -1. */
  get handshakeRttMicros(): number {
    return this.words[HANDSHAKE_RTT];
  }

  /** How many values the tally at `at` (a TALLY offset) holds, and their sum. */
  countOf(at: number): number {
    return this.words[at];
  }

  sumOf(at: number): number {
    return this.words[at + 1];
  }

  sumOfSquares(at: number): number {
    return this.words[at + 2];
  }

  sumOfCubes(at: number): number {
    return this.words[at + 3];
  }

  momentsOf(at: number): Moments {
    const s = this.words;
    return momentsOfSums(s[at], s[at + 1], s[at + 2], s[at + 3]);
  }

  /** Both directions' byte tallies as one: the packet sizes. */
  packetMoments(): Moments {
    return momentsOfSums(this.packetSum(0), this.packetSum(1), this.packetSum(2), this.packetSum(3));
  }

  /** The packet sizes' count (power 0) or sum of their `power`th powers, both directions. */
  packetSum(power: 0 | 1 | 2 | 3): number {
    return this.words[TALLY.srcBytes + power] + this.words[TALLY.dstBytes + power];
  }
}

export interface FlowIdentity {
  protocol: number;
  ipVersion: 4 | 6;
  vlan?: number;
  /** The initiator: the side that sent the first packet, unless the rules in flow-key.ts say otherwise. */
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  /** Whether each end's address is private (well-known.ts), judged once from its bytes. */
  srcPrivate: boolean;
  dstPrivate: boolean;
  /** True when the initiator is the first packet's receiver (that packet was an answer). */
  flipped: boolean;
  /** The first ICMP message's type and code (ICMP flows only). */
  icmp?: { type: number; code: number };
  /** What the record's `key` (with its start time mixed in) and `session_key` are made of (wasm/identity-hash.ts). */
  keyHash: number;
  sessionHash: number;
}

/** A flow's counters before its record is due: none yet (WebAssembly holds them). */
const COUNTING = new FlowCounters();

export class FlowState {
  /** Its counters, once its record is due. */
  counters = COUNTING;
  /** Set once the flow's last record is due; a fragment pointing here is no longer attributed. */
  done = false;
  /**
   * The packet time at which its record became due (meta.@ingest_time); NaN while counting, a
   * double from the start like the times it will hold (a field that turns from a small integer into
   * a double changes the object's layout and deoptimises the code that reads it).
   */
  endMicros = NaN;

  constructor(
    readonly id: FlowIdentity,
    /** Its id in the WebAssembly table while it counts. */
    readonly coreId: number,
    readonly hints: AppHints = newHints(),
  ) {}

  get isTcp(): boolean {
    return this.id.protocol === PROTO_TCP;
  }

  /** Marks its record due at `endMicros`, with what it counted. */
  end(counters: FlowCounters, endMicros: number): void {
    this.counters = counters;
    this.done = true;
    this.endMicros = endMicros;
  }

  /**
   * The record of a long flow cut at `atMicros` (its counters so far, a copy of its hints, since
   * later packets may add hints); this flow counts on.
   */
  cutOff(counters: FlowCounters, atMicros: number): FlowState {
    const hints = newHints();
    mergeHints(hints, this.hints);
    const cut = new FlowState(this.id, -1, hints);
    cut.end(counters, atMicros);
    return cut;
  }

  /** What the inspectors find in the packet's payload joins the flow's hints. */
  inspect(p: InspectedPacket, fromSrc: boolean, inspectors: readonly PayloadInspector[]): void {
    for (const inspector of inspectors) {
      const found = inspector(p, fromSrc);
      if (found !== undefined) mergeHints(this.hints, found, !fromSrc);
    }
  }
}

/**
 * A flow's hints, every field there from the start: all flows' hints share one shape, so the
 * record builders reading them meet one layout (a layout first met after V8 optimised them would
 * throw that code away).
 */
function newHints(): AppHints {
  return { app_name: undefined, dns: undefined, tls: undefined, http: undefined };
}

type HintGroup = 'dns' | 'tls' | 'http';
const HINT_GROUPS: readonly HintGroup[] = ['dns', 'tls', 'http'];

/**
 * Fields the responder settles: a ClientHello offers versions, the ServerHello names the one
 * negotiated, and it comes later.
 */
const SETTLED_BY_RESPONDER: Partial<Record<HintGroup, readonly string[]>> = { tls: ['version'] };

/**
 * The first non-empty value of each field wins (the earliest packet that said something is
 * believed), except that the responder's word on a field it settles replaces the initiator's.
 */
export function mergeHints(into: AppHints, from: AppHints, fromResponder = false): void {
  if (isEmpty(into.app_name) && !isEmpty(from.app_name)) into.app_name = from.app_name;
  for (const group of HINT_GROUPS) {
    const source = from[group] as Record<string, unknown> | undefined;
    if (source === undefined) continue;
    const target = (into[group] ??= {} as never) as Record<string, unknown>;
    const settled = fromResponder ? SETTLED_BY_RESPONDER[group] : undefined;
    // for-in rather than Object.entries: this runs for most flows, and entries() allocates.
    for (const field in source) {
      const value = source[field];
      if (isEmpty(value) || (!isEmpty(target[field]) && settled?.includes(field) !== true)) continue;
      target[field] = Array.isArray(value) ? value.slice() : value;
    }
  }
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}
