import { describe, expect, it } from 'vitest';
import type { BackfillProgress } from './flows.js';
import { createLogger } from './logring.js';
import { progressBar, progressReport, reportBackfill } from './progress.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('progressReport', () => {
  it('gives the share done, the rate of acknowledged flows and the time left at that pace', () => {
    expect(progressReport({ fraction: 0.25, generated: 30_000, elapsedMs: 10_000 }, 20_000)).toEqual({
      percent: 25,
      sent: 20_000,
      flows_per_second: 2_000,
      eta_s: 30,
    });
    expect(progressReport({ fraction: 0, generated: 0, elapsedMs: 0 }, 0)).toEqual({ percent: 0, sent: 0, flows_per_second: 0, eta_s: null });
    expect(progressReport({ fraction: 1, generated: 9, elapsedMs: 3_000 }, 9)).toMatchObject({ percent: 100, eta_s: 0 });
  });
});

describe('progressBar', () => {
  it('is one line: bar, percent, flows sent, rate and ETA', () => {
    expect(progressBar({ percent: 37.5, sent: 1_234_000, flows_per_second: 52_300, eta_s: 3_725 })).toBe(
      'backfill [#########...............]  37.5%  1,234,000 flows sent  52,300 flows/s  ETA 1:02:05',
    );
    expect(progressBar({ percent: 0, sent: 0, flows_per_second: 0, eta_s: null })).toContain('ETA --:--:--');
  });
});

describe('reportBackfill', () => {
  const setup = (tty: boolean) => {
    let progress: BackfillProgress | undefined;
    let ended = false;
    const written: string[] = [];
    const logged: string[] = [];
    const logger = createLogger({ write: (line) => logged.push(line) });
    const reporter = reportBackfill({
      progress: () => progress,
      sent: () => 500,
      ended: () => ended,
      tty,
      write: (t) => written.push(t),
      logger,
      intervalMs: 10,
    });
    return { reporter, written, logged, set: (p: BackfillProgress) => (progress = p), end: () => (ended = true) };
  };

  it('on a terminal redraws a bar in place, keeps log lines above it, and leaves its last state', async () => {
    const r = setup(true);
    await sleep(40);
    expect(r.written).toEqual([]); // nothing before the backfill starts
    r.set({ fraction: 0.5, generated: 1_000, elapsedMs: 1_000 });
    await sleep(40);
    expect(r.written.at(-1)).toBe(`\r${progressBar({ percent: 50, sent: 500, flows_per_second: 500, eta_s: 1 })}\x1b[K`);
    r.reporter.log('{"event":"x"}');
    const [clear, line, redraw] = r.written.slice(-3);
    expect([clear, line]).toEqual(['\r\x1b[K', '{"event":"x"}\n']);
    expect(redraw).toMatch(/^\rbackfill \[/);
    r.end();
    await sleep(40);
    expect(r.written.at(-1)).toBe('\n');
    const count = r.written.length;
    await sleep(40);
    expect(r.written.length).toBe(count); // stopped once the backfill ended
    expect(r.logged).toEqual([]);
  });

  it('elsewhere logs flows.backfill_progress JSON lines and writes no bar', async () => {
    const r = setup(false);
    r.set({ fraction: 0.1, generated: 100, elapsedMs: 2_000 });
    await sleep(50);
    r.reporter.stop();
    expect(r.written).toEqual([]);
    expect(r.logged.length).toBeGreaterThan(0);
    expect(JSON.parse(r.logged[0]!)).toMatchObject({
      level: 'info',
      event: 'flows.backfill_progress',
      percent: 10,
      sent: 500,
      flows_per_second: 250,
      eta_s: 18,
    });
  });
});
