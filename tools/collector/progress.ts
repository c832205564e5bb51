// Progress of a backfill, for the person waiting on it: a bar redrawn in place when stderr is a
// terminal, else a `flows.backfill_progress` JSON line now and then among the other logs.

import type { BackfillProgress } from './flows.js';
import type { Logger } from './logring.js';

export interface ProgressReport {
  /** Share of the backfill's hours generated, in percent (one decimal). */
  percent: number;
  /** Flows the service acknowledged as stored. */
  sent: number;
  /** `sent` per second of the backfill so far. */
  flows_per_second: number;
  /** Seconds left at the pace so far; null until there is a pace. */
  eta_s: number | null;
}

export function progressReport(progress: BackfillProgress, sent: number): ProgressReport {
  const { fraction, elapsedMs } = progress;
  const seconds = elapsedMs / 1000;
  return {
    percent: Math.floor(fraction * 1000) / 10,
    sent,
    flows_per_second: seconds > 0 ? Math.round(sent / seconds) : 0,
    eta_s: fraction > 0 && fraction < 1 ? Math.ceil((seconds * (1 - fraction)) / fraction) : fraction >= 1 ? 0 : null,
  };
}

const BAR_CELLS = 24;
const grouped = (n: number) => n.toLocaleString('en-US');
const clock = (s: number) => `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;

/** `backfill [#########...............]  37.5%  1,234,000 flows sent  52,300 flows/s  ETA 0:00:25` */
export function progressBar(report: ProgressReport): string {
  const filled = Math.round((report.percent / 100) * BAR_CELLS);
  const bar = `${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}`;
  const eta = report.eta_s === null ? '--:--:--' : clock(report.eta_s);
  return `backfill [${bar}] ${report.percent.toFixed(1).padStart(5)}%  ${grouped(report.sent)} flows sent  ${grouped(report.flows_per_second)} flows/s  ETA ${eta}`;
}

export interface ProgressOptions {
  /** The backfill's progress; undefined before it starts or when there is none. */
  progress: () => BackfillProgress | undefined;
  /** Flows acknowledged so far. */
  sent: () => number;
  /** True once the backfill ended (done or interrupted): the reporter then stops. */
  ended: () => boolean;
  /** A terminal: draw the bar on it with `write`; else log JSON lines with `logger`. */
  tty: boolean;
  write: (text: string) => void;
  logger: Logger;
  /** Defaults: the bar 4 times a second, a JSON line every 5 s. */
  intervalMs?: number;
}

/**
 * Reports a backfill's progress until it ends. Returns `log`, through which log lines must go
 * while it runs (on a terminal the bar is cleared for them and drawn again below), and `stop`.
 */
export function reportBackfill(options: ProgressOptions): { log: (line: string) => void; stop: () => void } {
  const { tty, write } = options;
  let drawn = false;
  const clear = () => {
    if (drawn) write('\r\x1b[K');
    drawn = false;
  };
  const tick = () => {
    const progress = options.progress();
    if (progress) {
      const report = progressReport(progress, options.sent());
      if (tty) {
        write(`\r${progressBar(report)}\x1b[K`);
        drawn = true;
      } else options.logger.info('flows.backfill_progress', { ...report });
    }
    if (options.ended()) stop();
  };
  const timer = setInterval(tick, options.intervalMs ?? (tty ? 250 : 5_000));
  timer.unref();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    // The bar's last state stays on the terminal, above what follows.
    if (drawn) write('\n');
    drawn = false;
  };
  const log = (line: string) => {
    const redraw = drawn;
    clear();
    write(`${line}\n`);
    if (redraw && !stopped) tick();
  };
  return { log, stop };
}
