import type { Prisma as PrismaTypes, Tenant } from '../generated/prisma/client.js';
import type { Prisma } from '../infra/database.js';
import { isUniqueViolation } from '../infra/unique-violation.js';
import { liveTenant } from './tenant-deletions.store.js';

/** Oldest first; the id breaks ties. The deployments list shows children in this order. */
const ORDER: PrismaTypes.TenantOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];

/**
 * The `tenants` table: the tree every tenant scope is made of (tenant-scope.ts), so these functions
 * take no scope. Their callers are the tenant directory (which builds scopes), the admin CLI, and
 * services that have checked the caller's scope first. A tenant being deleted is neither found nor
 * listed (tenant-deletions.store.ts writes those).
 */
export class TenantStore {
  constructor(private readonly prisma: Prisma) {}

  find(id: string): Promise<Tenant | null> {
    return this.prisma.tenant.findFirst({ where: { id, ...liveTenant } });
  }

  childrenOf(parentId: string): Promise<Tenant[]> {
    return this.prisma.tenant.findMany({ where: { parentId, ...liveTenant }, orderBy: ORDER });
  }

  list(): Promise<Tenant[]> {
    return this.prisma.tenant.findMany({ where: liveTenant, orderBy: ORDER });
  }

  /** Whether a tenant under `parentId` (top level: null) has the handle; a tenant being deleted has none. */
  async handleTaken(parentId: string | null, handle: string): Promise<boolean> {
    const row = await this.prisma.tenant.findFirst({ where: { parentId, handle }, select: { id: true } });
    return row !== null;
  }

  /** The new tenant, or null when a unique key was taken meanwhile (a concurrent create of the same handle). */
  async create(tenant: PrismaTypes.TenantUncheckedCreateInput): Promise<Tenant | null> {
    try {
      return await this.prisma.tenant.create({ data: tenant });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }
}
