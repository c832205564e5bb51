import type { TenantScope } from '../../auth/session.js';
import type { NewClient } from '../../auth/clients.store.js';
import { generateClientId } from '../../auth/secrets.js';
import type { ApiClient } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { DELETING } from '../../tenancy/tenant-deletions.store.js';

/** A client as listed: its row, and the collector nodes that enrolled with it. */
export type ApiClientRow = ApiClient & { nodes: { id: string }[] };

/** Which clients a list holds: of one kind (all when absent), active or revoked (both when absent). */
export interface ApiClientFilter {
  kind?: string;
  active?: boolean;
}

/** What creating a client under a limit came to. */
export type CreateOutcome = { created: ApiClientRow } | { refused: 'limit_reached' | 'tenant_gone' };

const withNodes = { nodes: { select: { id: true }, orderBy: { id: 'asc' } } } as const;

/** The tenant filter every statement starts with; naming a tenant outside the scope is a bug of the caller. */
const inScope = (scope: TenantScope, customerId?: string) => {
  if (customerId !== undefined && !scope.tenantIds.has(customerId)) throw new Error(`customer ${customerId} is outside the scope`);
  return { customerId: customerId === undefined ? { in: [...scope.tenantIds] } : customerId };
};

/**
 * `api_clients` as admins see them, within their tenant scope. (src/auth/clients.store.ts reads a
 * client by its id alone, for the token endpoint, which names nothing else.)
 */
export class ApiClientStore {
  constructor(private readonly prisma: Prisma) {}

  /** Newest first, at most `take`; of one kind, and only the active (or only the revoked) ones, when asked. */
  list(scope: TenantScope, customerId: string, take: number, filter: ApiClientFilter = {}): Promise<ApiClientRow[]> {
    return this.prisma.apiClient.findMany({
      where: {
        ...inScope(scope, customerId),
        ...(filter.kind ? { kind: filter.kind } : {}),
        ...(filter.active === undefined ? {} : { revokedAt: filter.active ? null : { not: null } }),
      },
      include: withNodes,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take,
    });
  }

  find(scope: TenantScope, clientId: string): Promise<ApiClientRow | null> {
    return this.prisma.apiClient.findFirst({ where: { ...inScope(scope), id: clientId }, include: withNodes });
  }

  /**
   * Inserts a client unless its tenant already has `maxActive` active clients of its kind. Creations
   * for one tenant queue on the tenant's row lock, so the count each one reads includes every
   * client committed before it: the limit holds under races.
   */
  createUnlessFull(scope: TenantScope, client: NewClient, maxActive: number): Promise<CreateOutcome> {
    const where = { ...inScope(scope, client.customerId), kind: client.kind, revokedAt: null };
    return this.prisma.$transaction(async (tx) => {
      const tenant = await tx.$queryRaw<
        unknown[]
      >`/* api_clients.lock_tenant */ SELECT 1 FROM tenants WHERE id = ${client.customerId} AND deployment_status <> ${DELETING} FOR NO KEY UPDATE`;
      if (tenant.length === 0) return { refused: 'tenant_gone' } as const;
      if ((await tx.apiClient.count({ where })) >= maxActive) return { refused: 'limit_reached' } as const;
      return { created: await tx.apiClient.create({ data: { id: generateClientId(), ...client }, include: withNodes }) };
    });
  }

  /** Marks a client of the scope revoked (once: the first revocation's time stays); null when the scope has no such client. */
  async revoke(scope: TenantScope, clientId: string): Promise<ApiClientRow | null> {
    await this.prisma.apiClient.updateMany({ where: { ...inScope(scope), id: clientId, revokedAt: null }, data: { revokedAt: new Date() } });
    return this.find(scope, clientId);
  }
}
