import type { DetectionRun, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import { liveTenant } from '../../tenancy/tenant-deletions.store.js';
import type { NodeFacts } from './host-context.js';
import type { TimeWindow } from './detection.store.js';

export type RunTrigger = 'schedule' | 'manual';

/** A run this process starts itself (no request row to claim): its tenant, window and owner. */
export interface StartedRun {
  trigger: RunTrigger;
  window: TimeWindow;
  /** The process running it (`detection_runs.claimed_by`). */
  claimedBy: string;
  /** The tenants it covers, when known before it starts (a scheduled run: its one tenant). */
  tenantIds?: string[];
}

/**
 * Detection's PostgreSQL side (detection.store.ts is its ClickHouse side): the `detection_runs`
 * table, the live tenants a run covers, and the collectors a narrative names. A statement about
 * one tenant takes it first. A run found by its id needs none: the id is the handle a request's
 * notification carries, and the row names its tenant. The scheduler's statements span every
 * tenant on purpose: it is what decides which tenants to run.
 */
export class DetectionPostgresStore {
  constructor(private readonly prisma: Prisma) {}

  /** Records a `detect run` request for any server process to claim. */
  request(customerId: string, window: TimeWindow): Promise<DetectionRun> {
    return this.prisma.detectionRun.create({
      data: { id: newId('drun'), customerId, trigger: 'manual', status: 'requested', ...windowOf(window) },
    });
  }

  /** Records a run this process runs now, without a request (status `running`). */
  start(customerId: string, run: StartedRun): Promise<DetectionRun> {
    return this.prisma.detectionRun.create({
      data: {
        id: newId('drun'),
        customerId,
        trigger: run.trigger,
        status: 'running',
        ...(run.tenantIds ? { tenantIds: run.tenantIds } : {}),
        ...windowOf(run.window),
        claimedBy: run.claimedBy,
        startedAt: new Date(),
      },
    });
  }

  /** Takes a requested run for `claimedBy`; false when another process has it. */
  async claim(runId: string, claimedBy: string): Promise<boolean> {
    const { count } = await this.prisma.detectionRun.updateMany({
      where: { id: runId, status: 'requested' },
      data: { status: 'running', startedAt: new Date(), claimedBy },
    });
    return count === 1;
  }

  /** Hands a claimed run back to the requests. */
  async unclaim(runId: string): Promise<void> {
    await this.prisma.detectionRun.updateMany({ where: { id: runId, status: 'running' }, data: { status: 'requested', startedAt: null, claimedBy: null } });
  }

  /** The run; throws when there is none. */
  get(runId: string): Promise<DetectionRun> {
    return this.prisma.detectionRun.findUniqueOrThrow({ where: { id: runId } });
  }

  async setTenants(runId: string, tenantIds: string[]): Promise<void> {
    await this.prisma.detectionRun.update({ where: { id: runId }, data: { tenantIds } });
  }

  /** Records how the run ended: its result, or the error (a thrown non-Error may carry no message). */
  async finish(runId: string, status: 'completed' | 'failed', result: object | null, error: string | null | undefined): Promise<void> {
    await this.prisma.detectionRun.update({
      where: { id: runId },
      data: { status, finishedAt: new Date(), result: (result ?? undefined) as PrismaTypes.InputJsonValue | undefined, error: error ?? null },
    });
  }

  async delete(runId: string): Promise<void> {
    await this.prisma.detectionRun.delete({ where: { id: runId } });
  }

  /** Whether a process other than `notBy` completed a scheduled run of the tenant after `since`. */
  async completedScheduleSince(customerId: string, since: Date, notBy: string): Promise<boolean> {
    const last = await this.prisma.detectionRun.findFirst({
      where: { customerId, trigger: 'schedule', status: 'completed', claimedBy: { not: notBy }, finishedAt: { gt: since } },
      select: { id: true },
    });
    return last !== null;
  }

  /** Up to `take` requests still unclaimed since before `before`. */
  async unclaimedSince(before: Date, take: number): Promise<string[]> {
    const rows = await this.prisma.detectionRun.findMany({ where: { status: 'requested', requestedAt: { lt: before } }, select: { id: true }, take });
    return rows.map((r) => r.id);
  }

  /** Deletes the runs requested before `before` (the history kept). */
  async prune(before: Date): Promise<void> {
    await this.prisma.detectionRun.deleteMany({ where: { requestedAt: { lt: before } } });
  }

  /** Whether the tenant exists and is not being deleted. */
  async isLive(customerId: string): Promise<boolean> {
    return (await this.prisma.tenant.findFirst({ where: { id: customerId, ...liveTenant }, select: { id: true } })) !== null;
  }

  /** Every live tenant: what the schedule looks at. */
  async liveTenants(): Promise<string[]> {
    return (await this.prisma.tenant.findMany({ where: liveTenant, select: { id: true } })).map((t) => t.id);
  }

  /** The live tenant and its live children, oldest first (the tenant itself may be among them). */
  async treeOf(customerId: string): Promise<string[]> {
    const tenants = await this.prisma.tenant.findMany({
      where: { OR: [{ id: customerId }, { parentId: customerId }], ...liveTenant },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return tenants.map((t) => t.id);
  }

  /** The tenant's collectors running on `ip` or named in `ids`, oldest first: one statement per episode. */
  collectors(customerId: string, ip: string, ids: string[]): Promise<NodeFacts[]> {
    return this.prisma.node.findMany({
      where: { customerId, OR: [{ localIp: ip }, { id: { in: ids } }] },
      select: { id: true, hostname: true, os: true, localIp: true },
      orderBy: { createdAt: 'asc' },
    });
  }
}

const windowOf = (window: TimeWindow) => ({ windowStart: new Date(window.fromMs), windowEnd: new Date(window.toMs) });
