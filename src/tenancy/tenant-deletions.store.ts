import type { Prisma } from '../infra/database.js';
import type { Tenant, TenantDeletion } from '../generated/prisma/client.js';
import type { StepProgress } from './deletion-hooks.js';

/** `tenants.deployment_status` of a tenant being deleted. */
export const DELETING = 'deleting';

/** The condition every lookup of tenants adds: a tenant being deleted is gone for everyone. */
export const liveTenant = { deploymentStatus: { not: DELETING } } as const;

export const DeletionState = { deleting: 'deleting', deleted: 'deleted' } as const;

export type DeletionSteps = Record<string, StepProgress>;

/** The deletion jobs (migration 0007): queued with the tenant's hiding, worked through by the deletion worker. */
export class TenantDeletionStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * In one transaction: the tenant and its children become `deleting` with their handles freed,
   * their clients are revoked, and a job is queued for each. Returns the tenant as it was, or null
   * when it is missing or already being deleted (of concurrent calls, the first row update wins
   * and the others, waiting on its lock, then find the tenant marked).
   */
  queue(id: string): Promise<{ tenant: Tenant; ids: string[] } | null> {
    return this.prisma.$transaction(async (tx) => {
      const tenant = await tx.tenant.findFirst({ where: { id, ...liveTenant } });
      if (!tenant) return null;
      const hide = { deploymentStatus: DELETING, handle: null };
      const { count } = await tx.tenant.updateMany({ where: { id, ...liveTenant }, data: hide });
      if (count === 0) return null;
      const children = await tx.tenant.findMany({ where: { parentId: id, ...liveTenant } });
      await tx.tenant.updateMany({ where: { id: { in: children.map((c) => c.id) } }, data: hide });
      const doomed = [...children, tenant];
      // The revocation's row triggers tell every process (auth_client_changed): cached credentials
      // go, graphql-ws sockets and collector channels opened with them close.
      await tx.apiClient.updateMany({ where: { customerId: { in: doomed.map((t) => t.id) }, revokedAt: null }, data: { revokedAt: new Date() } });
      await tx.tenantDeletion.createMany({
        data: doomed.map((t) => ({ customerId: t.id, parentId: t.parentId, name: t.name, handle: t.handle })),
        skipDuplicates: true,
      });
      return { tenant, ids: doomed.map((t) => t.id) };
    });
  }

  /** Jobs with work left, oldest first. */
  unfinished(): Promise<TenantDeletion[]> {
    return this.prisma.tenantDeletion.findMany({ where: { state: DeletionState.deleting }, orderBy: [{ requestedAt: 'asc' }, { customerId: 'asc' }] });
  }

  async recordSteps(customerId: string, steps: DeletionSteps): Promise<void> {
    await this.prisma.tenantDeletion.update({ where: { customerId }, data: { steps, updatedAt: new Date() } });
  }

  async recordFailure(customerId: string, error: string): Promise<void> {
    await this.prisma.tenantDeletion.update({ where: { customerId }, data: { attempts: { increment: 1 }, lastError: error, updatedAt: new Date() } });
  }

  /** Every step is done: the tenant's rows go (the foreign keys cascade) and the job is closed, together. */
  async finish(customerId: string, steps: DeletionSteps): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.tenant.deleteMany({ where: { id: customerId, deploymentStatus: DELETING } }),
      this.prisma.tenantDeletion.update({
        where: { customerId },
        data: { state: DeletionState.deleted, steps, lastError: null, updatedAt: new Date(), finishedAt: new Date() },
      }),
    ]);
  }

  /** For the admin CLI: newest first, one tenant's or all. */
  list(customerId?: string): Promise<TenantDeletion[]> {
    return this.prisma.tenantDeletion.findMany({
      where: customerId ? { customerId } : {},
      orderBy: [{ requestedAt: 'desc' }, { customerId: 'asc' }],
    });
  }
}
