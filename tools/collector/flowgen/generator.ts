// The generator: merges the load-driven mix, the scheduled traffic and every
// planted scenario into one stream in @timestamp order.

import { LoadDrivenTraffic } from './benign/load.js';
import { ScheduledTraffic } from './benign/scheduled.js';
import type { SiteNetwork } from './network.js';
import { resolveOptions, type FlowGeneratorOptions, type ResolvedOptions } from './options.js';
import { Prng } from './prng.js';
import { planScenarios, ScenarioTraffic, type Incident } from './scenarios/index.js';
import type { FlowSource } from './source.js';
import type { FlowRecord } from './types.js';
import { buildWorld } from './world.js';

export interface FlowGenerator extends IterableIterator<FlowRecord> {
  readonly options: ResolvedOptions;
  /** The site's hosts (addresses, names, roles), stable for the options. */
  readonly network: SiteNetwork;
  /** Up to n further flows (fewer only when the stream ends). */
  take(n: number): FlowRecord[];
  /** The planted incidents, identical to groundTruth(options). */
  groundTruth(): Incident[];
}

class MergedFlowGenerator implements FlowGenerator {
  readonly options: ResolvedOptions;
  readonly network: SiteNetwork;
  private readonly sources: FlowSource[];
  private readonly incidents: Incident[];

  constructor(input: FlowGeneratorOptions) {
    this.options = resolveOptions(input);
    const world = buildWorld(this.options);
    this.network = world.network;
    const root = Prng.from(this.options.seed);
    const planned = planScenarios(world, this.options);
    this.incidents = planned.map((p) => p.incident);
    this.sources = [
      new LoadDrivenTraffic(world, root.fork('load')),
      new ScheduledTraffic(world, root.fork('scheduled')),
      ...planned.map((p) => new ScenarioTraffic(world, p)),
    ];
  }

  next(): IteratorResult<FlowRecord> {
    const sources = this.sources;
    let best = -1;
    let bestTs = Infinity;
    // Ties go to the earlier source, so the merge order is fixed by the options alone.
    for (let i = 0; i < sources.length; i++) {
      const ts = sources[i].peek();
      if (ts < bestTs) {
        bestTs = ts;
        best = i;
      }
    }
    if (best < 0) return { done: true, value: undefined };
    return { done: false, value: sources[best].emit() };
  }

  take(n: number): FlowRecord[] {
    const out: FlowRecord[] = [];
    for (let i = 0; i < n; i++) {
      const step = this.next();
      if (step.done) break;
      out.push(step.value);
    }
    return out;
  }

  groundTruth(): Incident[] {
    return structuredClone(this.incidents);
  }

  [Symbol.iterator](): IterableIterator<FlowRecord> {
    return this;
  }
}

export function createFlowGenerator(options: FlowGeneratorOptions): FlowGenerator {
  return new MergedFlowGenerator(options);
}

/** Ground truth without generating the benign flows. */
export function groundTruth(options: FlowGeneratorOptions): Incident[] {
  const resolved = resolveOptions(options);
  return planScenarios(buildWorld(resolved), resolved).map((p) => p.incident);
}
