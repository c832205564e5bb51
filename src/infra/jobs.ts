import type pg from 'pg';
import type { Logger } from './logger.js';

/**
 * A job that runs every `intervalMs`, never overlapping itself: the next run is scheduled only
 * when the previous one has finished, so a slow run delays the next instead of piling up.
 * `trigger()` runs it now (or right after the current run). `stop()` waits for a run in progress.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly run: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Starts the schedule; the first run comes after one interval (plus up to 10% jitter, so processes spread out). */
  start(firstDelayMs = this.intervalMs * (1 + Math.random() * 0.1)): void {
    if (!this.stopped || this.intervalMs <= 0) return;
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  /** Runs now, or once more right after the run in progress. Resolves when that run is over. */
  async trigger(): Promise<void> {
    if (this.current) {
      this.again = true;
      await this.current;
      if (this.current) await this.current;
      return;
    }
    await this.execute();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.execute(), delayMs);
    this.timer.unref();
  }

  private execute(): Promise<void> {
    if (this.current) return this.current;
    clearTimeout(this.timer);
    const started = performance.now();
    this.current = this.run()
      .catch((error) => this.logger.error('job.failed', { job: this.name, error }))
      .finally(() => {
        this.logger.debug('job.finished', { job: this.name, ms: Math.round(performance.now() - started) });
        this.current = undefined;
        if (this.again) {
          this.again = false;
          void this.execute();
        } else this.schedule(this.intervalMs);
      });
    return this.current;
  }
}

/** Namespaces of our advisory locks (the first key of pg_advisory_lock(int, int)). */
export const LockSpace = {
  detection: 72_002,
  /** Processes holding collector control channels (modules/control/holder-lock.ts). */
  controlHolders: 72_003,
  /** The process working the tenant deletion jobs (tenancy/deletion-worker.ts). */
  tenantDeletions: 72_004,
} as const;

/**
 * Runs `fn` while this process holds a PostgreSQL advisory lock on (space, name), on a connection
 * of its own, so that across every process sharing the database only one runs it at a time. With
 * `waitMs` 0 it gives up at once when another holds the lock (returns `{ acquired: false }`);
 * otherwise it retries until then. The lock dies with its connection, so a crashed holder never
 * blocks the others. (Embedded PGlite serves every connection from one session, where advisory
 * locks are re-entrant: there, only the caller's in-process exclusion holds.)
 */
export async function withAdvisoryLock<T>(
  pool: pg.Pool,
  space: number,
  name: string,
  fn: () => Promise<T>,
  options: { waitMs?: number; retryMs?: number } = {},
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  const client = await pool.connect();
  // Set when the connection itself failed: it may still hold the lock, so it is destroyed, not reused.
  let broken: Error | undefined;
  const sql = <R extends pg.QueryResultRow>(text: string) =>
    client.query<R>(text, [space, name]).catch((error: Error) => {
      broken = error;
      throw error;
    });
  try {
    const deadline = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      const { rows } = await sql<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok');
      if (rows[0].ok) break;
      if (Date.now() >= deadline) return { acquired: false };
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 250));
    }
    try {
      return { acquired: true, value: await fn() };
    } finally {
      await sql('SELECT pg_advisory_unlock($1, hashtext($2))').catch(() => undefined);
    }
  } finally {
    client.release(broken);
  }
}
