import type { TenantScope } from '../../auth/session.js';
import type { OwnNetwork } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

/** A network as the service has checked it. */
export interface OwnNetworkRow {
  cidr: string;
  name: string;
  kind: 'internal' | 'external';
}

/** The tenant filter every statement starts with; naming a tenant outside the scope is a bug of the caller. */
const inScope = (scope: TenantScope, customerIds?: readonly string[]) => {
  const outside = customerIds?.find((id) => !scope.tenantIds.has(id));
  if (outside !== undefined) throw new Error(`customer ${outside} is outside the scope`);
  return { customerId: { in: [...(customerIds ?? scope.tenantIds)] } };
};

/** `own_networks`, read and written within a tenant scope. */
export class OwnNetworkStore {
  constructor(private readonly prisma: Prisma) {}

  /** The networks of the scope's tenants (or of `customerIds` among them), by tenant then CIDR. */
  list(scope: TenantScope, customerIds?: readonly string[]): Promise<OwnNetwork[]> {
    return this.prisma.ownNetwork.findMany({ where: inScope(scope, customerIds), orderBy: [{ customerId: 'asc' }, { cidr: 'asc' }] });
  }

  /**
   * Replaces one tenant's list by what `next` makes of the current one (it may throw to refuse),
   * in one transaction: rows kept keep their creation time, the rest are deleted or inserted.
   * Concurrent changes of one tenant queue on the tenant's row lock, so each one starts from the
   * list the previous one committed (limits hold under races).
   */
  change(scope: TenantScope, customerId: string, next: (current: OwnNetwork[]) => OwnNetworkRow[]): Promise<OwnNetwork[]> {
    const where = inScope(scope, [customerId]);
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`/* own_networks.lock_tenant */ SELECT 1 FROM tenants WHERE id = ${customerId} FOR NO KEY UPDATE`;
      const current = await tx.ownNetwork.findMany({ where, orderBy: { cidr: 'asc' } });
      const wanted = next(current);
      const before = new Map(current.map((n) => [n.cidr, n]));
      const after = new Set(wanted.map((n) => n.cidr));
      const gone = current.filter((n) => !after.has(n.cidr)).map((n) => n.cidr);
      if (gone.length) await tx.ownNetwork.deleteMany({ where: { ...where, cidr: { in: gone } } });
      for (const n of wanted) {
        const had = before.get(n.cidr);
        if (had && (had.name !== n.name || had.kind !== n.kind))
          await tx.ownNetwork.updateMany({ where: { ...where, cidr: n.cidr }, data: { name: n.name, kind: n.kind } });
      }
      const added = wanted.filter((n) => !before.has(n.cidr));
      if (added.length) await tx.ownNetwork.createMany({ data: added.map((n) => ({ customerId, ...n })) });
      return tx.ownNetwork.findMany({ where, orderBy: { cidr: 'asc' } });
    });
  }
}
