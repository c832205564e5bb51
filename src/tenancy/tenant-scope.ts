import type { TenantScope } from '../auth/session.js';
import type { TenantDirectory } from './tenant-directory.js';

/** Loads the caller's tree: itself and, for a parent MSP, its child deployments. */
export function tenantScopeLoader(directory: TenantDirectory) {
  return async (customerId: string): Promise<TenantScope> => {
    const children = await directory.childrenOf(customerId);
    return { customerId, tenantIds: new Set([customerId, ...children.map((c) => c.id)]) };
  };
}

/**
 * One tenant alone, without its children: what a collector's credential acts for (its nodes are
 * its own tenant's, never a child's), or a tenant a service has already checked.
 */
export const tenantOnly = (customerId: string): TenantScope => ({ customerId, tenantIds: new Set([customerId]) });
