// The meter proper: packets in, wire flow records out. Pure and deterministic: time is the
// packets' own (a capture file replays with its timestamps), memory is bounded by the cap on
// active flows and on remembered fragment datagrams.
//
// A flow's record leaves the table when:
// - TCP ends: the last FIN is acknowledged (at once), or both FINs or a RST were seen and the
//   linger for stragglers has passed;
// - DNS over UDP (server port 53) is answered: one question and its answer make one record, at
//   once, so a client that asks many questions from one socket (iodine, a resolver forwarding)
//   shows each with its name, as a client with a socket per question does; inspectors only read
//   the first packets of a flow, and a flow of a thousand questions would name one;
// - it was idle for `idleTimeoutSecs`;
// - it reached `activeTimeoutSecs` (cut at its next packet; the flow goes on in a new record,
//   without FIN, which is how flowgen marks an ongoing flow);
// - the table is full and it is the least recently seen flow;
// - flush() at the end of the input.
//
// The counting is WebAssembly's (wasm/flow-table.ts, with the decoder and the index): a packet
// costs JavaScript one call. This side keeps what only JavaScript can: the flows' identities as
// text, what the inspectors find in their first payloads, fragments' homes, and the records.

import { writeFlowBlock } from './flow-columns.js';
import { buildFlowRecord, type FlowOwners, type RecordContext } from './flow-record.js';
import { identityOf } from './flow-key.js';
import { FlowCounters, FlowState } from './flow-state.js';
import { CORE_RESULT, CORE_STATE, countDrop, MeterCore } from './meter-core.js';
import type { PcapFormat } from './capture.js';
import { selectionOf } from './payload-selection.js';
import { PacketHeaders, type DecodedPacket, type DropCounts, type FrameSpan, type PayloadInspector } from './packet.js';
import type { FlowRecord } from '../flowgen/types.js';

export interface FlowTableOptions extends RecordContext {
  idleTimeoutSecs?: number;
  activeTimeoutSecs?: number;
  /** How long a TCP flow that saw a RST or both FINs waits for stragglers (the last ACK). */
  tcpLingerSecs?: number;
  /** Flows active at once, at most MAX_FLOWS (meter-core.ts); the least recently seen is ended to make room. */
  maxFlows?: number;
  /** First fragments remembered so that later fragments find their flow. */
  maxFragmentDatagrams?: number;
  inspectors?: readonly PayloadInspector[];
  /**
   * Payload-bearing packets per direction inspected: each is shown to the inspectors when one of
   * them reads it (PayloadInspector.reads).
   */
  inspectPerDirection?: number;
  /** On a host metering its own traffic: the processes that own the flows' ends. */
  owners?: FlowOwners;
  /** Bytes of memory a meter reads its captures into (`frames`), so that they are metered in place. */
  frameBytes?: number;
}

export interface FlowTableCounts {
  packets: number;
  flows: number;
  records: number;
  active: number;
  /** Flows emitted early because the table was full. */
  evicted: number;
  /** Records cut by the active timeout. */
  activeCuts: number;
  fragments: number;
  /** Packets not counted in any flow, by reason. */
  dropped: DropCounts;
}

const NOTHING_READY: FlowRecord[] = Object.freeze([]) as unknown as FlowRecord[];
const NOTHING_ENDED: readonly FlowState[] = Object.freeze([]);

const { INSPECT, ENDED, FIRST_FRAGMENT, LATER_FRAGMENT, DROPPED_SHIFT } = CORE_RESULT;
const { STATE_ENDED, STATE_BEFORE_INSPECT, STATE_FLOW, STATE_FROM_SRC, STATE_RESULT, STATE_WIRE_LENGTH, STATE_TS } = CORE_STATE;

interface FragmentHome {
  flow: FlowState;
  fromSrc: boolean;
}

export class FlowTable {
  private readonly maxFragments: number;
  private readonly inspectors: readonly PayloadInspector[];
  private readonly context: RecordContext;
  private readonly owners: FlowOwners | undefined;
  private readonly core: MeterCore;
  /**
   * The flows counting, by their id in the WebAssembly table: made when JavaScript first needs one
   * (a payload inspected, a first fragment, its record due), as most flows need one only at their end.
   */
  private readonly byId: (FlowState | undefined)[] = [];
  /** A packet's headers, read from WebAssembly for a fragment; and what the inspectors read of one. */
  private readonly headers = new PacketHeaders();
  private readonly inspected = new PacketHeaders();
  private readonly fragmentHomes = new Map<string, FragmentHome>();
  /** Counters of built records, for the next records to take: at most as many as flows were ever awaiting their record at once. */
  private readonly spareCounters: FlowCounters[] = [];
  private ended: FlowState[] = [];
  private readonly dropped: DropCounts = {};

  constructor(options: FlowTableOptions) {
    this.maxFragments = Math.max(1, options.maxFragmentDatagrams ?? 4096);
    this.inspectors = options.inspectors ?? [];
    this.context = { customerId: options.customerId, sensor: options.sensor, tags: options.tags };
    this.owners = options.owners;
    this.core = new MeterCore({
      frameBytes: options.frameBytes ?? 0,
      maxFlows: options.maxFlows ?? 100_000,
      idleMicros: (options.idleTimeoutSecs ?? 30) * 1e6,
      activeMicros: (options.activeTimeoutSecs ?? 300) * 1e6,
      lingerMicros: (options.tcpLingerSecs ?? 1) * 1e6,
      inspectPerDirection: this.inspectors.length > 0 ? (options.inspectPerDirection ?? 3) : 0,
      selection: selectionOf(this.inspectors),
    });
  }

  /** Where a meter reads its captures (frameBytes of the table's memory). */
  get frames(): Uint8Array {
    return this.core.frames;
  }

  /** Says which view of `frames` is being metered: its frames are decoded where they lie. */
  meterIn(chunk: Uint8Array): void {
    this.core.meterIn(chunk);
  }

  /**
   * The meter's path: one frame decoded and counted, and the records due by its time taken
   * (takeEnded). False, with the reason counted in `drops`, when it does not decode.
   */
  meterFrame(frame: FrameSpan, drops: DropCounts): boolean {
    const start = this.core.frameStart(frame);
    const result = this.core.wasm.meterFrame(frame.tsMicros, frame.linkType, frame.wireLength, start, start + frame.end - frame.start);
    if (result === 0) return true;
    if (result >>> DROPPED_SHIFT !== 0) {
      countDrop(drops, result >>> DROPPED_SHIFT);
      return false;
    }
    this.follow(result, frame.tsMicros, frame.wireLength);
    return true;
  }

  /**
   * meterFrame() for each whole pcap record of `bytes` from `at`, until one ends at or past
   * `until`, when `bytes` is the chunk metered (meterIn): read where they lie, a record header
   * and all, in WebAssembly. Returns where it stopped (`at` when it took nothing): a record it
   * cannot take whole is the capture reader's.
   */
  meterPcapRecords(bytes: Uint8Array, at: number, until: number, format: PcapFormat, drops: DropCounts): number {
    const core = this.core;
    const base = core.chunkAddress(bytes);
    if (base < 0) return at;
    const state = core.state;
    const stateTs = core.stateDoubles + STATE_TS / 8;
    let next = at;
    for (;;) {
      const stop = core.wasm.meterPcap(base + next, base + bytes.length, base + until, format.littleEndian, format.nanos, format.linkType) - base;
      if (stop === next) return next;
      next = stop;
      const result = state[STATE_RESULT];
      if (result === 0) return next;
      if (result >>> DROPPED_SHIFT !== 0) countDrop(drops, result >>> DROPPED_SHIFT);
      else this.follow(result, core.doubles[stateTs], state[STATE_WIRE_LENGTH]);
    }
  }

  /** A packet decoded elsewhere (or made by hand), counted as meterFrame counts a frame. */
  add(p: DecodedPacket): void {
    this.core.writeHeaders(this.headers.setFrom(p));
    this.follow(this.core.wasm.meterHeaders(p.tsMicros, p.wireLength), p.tsMicros, p.wireLength);
  }

  /** Records due by `nowMicros` (packet time): ended TCP flows past their linger, idle flows. */
  advance(nowMicros: number): FlowRecord[] {
    return this.recordsOf(this.advanceEnded(nowMicros));
  }

  /** Every flow's record, at the end of the input. */
  flush(): FlowRecord[] {
    return this.recordsOf(this.flushEnded());
  }

  /**
   * advance(), handing over the flows whose records are due rather than the records: the meter
   * builds each with recordOf() when the sink takes it, so records are not kept while a batch
   * fills (kept, nearly all would be copied by a young-generation collection).
   */
  advanceEnded(nowMicros: number): readonly FlowState[] {
    if (this.core.wasm.advance(nowMicros) !== 0) this.takeAllQueued(NaN);
    return this.takeEnded();
  }

  /** flush(), handing over the flows (see advanceEnded). */
  flushEnded(): readonly FlowState[] {
    if (this.core.wasm.flush() !== 0) this.takeAllQueued(NaN);
    this.fragmentHomes.clear();
    return this.takeEnded();
  }

  /** The flows ended since the last call; none (most packets) hands back one shared, frozen empty array. */
  takeEnded(): readonly FlowState[] {
    if (this.ended.length === 0) return NOTHING_ENDED;
    const out = this.ended;
    this.ended = [];
    return out;
  }

  /** The record of a flow advanceEnded() or flushEnded() handed over; once per flow (its counters are reused). */
  recordOf(flow: FlowState): FlowRecord {
    const record = buildFlowRecord(flow, this.context, flow.endMicros, this.owners);
    this.spareCounters.push(flow.counters);
    return record;
  }

  /**
   * The records of flows handed over, as one Native block (flow-columns.ts); once per flow, as
   * recordOf(). Undefined when they cannot be one: nothing is taken, recordOf() builds them.
   */
  blockOf(flows: readonly FlowState[]): Buffer | undefined {
    const block = writeFlowBlock(flows, this.context, this.owners);
    if (block !== undefined) for (const flow of flows) this.spareCounters.push(flow.counters);
    return block;
  }

  /** Frames given to meterFrame (decoded or not), and the newest time of a packet counted (null: none yet). */
  readCounts(): { frames: number; lastPacketMicros: number | null } {
    const wasm = this.core.wasm;
    const last = wasm.lastPacketMicros.value as number;
    return { frames: wasm.framesRead.value as number, lastPacketMicros: last === -Infinity ? null : last };
  }

  stats(): FlowTableCounts {
    const wasm = this.core.wasm;
    return {
      packets: wasm.packets.value as number,
      flows: wasm.flows.value as number,
      records: wasm.records.value as number,
      active: wasm.activeFlows(),
      evicted: wasm.evicted.value as number,
      activeCuts: wasm.activeCuts.value as number,
      fragments: wasm.fragments.value as number,
      dropped: { ...this.dropped },
    };
  }

  /** Does what the WebAssembly's result asks, in the order the table's rules need (wasm/flow-table.ts). */
  private follow(result: number, tsMicros: number, wireLength: number): void {
    const state = this.core.state;
    if ((result & LATER_FRAGMENT) !== 0) {
      this.addLaterFragment(tsMicros, wireLength);
      if (this.core.wasm.advance(tsMicros) !== 0) this.takeAllQueued(tsMicros);
      return;
    }
    const ended = (result & ENDED) === 0 ? 0 : state[STATE_ENDED];
    const beforeInspect = Math.min(state[STATE_BEFORE_INSPECT], ended);
    this.takeQueued(0, beforeInspect, tsMicros);
    if ((result & INSPECT) !== 0) {
      this.core.readInspected(this.inspected);
      this.flowOf(state[STATE_FLOW]).inspect(this.inspected, state[STATE_FROM_SRC] !== 0, this.inspectors);
    }
    if ((result & FIRST_FRAGMENT) !== 0) {
      this.core.readHeaders(this.headers, tsMicros, wireLength);
      this.rememberFragment(this.headers, this.flowOf(state[STATE_FLOW]), state[STATE_FROM_SRC] !== 0);
    }
    this.takeQueued(beforeInspect, ended, tsMicros);
    if (ended > 0) this.core.wasm.release();
  }

  /** The state of flow `coreId`, made from its identity words when it has none yet. */
  private flowOf(coreId: number): FlowState {
    const flow = this.byId[coreId];
    if (flow !== undefined) return flow;
    const core = this.core;
    const made = new FlowState(identityOf(core.words, (core.wasm.slotOf(coreId) >>> 2) + core.identityWords), coreId);
    this.byId[coreId] = made;
    return made;
  }

  /** All the entries of the core's ended queue, then release(): after advance() or flush(). */
  private takeAllQueued(cutMicros: number): void {
    this.takeQueued(0, this.core.state[STATE_ENDED], cutMicros);
    this.core.wasm.release();
  }

  /** Entries [from, to) of the core's ended queue: a cut (at `cutMicros`) or a flow's end. */
  private takeQueued(from: number, to: number, cutMicros: number): void {
    const core = this.core;
    for (let i = from; i < to; i++) {
      const entry = core.words[core.endedQueue + i];
      const flow = this.flowOf(entry >>> 1);
      const counters = this.spareCounters.pop() ?? new FlowCounters();
      if ((entry & 1) !== 0) {
        this.ended.push(flow.cutOff(counters.copyFrom(core.doubles, core.cut), cutMicros));
        continue;
      }
      const slot = core.wasm.slotOf(flow.coreId) / 8;
      flow.end(counters.copyFrom(core.doubles, slot), core.doubles[slot + core.counterWords]);
      this.byId[flow.coreId] = undefined;
      this.ended.push(flow);
    }
  }

  private recordsOf(ended: readonly FlowState[]): FlowRecord[] {
    return ended.length === 0 ? NOTHING_READY : ended.map((flow) => this.recordOf(flow));
  }

  private rememberFragment(p: PacketHeaders, flow: FlowState, fromSrc: boolean): void {
    const homes = this.fragmentHomes;
    if (homes.size >= this.maxFragments) homes.delete(homes.keys().next().value as string);
    homes.set(fragmentKey(p), { flow, fromSrc });
  }

  private addLaterFragment(tsMicros: number, wireLength: number): void {
    const p = this.headers;
    this.core.readHeaders(p, tsMicros, wireLength);
    const home = p.fragmentId < 0 ? undefined : this.fragmentHomes.get(fragmentKey(p));
    if (home === undefined || home.flow.done) {
      this.dropped.fragment_without_first = (this.dropped.fragment_without_first ?? 0) + 1;
      return;
    }
    this.core.wasm.countFragment(home.flow.coreId, home.fromSrc, tsMicros, wireLength);
  }
}

/** Fragments are rare: a text key is cheap enough for them. */
function fragmentKey(p: PacketHeaders): string {
  return `${p.addresses.join(',')}|${p.protocol}|${p.fragmentId}`;
}
