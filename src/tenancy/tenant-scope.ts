import type { TenantScope } from '../auth/session.js';
import type { Prisma } from '../infra/database.js';

/** Loads the caller's tree: itself and, for a parent MSP, its child deployments. */
export function tenantScopeLoader(prisma: Prisma) {
  return async (customerId: string): Promise<TenantScope> => {
    const children = await prisma.tenant.findMany({ where: { parentId: customerId }, select: { id: true } });
    return { customerId, tenantIds: new Set([customerId, ...children.map((c) => c.id)]) };
  };
}
