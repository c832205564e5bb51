// Where the flows come from: flowgen, first hours of history as fast as ingest takes them, then
// live flows as their timestamps come due. Generation waits whenever the ingest queue is full.

import { backfill, createFlowGenerator, type FlowGenerator, type FlowRecord, type Incident, type ScenarioKind } from './flowgen/index.js';
import { sleep } from './backoff.js';
import { QueueClosed } from './ingest.js';
import type { Logger } from './logring.js';

export interface FlowPlan {
  /** The tenant the flows are labelled with (the service overwrites it anyway). */
  customerId: string;
  /** Sensor id in path[0]. */
  sensorId: string;
  seed: number | string;
  flowsPerSecond: number;
  scenarios: ScenarioKind[];
  diurnal: boolean;
  /** Hours of history sent first; 0 for none. */
  backfillHours: number;
  /** Seconds of live flows after the backfill; undefined = until stopped, 0 = none. */
  seconds?: number;
  batchFlows: number;
  flushIntervalMs: number;
}

export interface FlowSink {
  /** Waits while the sink is full, unless the signal aborts. */
  push(flows: readonly unknown[], signal?: AbortSignal): Promise<void>;
  /**
   * Present when the sink sends Native batches: takes `rows` flows already written as one Native
   * block (native-batch.ts), which the meter writes from its counters rather than build records.
   */
  readonly pushNative?: (block: Buffer, rows: number, signal?: AbortSignal) => Promise<void>;
}

export interface FlowStats {
  generated: number;
  backfill_generated: number;
  live_generated: number;
  backfill_done: boolean;
  /** Stopped (signal, stop()) before the backfill or the --seconds of live flows ran out. */
  interrupted: boolean;
  /** The newest @timestamp handed to ingest (epoch ms). */
  last_timestamp: number | null;
}

/** How far a backfill is, for progress reports (progress.ts). */
export interface BackfillProgress {
  /** The share of the backfill's hours generated (by the newest @timestamp handed to ingest), 0–1. */
  fraction: number;
  generated: number;
  /** Wall-clock time since the backfill started. */
  elapsedMs: number;
}

export const emptyFlowStats = (): FlowStats => ({
  generated: 0,
  backfill_generated: 0,
  live_generated: 0,
  backfill_done: false,
  interrupted: false,
  last_timestamp: null,
});

export class FlowPump {
  private readonly counters = emptyFlowStats();
  private readonly incidents: Incident[] = [];
  private backfillWindow: { startMs: number; endMs: number; startedAt: number } | undefined;

  constructor(
    private readonly plan: FlowPlan,
    private readonly sink: FlowSink,
    private readonly logger: Logger,
  ) {}

  stats(): FlowStats {
    return { ...this.counters };
  }

  /** Undefined before the backfill starts, and when there is none. */
  backfillProgress(): BackfillProgress | undefined {
    const window = this.backfillWindow;
    if (!window) return undefined;
    const last = this.counters.last_timestamp ?? window.startMs;
    const fraction = this.counters.backfill_done ? 1 : Math.min(1, Math.max(0, (last - window.startMs) / (window.endMs - window.startMs)));
    return { fraction, generated: this.counters.backfill_generated, elapsedMs: Date.now() - window.startedAt };
  }

  /** The planted incidents so far (backfill's at once, live's when the live phase starts). */
  groundTruth(): Incident[] {
    return structuredClone(this.incidents);
  }

  /** Backfill, then live; resolves when both are done or the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const plan = this.plan;
    if (plan.flowsPerSecond <= 0) {
      this.counters.backfill_done = true;
      return;
    }
    const hasBackfill = plan.backfillHours > 0;
    // Scenarios are planted where there is room for them: in the history when there is one.
    const common = {
      seed: plan.seed,
      customerId: plan.customerId,
      nodeId: plan.sensorId,
      flowsPerSecond: plan.flowsPerSecond,
      diurnal: plan.diurnal,
    };
    try {
      const liveStart = Math.floor(Date.now());
      if (hasBackfill) {
        const gen = backfill({ ...common, scenarios: plan.scenarios, hours: plan.backfillHours, nowMs: liveStart });
        this.backfillWindow = { startMs: gen.options.startMs, endMs: gen.options.endMs, startedAt: Date.now() };
        this.incidents.push(...gen.groundTruth());
        this.logger.info('flows.backfill_started', { hours: plan.backfillHours, incidents: this.incidents.map((i) => i.id) });
        const finished = await this.drainBackfill(gen, signal);
        this.ended('backfill', finished, this.counters.backfill_generated, { percent: percent(this.backfillProgress()!.fraction) });
        if (!finished) return;
      }
      this.counters.backfill_done = true;
      if (signal.aborted || plan.seconds === 0) return;
      const start = hasBackfill ? liveStart : Math.floor(Date.now());
      const gen = createFlowGenerator({
        ...common,
        seed: hasBackfill ? `${plan.seed}/live` : plan.seed,
        scenarios: hasBackfill ? [] : plan.scenarios,
        startMs: start,
        ...(plan.seconds !== undefined ? { endMs: start + Math.max(1, Math.round(plan.seconds * 1000)) } : {}),
      });
      if (!hasBackfill) this.incidents.push(...gen.groundTruth());
      this.logger.info('flows.live_started', { flows_per_second: plan.flowsPerSecond, seconds: plan.seconds ?? null });
      await this.runLive(gen, signal);
      // Without --seconds the live phase ends only when stopped: that is its end, not a cut.
      this.ended('live', plan.seconds === undefined || !signal.aborted, this.counters.live_generated);
    } catch (error) {
      if (error instanceof QueueClosed) return;
      throw error;
    }
  }

  /** Resolves true when every backfill flow was handed over, false when the signal cut it short. */
  private async drainBackfill(gen: FlowGenerator, signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      const flows = gen.take(this.plan.batchFlows);
      if (flows.length === 0) return true;
      this.count(flows, 'backfill_generated');
      await this.sink.push(flows, signal);
    }
    return false;
  }

  /** `flows.<phase>_done`, or `flows.<phase>_interrupted` when stopped before the phase ran out. */
  private ended(phase: 'backfill' | 'live', finished: boolean, flows: number, fields: Record<string, unknown> = {}): void {
    if (!finished) this.counters.interrupted = true;
    this.logger.info(`flows.${phase}_${finished ? 'done' : 'interrupted'}`, { flows, ...fields });
  }

  /** Hands over every flow whose @timestamp has come, in batches of batchFlows or every flushIntervalMs. */
  private async runLive(gen: FlowGenerator, signal: AbortSignal): Promise<void> {
    const { batchFlows, flushIntervalMs } = this.plan;
    let buffer: FlowRecord[] = [];
    let lastFlush = Date.now();
    let next = gen.next();
    // Generated flows are always handed over, also when stopping; the sink decides what it can send.
    const flush = async () => {
      const flows = buffer;
      buffer = [];
      lastFlush = Date.now();
      if (flows.length) {
        this.count(flows, 'live_generated');
        await this.sink.push(flows, signal);
      }
    };
    while (!signal.aborted && !next.done) {
      const now = Date.now();
      while (!next.done && next.value['@timestamp'] <= now) {
        buffer.push(next.value);
        next = gen.next();
        if (buffer.length >= batchFlows) await flush();
      }
      if (now - lastFlush >= flushIntervalMs) await flush();
      if (next.done) break;
      const wait = Math.min(next.value['@timestamp'] - Date.now(), flushIntervalMs - (Date.now() - lastFlush), 250);
      await sleep(Math.max(wait, 5), signal);
    }
    await flush();
  }

  private count(flows: FlowRecord[], phase: 'backfill_generated' | 'live_generated'): void {
    this.counters.generated += flows.length;
    this.counters[phase] += flows.length;
    this.counters.last_timestamp = flows[flows.length - 1]['@timestamp'];
  }
}

const percent = (fraction: number) => Math.floor(fraction * 1000) / 10;
