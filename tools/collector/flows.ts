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
}

export interface FlowStats {
  generated: number;
  backfill_generated: number;
  live_generated: number;
  backfill_done: boolean;
  /** The newest @timestamp handed to ingest (epoch ms). */
  last_timestamp: number | null;
}

export class FlowPump {
  private readonly counters: FlowStats = { generated: 0, backfill_generated: 0, live_generated: 0, backfill_done: false, last_timestamp: null };
  private readonly incidents: Incident[] = [];

  constructor(
    private readonly plan: FlowPlan,
    private readonly sink: FlowSink,
    private readonly logger: Logger,
  ) {}

  stats(): FlowStats {
    return { ...this.counters };
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
        this.incidents.push(...gen.groundTruth());
        this.logger.info('flows.backfill_started', { hours: plan.backfillHours, incidents: this.incidents.map((i) => i.id) });
        await this.drainBackfill(gen, signal);
        this.logger.info('flows.backfill_done', { flows: this.counters.backfill_generated });
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
      this.logger.info('flows.live_done', { flows: this.counters.live_generated });
    } catch (error) {
      if (error instanceof QueueClosed) return;
      throw error;
    }
  }

  private async drainBackfill(gen: FlowGenerator, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const flows = gen.take(this.plan.batchFlows);
      if (flows.length === 0) return;
      this.count(flows, 'backfill_generated');
      await this.sink.push(flows, signal);
    }
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
