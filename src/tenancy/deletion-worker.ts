import type { Database } from '../infra/database.js';
import { LockSpace, PeriodicJob, withAdvisoryLock } from '../infra/jobs.js';
import type { Logger } from '../infra/logger.js';
import type { TenantDeletion } from '../generated/prisma/client.js';
import type { StepProgress, TenantDeletionHooks } from './deletion-hooks.js';
import type { DeletionSteps, TenantDeletionStore } from './tenant-deletions.store.js';

export interface DeletionWorkerOptions {
  /** How often a server looks for queued deletions nobody woke it for (another process's, after a crash). */
  intervalMs: number;
  /** How often a deletion in progress is advanced (its mutation's progress read). */
  pollMs: number;
  /** Whether one process at a time works the jobs, under an advisory lock (see DetectionOptions.crossProcessLock). */
  crossProcessLock: boolean;
}

/**
 * Works through the queued tenant deletions (tenant-deletions.store.ts): advances each job's
 * registered steps (deletion-hooks.ts), records their progress after every call, and deletes the
 * tenant's rows once all are done. It runs when a job is queued in any process
 * (`tenant_deletion_queued`), at start (a restart resumes what a crash interrupted) and every
 * `intervalMs`; once started it keeps polling every `pollMs` until no job is left. Processes
 * sharing a database take turns under one advisory lock, so a step is never advanced by two at
 * once. A job whose step fails keeps its recorded progress and is tried again on the next run.
 */
export class TenantDeletionWorker {
  private readonly job: PeriodicJob;
  private stopped = true;
  private unlisten: (() => Promise<void>) | undefined;
  private wakeSleeper: (() => void) | undefined;

  constructor(
    private readonly db: Database,
    private readonly store: TenantDeletionStore,
    private readonly hooks: TenantDeletionHooks,
    private readonly logger: Logger,
    private readonly options: DeletionWorkerOptions,
  ) {
    this.job = new PeriodicJob('tenant_deletions', options.intervalMs, () => this.runLocked(), logger);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.unlisten = await this.db.listen('tenant_deletion_queued', () => void this.trigger());
    this.job.start(0);
  }

  /** Runs now (or right after the run in progress); resolves when that run is over. */
  trigger(): Promise<void> {
    return this.stopped ? Promise.resolve() : this.job.trigger();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleeper?.();
    await this.unlisten?.();
    await this.job.stop();
  }

  private async runLocked(): Promise<void> {
    // A run asked for while the last one ended may start after stop(): it must not touch the pool.
    if (this.stopped) return;
    if (!this.options.crossProcessLock) return this.run();
    await withAdvisoryLock(this.db.pool, LockSpace.tenantDeletions, 'worker', () => this.run());
  }

  /** Advances every unfinished job until none is left, a step fails, or the server stops. */
  private async run(): Promise<void> {
    while (!this.stopped) {
      const jobs = await this.store.unfinished();
      if (jobs.length === 0) return;
      let failed = false;
      for (const job of jobs) {
        if (this.stopped) return;
        failed = !(await this.advance(job)) || failed;
      }
      if (failed) return;
      await this.sleep(this.options.pollMs);
    }
  }

  /** One round of a job's steps; false when one of them failed. */
  private async advance(job: TenantDeletion): Promise<boolean> {
    const steps = { ...(job.steps as DeletionSteps) };
    try {
      let done = true;
      for (const [name, step] of this.hooks.entries()) {
        const last: StepProgress | undefined = steps[name];
        if (last?.done) continue;
        steps[name] = await step(job.customerId, last);
        if (JSON.stringify(steps[name]) !== JSON.stringify(last)) await this.store.recordSteps(job.customerId, steps);
        // Steps run in order: a later one starts once the one before it is done.
        if (!steps[name].done) {
          done = false;
          break;
        }
      }
      if (!done) return true;
      await this.store.finish(job.customerId, steps);
      this.logger.info('tenant.deleted', { customerId: job.customerId, requestedAt: job.requestedAt.toISOString() });
      return true;
    } catch (error) {
      this.logger.error('tenant.deletion_failed', { customerId: job.customerId, error });
      await this.store.recordFailure(job.customerId, (error as Error).message ?? String(error)).catch(() => undefined);
      return false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleeper = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
