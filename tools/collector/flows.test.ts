import { describe, expect, it } from 'vitest';
import { FlowPump, type FlowPlan } from './flows.js';
import { createLogger } from './logring.js';

const plan = (over: Partial<FlowPlan>): FlowPlan => ({
  customerId: 'cus_1',
  sensorId: 's-1',
  seed: 7,
  flowsPerSecond: 50,
  scenarios: [],
  diurnal: false,
  backfillHours: 0,
  batchFlows: 500,
  flushIntervalMs: 50,
  ...over,
});

/** Runs a pump into a sink that takes everything, stopping it after `stopAfterMs` (if given). */
async function pump(p: FlowPlan, stopAfterMs?: number) {
  const events: string[] = [];
  const logger = createLogger({ write: (line) => events.push(JSON.parse(line).event) });
  // The sink yields a turn per batch, as a real one (waiting on the network) does.
  const flows = new FlowPump(p, { push: () => new Promise<void>((resolve) => setImmediate(resolve)) }, logger);
  const abort = new AbortController();
  if (stopAfterMs !== undefined) setTimeout(() => abort.abort(), stopAfterMs);
  await flows.run(abort.signal);
  return { events, stats: flows.stats(), progress: flows.backfillProgress() };
}

describe('FlowPump: done or interrupted', () => {
  it('says done when the backfill and the live seconds ran out', async () => {
    const { events, stats, progress } = await pump(plan({ backfillHours: 0.1, seconds: 0.3 }));
    expect(events).toEqual(['flows.backfill_started', 'flows.backfill_done', 'flows.live_started', 'flows.live_done']);
    expect(stats).toMatchObject({ backfill_done: true, interrupted: false });
    expect(progress).toMatchObject({ fraction: 1, generated: stats.backfill_generated });
  });

  it('says interrupted when stopped during the backfill, and goes no further', async () => {
    // A week at 500 flows/s: far more than 100 ms can generate.
    const { events, stats, progress } = await pump(plan({ flowsPerSecond: 500, backfillHours: 168 }), 100);
    expect(events).toEqual(['flows.backfill_started', 'flows.backfill_interrupted']);
    expect(stats).toMatchObject({ backfill_done: false, interrupted: true });
    expect(progress!.fraction).toBeGreaterThan(0);
    expect(progress!.fraction).toBeLessThan(1);
  });

  it('says interrupted when stopped before its --seconds of live flows, done when stopped without them', async () => {
    expect((await pump(plan({ seconds: 60 }), 200)).events).toEqual(['flows.live_started', 'flows.live_interrupted']);
    const endless = await pump(plan({}), 200);
    expect(endless.events).toEqual(['flows.live_started', 'flows.live_done']);
    expect(endless.stats.interrupted).toBe(false);
  });
});
