// Public surface of the deterministic flow generator (docs/flowgen.md).

import { createFlowGenerator, type FlowGenerator } from './generator.js';
import type { FlowGeneratorOptions } from './options.js';
import type { FlowRecord } from './types.js';

export { createFlowGenerator, groundTruth, type FlowGenerator } from './generator.js';
export type { Incident } from './scenarios/index.js';
export type {
  BeaconScenario,
  BruteforceScenario,
  DnsTunnelScenario,
  ExfilScenario,
  FlowGeneratorOptions,
  NetworkOptions,
  ResolvedOptions,
  ScanScenario,
  ScenarioKind,
  ScenarioSpec,
  ScenarioTiming,
} from './options.js';
export { SCENARIO_KINDS } from './options.js';
export type { SiteNetwork } from './network.js';
export type { InternalHost } from './endpoints.js';
export type { Place, PlaceName } from './catalog/places.js';
export type * from './types.js';

/** Up to n further flows from a generator. */
export function generateBatch(gen: FlowGenerator, n: number): FlowRecord[] {
  return gen.take(n);
}

export interface BackfillOptions extends Omit<FlowGeneratorOptions, 'startMs' | 'endMs'> {
  /** How far back from nowMs the flows start. */
  hours: number;
  /** End of the backfill (exclusive). Default Date.now(); pass it for reproducible output. */
  nowMs?: number;
}

/**
 * A bounded generator over [nowMs − hours, nowMs): iterate it (or take()
 * batches) to stream hours of history without holding it in memory.
 */
export function backfill(options: BackfillOptions): FlowGenerator {
  const { hours, nowMs, ...rest } = options;
  if (!(hours > 0)) throw new Error('hours must be > 0');
  const endMs = Math.floor(nowMs ?? Date.now());
  return createFlowGenerator({ ...rest, startMs: endMs - Math.round(hours * 3_600_000), endMs });
}
