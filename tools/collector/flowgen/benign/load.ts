// The load-driven benign mix: a Poisson process whose rate and composition
// follow the working week. People drive most classes (browsing, DNS, file
// shares); machines drive a steady floor (servers, visitors, resolvers).

import { hourOfWeek, hourStart, HOUR_MS, HOURS_PER_WEEK, MEAN_PRESENCE, presence } from '../diurnal.js';
import { WeightedTable, type Prng } from '../prng.js';
import { buildRecord } from '../record.js';
import type { FlowSource } from '../source.js';
import type { FlowRecord } from '../types.js';
import type { World } from '../world.js';
import { resolverUpstream, workstationDns } from './dns.js';
import { guestEgress, inboundWeb, serverEgress, workstationEgress, type TrafficModel } from './egress.js';
import { eastWest } from './internal.js';

interface TrafficClass {
  name: string;
  /** Weight that is there around the clock. */
  floor: number;
  /** Weight that scales with the share of people at work. */
  people: number;
  model: (world: World, rng: Prng) => TrafficModel;
}

/** Shares at a full working hour; docs/flowgen.md shows the resulting mix. */
export const TRAFFIC_CLASSES: readonly TrafficClass[] = [
  { name: 'workstation-egress', floor: 0.02, people: 0.46, model: workstationEgress },
  { name: 'workstation-dns', floor: 0.012, people: 0.25, model: workstationDns },
  { name: 'resolver-upstream', floor: 0.006, people: 0.085, model: resolverUpstream },
  { name: 'east-west', floor: 0.006, people: 0.065, model: eastWest },
  { name: 'guest-egress', floor: 0.002, people: 0.03, model: guestEgress },
  { name: 'server-egress', floor: 0.03, people: 0.01, model: serverEgress },
  { name: 'inbound-web', floor: 0.025, people: 0.02, model: inboundWeb },
];

export class LoadDrivenTraffic implements FlowSource {
  private readonly models: TrafficModel[];
  /** Per hour of the week: the rate multiplier (weekly mean 1) and the class mix. */
  private readonly rateByHour: Float64Array;
  private readonly mixByHour: WeightedTable<number>[];
  private readonly perMs: number;
  private readonly endMs: number;
  private readonly offset: number;
  private t: number;
  private next: number;
  private hourEnd = -Infinity;
  private hourRate = 0;
  private hourMix!: WeightedTable<number>;

  constructor(
    private readonly world: World,
    private readonly rng: Prng,
  ) {
    const { options } = world;
    this.models = TRAFFIC_CLASSES.map((c) => c.model(world, rng));
    this.rateByHour = new Float64Array(HOURS_PER_WEEK);
    this.mixByHour = [];
    const totals: number[] = [];
    for (let h = 0; h < HOURS_PER_WEEK; h++) {
      const people = options.diurnal ? presence(h) : MEAN_PRESENCE;
      const weights = TRAFFIC_CLASSES.map((c) => c.floor + c.people * people);
      totals.push(weights.reduce((a, b) => a + b, 0));
      this.mixByHour.push(
        new WeightedTable(
          TRAFFIC_CLASSES.map((_, i) => i),
          weights,
        ),
      );
    }
    const mean = totals.reduce((a, b) => a + b, 0) / HOURS_PER_WEEK;
    totals.forEach((total, h) => (this.rateByHour[h] = total / mean));
    this.perMs = options.flowsPerSecond / 1000;
    this.endMs = options.endMs;
    this.offset = options.network.utcOffsetMinutes;
    this.t = options.startMs;
    this.next = this.perMs > 0 ? this.advance() : Infinity;
  }

  peek(): number {
    return this.next;
  }

  emit(): FlowRecord {
    const ts = this.next;
    const cls = this.hourMix.pick(this.rng);
    const record = buildRecord(this.models[cls](ts), this.world.record, this.rng);
    this.next = this.advance();
    return record;
  }

  /**
   * Next arrival of an inhomogeneous Poisson process with a rate that is
   * constant within each local hour: spend one unit-exponential of "work"
   * across hours until it is used up.
   */
  private advance(): number {
    let work = this.rng.exponential(1);
    for (;;) {
      if (this.t >= this.hourEnd) this.enterHour(this.t);
      const rate = this.perMs * this.hourRate;
      const room = (this.hourEnd - this.t) * rate;
      if (work <= room) {
        this.t += work / rate;
        break;
      }
      work -= room;
      this.t = this.hourEnd;
      if (this.t >= this.endMs) return Infinity;
    }
    const ts = Math.floor(this.t);
    return ts >= this.endMs ? Infinity : ts;
  }

  private enterHour(t: number): void {
    const how = hourOfWeek(t, this.offset);
    this.hourEnd = hourStart(t, this.offset) + HOUR_MS;
    this.hourRate = this.rateByHour[how];
    this.hourMix = this.mixByHour[how];
  }
}
