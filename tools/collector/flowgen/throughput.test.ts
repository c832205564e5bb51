import { describe, expect, it } from 'vitest';
import { TUESDAY_10AM } from './fixtures.js';
import { backfill, createFlowGenerator, generateBatch } from './index.js';

// No timed assertions (bench.ts measures speed); these check that large runs
// stream through and that backfill lays history out where it was asked to.

describe('volume', () => {
  it('generates 100k flows', () => {
    const gen = createFlowGenerator({ seed: 1, customerId: 'bulk', startMs: TUESDAY_10AM, flowsPerSecond: 5000, scenarios: ['scan', 'dns-tunnel'] });
    let count = 0;
    let last = -Infinity;
    for (let i = 0; i < 100; i++) {
      const batch = generateBatch(gen, 1000);
      expect(batch.length).toBe(1000);
      count += batch.length;
      last = batch[batch.length - 1]['@timestamp'];
    }
    expect(count).toBe(100_000);
    // 100k flows at ~5000/s (×2 at 10:00 on a weekday) is 10–20 s of traffic.
    expect(last - TUESDAY_10AM).toBeGreaterThan(5_000);
    expect(last - TUESDAY_10AM).toBeLessThan(40_000);
  });

  it('an unbounded generator keeps going; a bounded one ends', () => {
    const bounded = createFlowGenerator({ seed: 1, customerId: 'c', startMs: TUESDAY_10AM, endMs: TUESDAY_10AM + 60_000, flowsPerSecond: 10 });
    const all = generateBatch(bounded, 1_000_000);
    expect(all.length).toBeGreaterThan(600);
    expect(all.length).toBeLessThan(2000);
    expect(generateBatch(bounded, 10)).toEqual([]);
    expect(bounded.next().done).toBe(true);
  });
});

describe('backfill', () => {
  const nowMs = TUESDAY_10AM + 6 * 3_600_000;
  const hours = 3;
  const flows = [...backfill({ seed: 'bf', customerId: 'c', hours, flowsPerSecond: 5, nowMs, scenarios: ['beacon'] })];

  it('covers [now − hours, now) at the requested density', () => {
    const first = flows[0]['@timestamp'];
    const last = flows[flows.length - 1]['@timestamp'];
    expect(first).toBeGreaterThanOrEqual(nowMs - hours * 3_600_000);
    expect(first).toBeLessThan(nowMs - hours * 3_600_000 + 60_000);
    expect(last).toBeLessThan(nowMs);
    expect(last).toBeGreaterThan(nowMs - 60_000);
    // A weekday afternoon runs hotter than the weekly mean (a full working hour is 2.4×).
    const nominal = 5 * hours * 3600;
    expect(flows.length).toBeGreaterThan(nominal);
    expect(flows.length).toBeLessThan(2.6 * nominal);
  });

  it('spreads flows over every hour', () => {
    const perHour = new Array(hours).fill(0);
    for (const f of flows) perHour[Math.floor((f['@timestamp'] - (nowMs - hours * 3_600_000)) / 3_600_000)]++;
    for (const n of perHour) expect(n).toBeGreaterThan(flows.length / (hours * 3));
  });

  it('is reproducible when nowMs is given', () => {
    const again = generateBatch(backfill({ seed: 'bf', customerId: 'c', hours, flowsPerSecond: 5, nowMs, scenarios: ['beacon'] }), 2000);
    expect(JSON.stringify(again)).toBe(JSON.stringify(flows.slice(0, 2000)));
  });
});
