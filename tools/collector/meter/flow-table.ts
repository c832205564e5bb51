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

import { writeFlowBlock } from './flow-columns.js';
import { buildFlowRecord, type FlowOwners, type RecordContext } from './flow-record.js';
import { FlowIndex } from './flow-index.js';
import { identityOf } from './flow-key.js';
import { FlowCounters, FlowState } from './flow-state.js';
import { sharedEntropyCounter, type EntropyCounter } from './payload-entropy.js';
import { PacketHeaders, type DecodedPacket, type DropCounts, type PayloadInspector } from './packet.js';
import type { FlowRecord } from '../flowgen/types.js';
import { RecencyList } from './recency-list.js';
import { isConnectionStart } from './tcp-tracker.js';
import { PROTO_UDP } from './well-known.js';

const DNS_PORT = 53;

/** A packet from the server of a UDP flow to port 53: the answer that ends a DNS exchange. */
const isDnsAnswer = (flow: FlowState, fromSrc: boolean): boolean => !fromSrc && flow.id.protocol === PROTO_UDP && flow.id.dstPort === DNS_PORT;

export interface FlowTableOptions extends RecordContext {
  idleTimeoutSecs?: number;
  activeTimeoutSecs?: number;
  /** How long a TCP flow that saw a RST or both FINs waits for stragglers (the last ACK). */
  tcpLingerSecs?: number;
  maxFlows?: number;
  /** First fragments remembered so that later fragments find their flow. */
  maxFragmentDatagrams?: number;
  inspectors?: readonly PayloadInspector[];
  /** Payload-bearing packets per direction shown to the inspectors. */
  inspectPerDirection?: number;
  /** On a host metering its own traffic: the processes that own the flows' ends. */
  owners?: FlowOwners;
  /** Counts payload entropy; a meter passes the one whose `frames` it reads captures into (else the shared one). */
  entropy?: EntropyCounter;
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

interface FragmentHome {
  flow: FlowState;
  fromSrc: boolean;
}

export class FlowTable {
  private readonly idleMicros: number;
  private readonly activeMicros: number;
  private readonly lingerMicros: number;
  private readonly maxFlows: number;
  private readonly maxFragments: number;
  private readonly inspectors: readonly PayloadInspector[];
  private readonly inspectPerDirection: number;
  private readonly context: RecordContext;
  private readonly owners: FlowOwners | undefined;
  private readonly entropy: EntropyCounter;
  private readonly flows: FlowIndex<FlowState>;
  /** The headers a DecodedPacket is read into. */
  private readonly headers = new PacketHeaders();
  private readonly recency = new RecencyList<FlowState>();
  /** TCP flows past their end, oldest deadline first (the linger is the same for all). */
  /** One array for the table's life, compacted in place (a new array in the field mid-run deoptimised the code reading it). */
  private readonly closing: Array<{ flow: FlowState; deadline: number }> = [];
  private closingHead = 0;
  private readonly fragmentHomes = new Map<string, FragmentHome>();
  /** Counters of built records, for the next flows to restart: at most as many as flows were ever active or awaiting their record at once. */
  private readonly spareCounters: FlowCounters[] = [];
  private ended: FlowState[] = [];
  private clock = 0;
  /**
   * No record is due before this packet time: a lower bound on every closing deadline and idle
   * deadline in the table. Deadlines only move later (a flow's last packet time never goes back),
   * so advanceEnded() skips its scans for the many packets that come before it.
   */
  private nextDue = Infinity;
  private readonly counts: FlowTableCounts = { packets: 0, flows: 0, records: 0, active: 0, evicted: 0, activeCuts: 0, fragments: 0, dropped: {} };

  constructor(options: FlowTableOptions) {
    this.idleMicros = (options.idleTimeoutSecs ?? 30) * 1e6;
    this.activeMicros = (options.activeTimeoutSecs ?? 300) * 1e6;
    this.lingerMicros = (options.tcpLingerSecs ?? 1) * 1e6;
    this.maxFlows = Math.max(1, options.maxFlows ?? 100_000);
    this.maxFragments = Math.max(1, options.maxFragmentDatagrams ?? 4096);
    this.inspectors = options.inspectors ?? [];
    this.inspectPerDirection = options.inspectPerDirection ?? 3;
    this.context = { customerId: options.customerId, sensor: options.sensor, tags: options.tags };
    this.owners = options.owners;
    this.entropy = options.entropy ?? sharedEntropyCounter();
    this.flows = new FlowIndex<FlowState>(this.maxFlows);
  }

  add(p: DecodedPacket): void {
    this.addHeaders(this.headers.setFrom(p));
  }

  /** The meter's path: the headers are read now and may be overwritten once this returns. */
  addHeaders(p: PacketHeaders): void {
    this.counts.packets++;
    if (p.tsMicros > this.clock) this.clock = p.tsMicros;
    if (p.fragment !== 'none') this.counts.fragments++;
    if (p.fragment === 'later') return this.addLaterFragment(p);

    let flow = this.flows.find(p);
    const senderFirst = this.flows.senderFirst;
    if (flow !== undefined) {
      if (flow.tcp !== undefined && flow.tcp.phase !== 'open' && isConnectionStart(p)) {
        // A new connection on the same ports after the old one ended.
        this.finish(flow);
        flow = undefined;
      } else if (p.tsMicros - flow.counters.startMicros >= this.activeMicros) {
        this.ended.push(flow.cut(p.tsMicros, this.countersFrom(p.tsMicros)));
        this.counts.records++;
        this.counts.activeCuts++;
      }
    }
    if (flow === undefined) {
      flow = this.open(p, senderFirst);
      this.flows.insert(flow);
    }
    this.recency.touch(flow);

    const fromSrc = flow.fromSrc(p, senderFirst);
    const wasOpen = flow.tcp?.phase === 'open';
    flow.add(p, fromSrc, this.entropy);
    if (this.inspectors.length > 0) flow.inspect(p, fromSrc, this.inspectors, this.inspectPerDirection);
    if (p.fragment === 'first' && p.fragmentId >= 0) this.rememberFragment(p, flow, fromSrc);

    const phase = flow.tcp?.phase;
    if (phase === 'closed' || isDnsAnswer(flow, fromSrc)) this.finish(flow);
    else if (wasOpen && phase === 'closing') {
      const deadline = p.tsMicros + this.lingerMicros;
      this.closing.push({ flow, deadline });
      if (deadline < this.nextDue) this.nextDue = deadline;
    }
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
    if (nowMicros > this.clock) this.clock = nowMicros;
    if (nowMicros < this.nextDue) return this.take();
    const closing = this.closing;
    while (this.closingHead < closing.length && closing[this.closingHead].deadline <= nowMicros) {
      const { flow } = closing[this.closingHead++];
      if (!flow.done) this.finish(flow);
    }
    if (this.closingHead > 1024 && this.closingHead * 2 > closing.length) {
      closing.splice(0, this.closingHead);
      this.closingHead = 0;
    }
    for (let flow = this.recency.oldest; flow !== undefined && flow.counters.lastMicros + this.idleMicros <= nowMicros; flow = this.recency.oldest) {
      this.finish(flow);
    }
    const oldest = this.recency.oldest;
    const idleDue = oldest === undefined ? Infinity : oldest.counters.lastMicros + this.idleMicros;
    this.nextDue = this.closingHead < closing.length ? Math.min(closing[this.closingHead].deadline, idleDue) : idleDue;
    return this.take();
  }

  /** flush(), handing over the flows (see advanceEnded). */
  flushEnded(): readonly FlowState[] {
    for (let flow = this.recency.oldest; flow !== undefined; flow = this.recency.oldest) this.finish(flow);
    this.closing.length = 0;
    this.closingHead = 0;
    this.nextDue = Infinity;
    this.fragmentHomes.clear();
    return this.take();
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

  stats(): FlowTableCounts {
    return { ...this.counts, active: this.flows.size, dropped: { ...this.counts.dropped } };
  }

  private open(p: PacketHeaders, senderFirst: boolean): FlowState {
    if (this.flows.size >= this.maxFlows) {
      this.counts.evicted++;
      this.finish(this.recency.oldest!);
    }
    this.counts.flows++;
    if (p.tsMicros + this.idleMicros < this.nextDue) this.nextDue = p.tsMicros + this.idleMicros;
    const id = identityOf(p);
    return new FlowState(id, senderFirst !== id.flipped, this.countersFrom(p.tsMicros));
  }

  private countersFrom(startMicros: number): FlowCounters {
    return this.spareCounters.pop()?.restart(startMicros) ?? new FlowCounters(startMicros);
  }

  private recordsOf(ended: readonly FlowState[]): FlowRecord[] {
    return ended.length === 0 ? NOTHING_READY : ended.map((flow) => this.recordOf(flow));
  }

  private finish(flow: FlowState): void {
    this.flows.remove(flow);
    this.recency.remove(flow);
    // A done flow counts no more packets: fragments and the closing queue check `done`.
    flow.end(this.clock);
    this.ended.push(flow);
    this.counts.records++;
  }

  /** The flows ended since the last call; none (most packets) hands back one shared, frozen empty array. */
  private take(): readonly FlowState[] {
    if (this.ended.length === 0) return NOTHING_ENDED;
    const out = this.ended;
    this.ended = [];
    return out;
  }

  private rememberFragment(p: PacketHeaders, flow: FlowState, fromSrc: boolean): void {
    const homes = this.fragmentHomes;
    if (homes.size >= this.maxFragments) homes.delete(homes.keys().next().value as string);
    homes.set(fragmentKey(p), { flow, fromSrc });
  }

  private addLaterFragment(p: PacketHeaders): void {
    const home = p.fragmentId < 0 ? undefined : this.fragmentHomes.get(fragmentKey(p));
    if (home === undefined || home.flow.done) {
      this.drop('fragment_without_first');
      return;
    }
    this.recency.touch(home.flow);
    home.flow.add(p, home.fromSrc, this.entropy);
  }

  private drop(reason: string): void {
    this.counts.dropped[reason] = (this.counts.dropped[reason] ?? 0) + 1;
  }
}

/** Fragments are rare: a text key is cheap enough for them. */
function fragmentKey(p: PacketHeaders): string {
  return `${p.addresses.join(',')}|${p.protocol}|${p.fragmentId}`;
}
