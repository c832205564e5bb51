// Plans every requested scenario, streams its flows, and describes it as
// ground truth. Each scenario draws from its own PRNG stream, so adding or
// removing one never changes the benign flows or the other scenarios.

import type { ResolvedOptions, ScenarioSpec, ScenarioKind } from '../options.js';
import { Prng } from '../prng.js';
import { buildRecord, flowKey, type FlowSpec } from '../record.js';
import type { FlowSource } from '../source.js';
import type { FlowRecord } from '../types.js';
import type { World } from '../world.js';
import { planBeacon } from './beacon.js';
import { planBruteforce } from './bruteforce.js';
import { planDnsTunnel } from './dns-tunnel.js';
import { planExfil } from './exfil.js';
import type { Incident, PlannedIncident, ScenarioContext } from './plan.js';
import { planScan } from './scan.js';

export type { Incident } from './plan.js';

type ScenarioObject = Exclude<ScenarioSpec, ScenarioKind>;

function planOne(spec: ScenarioObject, ctx: ScenarioContext): PlannedIncident {
  switch (spec.kind) {
    case 'beacon':
      return planBeacon(spec, ctx);
    case 'exfil':
      return planExfil(spec, ctx);
    case 'scan':
      return planScan(spec, ctx);
    case 'bruteforce':
      return planBruteforce(spec, ctx);
    case 'dns-tunnel':
      return planDnsTunnel(spec, ctx);
    default:
      throw new Error(`unknown scenario kind ${(spec as { kind: string }).kind}`);
  }
}

export interface PlannedScenario {
  incident: Incident;
  flows: FlowSpec[];
  rng: Prng;
}

/** Plans all scenarios and clips their flows to [startMs, endMs). */
export function planScenarios(world: World, options: ResolvedOptions): PlannedScenario[] {
  const root = Prng.from(options.seed);
  const seen = new Map<ScenarioKind, number>();
  const taken = new Set<string>();
  return options.scenarios.map((spec) => {
    const ordinal = seen.get(spec.kind) ?? 0;
    seen.set(spec.kind, ordinal + 1);
    const rng = root.fork(`scenario/${spec.kind}/${ordinal}`);
    const planned = planOne(spec, { world, rng, ordinal, taken });
    const flows = planned.flows.filter((f) => f.ts >= options.startMs && f.ts < options.endMs);
    const keys = flows.map(flowKey);
    const incident: Incident = {
      ...planned.header,
      id: `${spec.kind}-${ordinal + 1}`,
      window: flows.length > 0 ? { startMs: flows[0].ts, endMs: flows[flows.length - 1].ts } : { startMs: options.startMs, endMs: options.startMs },
      flowCount: flows.length,
      flowKeys: keys,
    };
    return { incident, flows, rng: rng.fork('records') };
  });
}

export class ScenarioTraffic implements FlowSource {
  private index = 0;

  constructor(
    private readonly world: World,
    private readonly planned: PlannedScenario,
  ) {}

  peek(): number {
    const flows = this.planned.flows;
    return this.index < flows.length ? flows[this.index].ts : Infinity;
  }

  emit(): FlowRecord {
    const spec = this.planned.flows[this.index++];
    return buildRecord(spec, this.world.record, this.planned.rng);
  }
}
