import type { TenantScope } from '../../auth/session.js';
import type { AutomationRule, AutomationRun, Event, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Database, Prisma } from '../../infra/database.js';
import type { Tx } from '../events/events.store.js';

export const RunStatus = {
  pending: 'pending',
  running: 'running',
  retrying: 'retrying',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export type NewRule = Omit<PrismaTypes.AutomationRuleUncheckedCreateInput, 'createdAt' | 'updatedAt'>;
export type RuleChanges = Omit<PrismaTypes.AutomationRuleUncheckedUpdateInput, 'id' | 'customerId' | 'createdAt' | 'updatedAt'>;

/** A run this process has claimed; `attempts` (this attempt's number) fences its writes. */
export interface ClaimedRun {
  id: string;
  ruleId: string;
  customerId: string;
  eventId: string;
  attempts: number;
  attemptLog: unknown;
}

export interface RunOutcome {
  status: RunStatus;
  dueAt?: Date;
  responseCode: number | null;
  lastError: string | null;
  result: PrismaTypes.InputJsonValue | null;
  attemptLog: PrismaTypes.InputJsonValue;
}

const ORDER: PrismaTypes.AutomationRuleOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];

/** The tenant filter every caller-facing statement starts with. */
const inScope = (scope: TenantScope, customerId?: string) => {
  if (customerId !== undefined && !scope.tenantIds.has(customerId)) throw new Error(`customer ${customerId} is outside the scope`);
  return { customerId: customerId ?? { in: [...scope.tenantIds] } };
};

/**
 * `automation_rules` and `automation_runs`. Caller-facing reads and writes take the caller's
 * tenant scope; the runner's statements are the service's own (it acts for every tenant) and
 * take the claimed run instead.
 */
export class AutomationStore {
  /**
   * The runner's polling statements go through the raw pool: they run in the background every
   * few seconds and must not count against the per-request statement budgets tests check.
   */
  constructor(
    private readonly prisma: Prisma,
    private readonly pool: Database['pool'],
  ) {}

  listRules(scope: TenantScope, customerId?: string): Promise<AutomationRule[]> {
    return this.prisma.automationRule.findMany({ where: inScope(scope, customerId), orderBy: ORDER });
  }

  findRule(scope: TenantScope, id: string): Promise<AutomationRule | null> {
    return this.prisma.automationRule.findFirst({ where: { ...inScope(scope), id } });
  }

  /**
   * Inserts the rule unless its tenant already has `limit` rules (null then). Concurrent creates
   * for one tenant queue on the tenant's row lock, so each counts the rules the others committed
   * (on PGlite, transactions already run one at a time: the lock costs nothing there).
   * NO KEY UPDATE, not UPDATE: it does not hold up inserts elsewhere that merely reference the tenant.
   */
  createRuleWithinLimit(scope: TenantScope, rule: NewRule, limit: number): Promise<AutomationRule | null> {
    const where = inScope(scope, rule.customerId);
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`/* automation.lock_tenant */ SELECT 1 FROM tenants WHERE id = ${rule.customerId} FOR NO KEY UPDATE`;
      if ((await tx.automationRule.count({ where })) >= limit) return null;
      return tx.automationRule.create({ data: rule });
    });
  }

  /** Null when the rule is not (or no longer) in the scope. */
  async updateRule(scope: TenantScope, id: string, changes: RuleChanges): Promise<AutomationRule | null> {
    const { count } = await this.prisma.automationRule.updateMany({ where: { ...inScope(scope), id }, data: changes });
    return count ? this.prisma.automationRule.findFirst({ where: { ...inScope(scope), id } }) : null;
  }

  /** True when a rule was deleted; its pending runs and history go with it (ON DELETE CASCADE). */
  async deleteRule(scope: TenantScope, id: string): Promise<boolean> {
    const { count } = await this.prisma.automationRule.deleteMany({ where: { ...inScope(scope), id } });
    return count > 0;
  }

  /** The newest `limit` runs of each rule, in one statement. */
  async recentRuns(scope: TenantScope, ruleIds: string[], limit: number): Promise<AutomationRun[]> {
    if (!ruleIds.length) return [];
    return this.prisma.$queryRaw<AutomationRun[]>`/* automation.recent_runs */
      SELECT id, rule_id AS "ruleId", customer_id AS "customerId", event_id AS "eventId", status, attempts, due_at AS "dueAt",
             lease_until AS "leaseUntil", response_code AS "responseCode", last_error AS "lastError", result, attempt_log AS "attemptLog",
             created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt"
      FROM (
        SELECT r.*, row_number() OVER (PARTITION BY rule_id ORDER BY created_at DESC, id DESC) AS n
        FROM automation_runs r
        WHERE customer_id = ANY(${[...scope.tenantIds]}) AND rule_id = ANY(${ruleIds})
      ) ranked
      WHERE n <= ${limit}
      ORDER BY "createdAt" DESC, id DESC`;
  }

  // ---- inside the event's recording transaction -------------------------------------------

  /** Enabled rules on `topic` owned by the event's tenant or its parent (a parent's rules cover its children). */
  async rulesReacting(tx: Tx, customerId: string, topic: string): Promise<AutomationRule[]> {
    const tenant = await tx.tenant.findUnique({ where: { id: customerId }, select: { parentId: true } });
    const owners = [customerId, ...(tenant?.parentId ? [tenant.parentId] : [])];
    return tx.automationRule.findMany({ where: { customerId: { in: owners }, topic, enabled: true } });
  }

  async insertRuns(tx: Tx, runs: Array<{ id: string; ruleId: string; customerId: string; eventId: string }>): Promise<void> {
    if (runs.length) await tx.automationRun.createMany({ data: runs, skipDuplicates: true });
  }

  // ---- the runner ---------------------------------------------------------------------------

  /**
   * Claims up to `batch` due runs for `leaseMs`: pending or retrying ones whose time has come, and
   * running ones whose claimant died (lease expired). SKIP LOCKED lets every process claim at once
   * without waiting for or doubling each other.
   */
  async claimDue(batch: number, leaseMs: number): Promise<ClaimedRun[]> {
    const { rows } = await this.pool.query<ClaimedRun>(
      `/* automation.claim_due */
      UPDATE automation_runs
      SET status = 'running', attempts = attempts + 1, lease_until = now() + $2::int * interval '1 millisecond', updated_at = now()
      WHERE id IN (
        SELECT id FROM automation_runs
        WHERE (status IN ('pending', 'retrying') AND due_at <= now()) OR (status = 'running' AND lease_until < now())
        ORDER BY due_at
        LIMIT $1
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, rule_id AS "ruleId", customer_id AS "customerId", event_id AS "eventId", attempts, attempt_log AS "attemptLog"`,
      [batch, leaseMs],
    );
    return rows;
  }

  /**
   * Milliseconds until the next run is due (null when none waits), by the database's clock (the
   * one claims compare with), so an idle runner sleeps just that long.
   */
  async msUntilNextDue(): Promise<number | null> {
    // Not GREATEST(0, ...): it would turn "no row" (NULL) into 0.
    const { rows } = await this.pool.query<{ ms: number | null }>(`/* automation.next_due */
      SELECT (EXTRACT(EPOCH FROM min(due_at) - now()) * 1000)::float8 AS ms
      FROM automation_runs WHERE status IN ('pending', 'retrying')`);
    const ms = rows[0]?.ms;
    return typeof ms === 'number' && Number.isFinite(ms) ? Math.max(0, ms) : null;
  }

  ruleOf(run: ClaimedRun): Promise<AutomationRule | null> {
    return this.prisma.automationRule.findFirst({ where: { customerId: run.customerId, id: run.ruleId } });
  }

  eventOf(run: ClaimedRun): Promise<Event | null> {
    return this.prisma.event.findUnique({ where: { id: run.eventId } });
  }

  /** Records an attempt's outcome; false when the claim was lost (lease expired and re-claimed, or rule deleted). */
  async finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean> {
    const final = outcome.status === RunStatus.succeeded || outcome.status === RunStatus.failed || outcome.status === RunStatus.cancelled;
    const { count } = await this.prisma.automationRun.updateMany({
      where: { id: run.id, status: RunStatus.running, attempts: run.attempts },
      data: {
        status: outcome.status,
        dueAt: outcome.dueAt,
        leaseUntil: null,
        responseCode: outcome.responseCode,
        lastError: outcome.lastError,
        result: outcome.result ?? undefined,
        attemptLog: outcome.attemptLog,
        finishedAt: final ? new Date() : null,
      },
    });
    return count > 0;
  }

  /** Gives a claimed run back untouched (this process is stopping): due now, the attempt not counted. */
  async release(run: ClaimedRun): Promise<void> {
    await this.prisma.automationRun.updateMany({
      where: { id: run.id, status: RunStatus.running, attempts: run.attempts },
      data: { status: RunStatus.retrying, attempts: { decrement: 1 }, dueAt: new Date(), leaseUntil: null },
    });
  }
}
