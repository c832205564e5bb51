import type pg from 'pg';
import { type FlowEngine, pendingFlowStoreMigrations } from '../../flowstore/index.js';
import type { Logger } from '../../infra/logger.js';
import { pendingMigrations, readMigrations } from '../../infra/migrate.js';

/** How long each store may take to answer a readiness check before it counts as unavailable. */
export const READY_CHECK_TIMEOUT_MS = 2_000;
/**
 * How long a check's answer serves later requests: /ready is unauthenticated, and however often it
 * is asked, the stores are asked at most once a second (and once for requests arriving together).
 */
export const READY_REUSE_MS = 1_000;

export type CheckStatus = 'ok' | 'unavailable' | 'migrations_pending';

export interface StoreCheck {
  status: CheckStatus;
  /** The migrations not applied yet, when `migrations_pending`. */
  pending?: string[];
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  /** The stores that are not ok: `postgres`, `clickhouse`. */
  missing: string[];
  checks: { postgres: StoreCheck; clickhouse: StoreCheck };
}

/**
 * Whether this process can serve: PostgreSQL and ClickHouse both answer, within
 * READY_CHECK_TIMEOUT_MS, and every migration of each is applied. `/health` says only that the
 * process is alive. Why a store failed goes to the log (once per change), not to the
 * unauthenticated answer.
 */
export class Readiness {
  private readonly migrations = readMigrations();
  private wasReady: boolean | undefined;
  /** The latest check: running (no `settledAt` yet) or done. */
  private latest: { report: Promise<ReadinessReport>; settledAt?: number } | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly flows: FlowEngine,
    private readonly logger: Logger,
  ) {}

  /** The latest check's report while it runs and for READY_REUSE_MS after, else a new check's. */
  check(): Promise<ReadinessReport> {
    const { latest } = this;
    if (latest && (latest.settledAt === undefined || performance.now() - latest.settledAt < READY_REUSE_MS)) return latest.report;
    const check: NonNullable<typeof this.latest> = { report: this.checkNow() };
    void check.report.then(() => (check.settledAt = performance.now()));
    this.latest = check;
    return check.report;
  }

  private async checkNow(): Promise<ReadinessReport> {
    const failures: Record<string, string> = {};
    const probe = async (store: 'postgres' | 'clickhouse', pending: () => Promise<string[]>): Promise<StoreCheck> => {
      try {
        const names = await within(READY_CHECK_TIMEOUT_MS, pending());
        return names.length ? { status: 'migrations_pending', pending: names } : { status: 'ok' };
      } catch (error) {
        failures[store] = error instanceof Error ? error.message : String(error);
        return { status: 'unavailable' };
      }
    };
    const [postgres, clickhouse] = await Promise.all([
      probe('postgres', () => pendingMigrations(this.pool, this.migrations)),
      probe('clickhouse', async () =>
        (await pendingFlowStoreMigrations(this.flows, { timeoutMs: READY_CHECK_TIMEOUT_MS })).map((m) => `${m.version} ${m.name}`),
      ),
    ]);
    const checks = { postgres, clickhouse };
    const missing = Object.entries(checks)
      .filter(([, check]) => check.status !== 'ok')
      .map(([store]) => store);
    const ready = missing.length === 0;
    if (ready !== this.wasReady) {
      if (ready) this.logger.info('readiness.ready');
      else this.logger.warn('readiness.not_ready', { missing, checks, failures });
      this.wasReady = ready;
    }
    return { status: ready ? 'ready' : 'not_ready', missing, checks };
  }
}

/** `promise`, or a rejection once `ms` have passed without it settling. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
