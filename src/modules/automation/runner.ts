import type { AutomationRule, Event, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Logger } from '../../infra/logger.js';
import { automationDeliveries } from '../../infra/metrics.js';
import type { PubSub } from '../../infra/pubsub.js';
import { type EventRecorder, eventRecordedTopic } from '../events/events.service.js';
import type { ActionOutcome, Actions } from './actions.js';
import { type AutomationStore, type ClaimedRun, RunStatus } from './automation.store.js';

export interface RunnerOptions {
  /** First retry delay; each further retry doubles it (with ±20% jitter), up to `maxDelayMs`. */
  retryBaseMs: number;
  maxDelayMs: number;
  /** Attempts per run, the first included. */
  maxAttempts: number;
  /** Runs executed at once by this process. */
  concurrency: number;
  /** How long a claim holds; a claimant that died is replaced after it. Longer than any action. */
  leaseMs: number;
  /** Longest idle sleep: how late this process notices work it was not told about. */
  idleMs: number;
  /** Longest wait for in-flight runs at stop; the rest are left to their leases. */
  stopWaitMs: number;
}

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  retryBaseMs: 10_000,
  maxDelayMs: 3_600_000,
  maxAttempts: 10,
  concurrency: 8,
  leaseMs: 60_000,
  idleMs: 5_000,
  stopWaitMs: 5_000,
};

const ATTEMPT_LOG_SIZE = 20;
const PRUNE_EVERY_MS = 3_600_000;

/** Exponential backoff with jitter, so that a receiver coming back is not hit by every retry at once. */
export function retryDelay(attempt: number, options: Pick<RunnerOptions, 'retryBaseMs' | 'maxDelayMs'>, random = Math.random): number {
  const exponential = Math.min(options.retryBaseMs * 2 ** Math.max(0, attempt - 1), options.maxDelayMs);
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/**
 * Executes automation runs, in every server process at once: due runs are claimed from
 * PostgreSQL (FOR UPDATE SKIP LOCKED) with a lease, executed, and their outcome written back
 * under the claim's fence. A process that dies mid-run leaves the lease to expire and another
 * takes the run over, so delivery is at least once, never silently lost. The runner wakes on
 * every recorded event and otherwise sleeps until the next retry is due.
 */
export class AutomationRunner {
  private readonly options: RunnerOptions;
  private readonly inflight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopped = true;
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private woken = false;
  private alarm: (() => void) | undefined;
  private lastPrune = Date.now();

  constructor(
    private readonly store: AutomationStore,
    private readonly actions: Actions,
    private readonly events: EventRecorder & { prune(): Promise<number> },
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
    options: Partial<RunnerOptions> = {},
  ) {
    this.options = { ...DEFAULT_RUNNER_OPTIONS, ...options };
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = await this.pubsub.subscribe(eventRecordedTopic, () => this.wake());
    this.loop = this.work();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.wake();
    for (const { controller } of this.inflight.values()) controller.abort();
    await this.loop;
    const pending = Promise.all([...this.inflight.values()].map((r) => r.done));
    await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, this.options.stopWaitMs).unref())]);
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      let claimed = 0;
      try {
        const free = this.options.concurrency - this.inflight.size;
        if (free > 0) {
          const runs = await this.store.claimDue(free, this.options.leaseMs);
          claimed = runs.length;
          for (const run of runs) this.begin(run);
        }
        await this.pruneNow();
      } catch (error) {
        this.logger.error('automation.claim_failed', { error });
      }
      if (this.stopped) break;
      // A full batch means more may be due; otherwise sleep until woken or the next retry.
      if (claimed > 0 && this.inflight.size < this.options.concurrency) continue;
      const busy = this.inflight.size >= this.options.concurrency;
      await this.sleep(busy ? this.options.idleMs : await this.untilNextDue());
    }
  }

  private begin(run: ClaimedRun): void {
    const controller = new AbortController();
    const done = this.execute(run, controller.signal)
      .catch((error) => this.logger.error('automation.run_crashed', { runId: run.id, error }))
      .finally(() => {
        this.inflight.delete(run.id);
        this.wake();
      });
    this.inflight.set(run.id, { controller, done });
  }

  private async execute(run: ClaimedRun, signal: AbortSignal): Promise<void> {
    const [rule, event] = await Promise.all([this.store.ruleOf(run), this.store.eventOf(run)]);
    // Deleted meanwhile: its runs went with it (cascade), there is nothing left to write.
    if (!rule || !event) return;
    const started = new Date();
    let outcome: ActionOutcome;
    if (!rule.enabled) outcome = { ok: false, retry: false, responseCode: null, error: 'the rule was disabled', result: null };
    else {
      try {
        outcome = await this.actions.run(rule, event, run, signal);
      } catch (error) {
        this.logger.error('automation.action_failed', { runId: run.id, ruleId: rule.id, error });
        outcome = { ok: false, retry: true, responseCode: null, error: 'internal error', result: null };
      }
    }
    // Interrupted by this process stopping: hand the run back for another process (or the next start).
    if (signal.aborted && this.stopped) return this.store.release(run);

    const status = outcome.ok
      ? RunStatus.succeeded
      : !rule.enabled
        ? RunStatus.cancelled
        : outcome.retry && run.attempts < this.options.maxAttempts
          ? RunStatus.retrying
          : RunStatus.failed;
    const error = outcome.ok ? null : outcome.error;
    const entry = {
      attempt: run.attempts,
      at: started.toISOString(),
      response_code: outcome.responseCode,
      error,
      duration_ms: Date.now() - started.getTime(),
    };
    const previous = Array.isArray(run.attemptLog) ? run.attemptLog : [];
    const written = await this.store.finish(run, {
      status,
      dueAt: status === RunStatus.retrying ? new Date(Date.now() + retryDelay(run.attempts, this.options)) : undefined,
      responseCode: outcome.responseCode,
      lastError: error,
      result: outcome.result as PrismaTypes.InputJsonValue | null,
      attemptLog: [...previous, entry].slice(-ATTEMPT_LOG_SIZE) as PrismaTypes.InputJsonValue,
    });
    automationDeliveries.inc({ action: rule.action, status });
    this.logger.info('automation.attempt', { runId: run.id, ruleId: rule.id, attempt: run.attempts, status, responseCode: outcome.responseCode, error });
    if (written && (status === RunStatus.succeeded || status === RunStatus.failed)) await this.announce(run, rule, event, status, outcome);
  }

  /**
   * Tells the `automation_runs` topic. Runs caused by an automation_runs event are not announced,
   * so a rule on that topic can never feed itself.
   */
  private async announce(run: ClaimedRun, rule: AutomationRule, trigger: Event, status: 'succeeded' | 'failed', outcome: ActionOutcome) {
    if (trigger.topic === 'automation_runs') return;
    await this.events.record({
      customerId: rule.customerId,
      topic: 'automation_runs',
      kind: status === 'succeeded' ? 'run_succeeded' : 'run_failed',
      subject: run.id,
      data: {
        run_id: run.id,
        rule_id: rule.id,
        rule_name: rule.name,
        action: rule.action,
        trigger_event_id: trigger.id,
        trigger_topic: trigger.topic,
        trigger_kind: trigger.kind,
        status,
        attempts: run.attempts,
        response_code: outcome.responseCode,
        error: outcome.ok ? null : outcome.error,
      },
    });
  }

  private async untilNextDue(): Promise<number> {
    const ms = await this.store.msUntilNextDue().catch(() => null);
    return ms === null ? this.options.idleMs : Math.min(this.options.idleMs, ms);
  }

  /** Sleeps `ms`, or less when woken; a wake-up that came while working is not lost. */
  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.alarm = undefined;
        resolve();
      }, ms);
      this.alarm = () => {
        clearTimeout(timer);
        this.alarm = undefined;
        resolve();
      };
    });
  }

  private wake(): void {
    if (this.alarm) this.alarm();
    else this.woken = true;
  }

  private async pruneNow(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    const pruned = await this.events.prune();
    if (pruned) this.logger.info('events.pruned', { count: pruned });
  }
}
