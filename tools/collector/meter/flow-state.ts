// One flow's state in the table: who it is between (fixed when its first packet is seen), what
// its current record has counted so far, and the TCP and payload-inspection state that outlives
// an active-timeout cut.

import { momentsOfSums } from '../flowgen/packets.js';
import type { Moments } from '../flowgen/types.js';
import type { Indexed } from './flow-index.js';
import type { AppHints, PacketHeaders, PayloadInspector } from './packet.js';
import type { EntropyCounter } from './payload-entropy.js';
import type { RecencyNode } from './recency-list.js';
import { isIcmpEchoReply, PROTO_TCP } from './well-known.js';
import { TcpTracker, type TcpObservations } from './tcp-tracker.js';

/** Where each tally's power sums (count, Σx, Σx², Σx³) sit in FlowCounters' array. */
export const TALLY = { srcBytes: 0, dstBytes: 4, frames: 8, entropy: 12, window: 16, gaps: 20 } as const;
const START = 24;
const LAST = 25;
const MIN_GAP = 26;
const MAX_GAP = 27;
const WORDS = 28;

/** A value into the tally at `at`, as Tally.add(1, value) sums it. */
function tallyAdd(sums: Float64Array, at: number, value: number): void {
  const sq = value * value;
  sums[at] += 1;
  sums[at + 1] += value;
  sums[at + 2] += sq;
  sums[at + 3] += sq * value;
}

/**
 * What one record of a flow counts: from the first packet after the previous record was cut.
 * The tallies and times sit in one Float64Array. As number fields of Tally objects, each sum
 * started as a small integer and turned into a double when its first fraction or large value came
 * (a 1,500-byte packet's cube, thousands of packets into a run); each such change altered the
 * objects' layout and deoptimised every compiled function that read them.
 * Counters are reused (restart) once their record is built.
 */
export class FlowCounters implements TcpObservations {
  private readonly sums = new Float64Array(WORDS);
  /** TCP flag bits seen in either direction. */
  flags = 0;
  fragments = 0;
  retransPackets = 0;
  retransBytes = 0;
  handshakeRttMicros = -1;

  constructor(startMicros: number) {
    this.restart(startMicros);
  }

  get startMicros(): number {
    return this.sums[START];
  }

  get lastMicros(): number {
    return this.sums[LAST];
  }

  /** Gaps between consecutive packets, both directions, in seconds: the smallest and largest. */
  get minGap(): number {
    return this.sums[MIN_GAP];
  }

  get maxGap(): number {
    return this.sums[MAX_GAP];
  }

  /** How many values the tally at `at` (a TALLY offset) holds, and their sum. */
  countOf(at: number): number {
    return this.sums[at];
  }

  sumOf(at: number): number {
    return this.sums[at + 1];
  }

  sumOfSquares(at: number): number {
    return this.sums[at + 2];
  }

  momentsOf(at: number): Moments {
    const s = this.sums;
    return momentsOfSums(s[at], s[at + 1], s[at + 2], s[at + 3]);
  }

  /** Both directions' byte tallies as one: the packet sizes. */
  packetMoments(): Moments {
    const s = this.sums;
    const src = TALLY.srcBytes;
    const dst = TALLY.dstBytes;
    return momentsOfSums(s[src] + s[dst], s[src + 1] + s[dst + 1], s[src + 2] + s[dst + 2], s[src + 3] + s[dst + 3]);
  }

  /** Counts from zero again, for a record starting at `startMicros`. */
  restart(startMicros: number): this {
    const s = this.sums;
    s.fill(0);
    s[START] = startMicros;
    s[LAST] = startMicros;
    s[MIN_GAP] = Infinity;
    this.flags = 0;
    this.fragments = 0;
    this.retransPackets = 0;
    this.retransBytes = 0;
    this.handshakeRttMicros = -1;
    return this;
  }

  count(p: PacketHeaders, fromSrc: boolean, entropy: EntropyCounter): void {
    const s = this.sums;
    const last = s[LAST];
    if (s[TALLY.srcBytes] + s[TALLY.dstBytes] > 0) {
      // Out-of-order timestamps (merged captures) count as no gap rather than a negative one.
      const g = Math.max((p.tsMicros - last) / 1e6, 0);
      tallyAdd(s, TALLY.gaps, g);
      if (g < s[MIN_GAP]) s[MIN_GAP] = g;
      if (g > s[MAX_GAP]) s[MAX_GAP] = g;
    }
    if (p.tsMicros > last) s[LAST] = p.tsMicros;
    tallyAdd(s, fromSrc ? TALLY.srcBytes : TALLY.dstBytes, p.ipLength);
    tallyAdd(s, TALLY.frames, p.wireLength);
    if (p.capturedPayload > 1) tallyAdd(s, TALLY.entropy, Math.round(entropy.of(p.data, p.payloadStart, p.payloadEnd) * 1e4) / 1e4);
    if (p.hasTcp) {
      this.flags |= p.tcpFlags;
      tallyAdd(s, TALLY.window, p.tcpWindow);
    }
    if (p.fragment !== 'none') this.fragments++;
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
}

export class FlowState implements RecencyNode<FlowState>, Indexed {
  counters: FlowCounters;
  /** Its id in the flow index. */
  indexId = -1;
  older: FlowState | undefined = undefined;
  newer: FlowState | undefined = undefined;
  readonly tcp: TcpTracker | undefined;
  /** Payload-bearing packets shown to the inspectors so far, per direction. */
  private inspectedSrc = 0;
  private inspectedDst = 0;
  /** Set once the flow's last record is due; a fragment pointing here is no longer attributed. */
  done = false;
  /**
   * The packet time at which its record became due (meta.@ingest_time); NaN while counting, a
   * double from the start like the times it will hold (see tcp-tracker.ts on why that matters).
   */
  endMicros = NaN;

  constructor(
    readonly id: FlowIdentity,
    /** Whether the initiator is the lower end of the flow key (wasm/flow-index.ts orders the ends). */
    private readonly initiatorFirst: boolean,
    /** Fresh or restarted counters, which the flow owns until its last record is built. */
    counters: FlowCounters,
    tcp = id.protocol === PROTO_TCP ? new TcpTracker() : undefined,
    readonly hints: AppHints = newHints(),
  ) {
    this.counters = counters;
    this.tcp = tcp;
  }

  /** Marks its record due at `endMicros`: no packet counts in it from now on. */
  end(endMicros: number): void {
    this.done = true;
    this.endMicros = endMicros;
  }

  /** Whether a packet of this flow travels src → dst; `senderFirst` is what the flow index said of it. */
  fromSrc(p: PacketHeaders, senderFirst: boolean): boolean {
    if (!p.sameAddresses()) return senderFirst === this.initiatorFirst;
    // Both ends on one address (loopback): for ICMP the message tells, else the ports do.
    if (p.icmpType >= 0) return !isIcmpEchoReply(this.id.protocol, p.icmpType);
    return p.srcPort === this.id.srcPort;
  }

  add(p: PacketHeaders, fromSrc: boolean, entropy: EntropyCounter): void {
    this.counters.count(p, fromSrc, entropy);
    if (this.tcp !== undefined && p.hasTcp) this.tcp.observe(p, fromSrc, this.counters);
  }

  /**
   * Cuts a long flow: the record so far becomes a flow of its own, due at `atMicros` (this flow's
   * counters and a copy of its hints, since later packets may add hints), and this flow counts on
   * in `next`. TCP and inspection state carry over; the cut-off part shares the tracker only to
   * say it is TCP.
   */
  cut(atMicros: number, next: FlowCounters): FlowState {
    const hints = newHints();
    mergeHints(hints, this.hints);
    const cutOff = new FlowState(this.id, this.initiatorFirst, this.counters, this.tcp, hints);
    cutOff.end(atMicros);
    this.counters = next;
    return cutOff;
  }

  inspect(p: PacketHeaders, fromSrc: boolean, inspectors: readonly PayloadInspector[], perDirection: number): void {
    if (p.capturedPayload === 0) return;
    if (fromSrc ? this.inspectedSrc >= perDirection : this.inspectedDst >= perDirection) return;
    if (fromSrc) this.inspectedSrc++;
    else this.inspectedDst++;
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
