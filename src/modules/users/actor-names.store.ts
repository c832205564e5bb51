import type { TenantScope } from '../../auth/session.js';
import type { Prisma } from '../../infra/database.js';

/** What names a person where others see them, and nothing more (users.service.ts `displayName`). */
export interface NamedPerson {
  id: string;
  email: string;
  name: string | null;
}

/** The tenant filter every statement starts with. */
const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/** People and API clients among ids, those of the scope's tenants only: what names them. */
export class ActorNameStore {
  constructor(private readonly prisma: Prisma) {}

  people(scope: TenantScope, ids: readonly string[]): Promise<NamedPerson[]> {
    return this.prisma.user.findMany({ where: { ...inScope(scope), id: { in: [...ids] } }, select: { id: true, email: true, name: true } });
  }

  clients(scope: TenantScope, ids: readonly string[]): Promise<Array<{ id: string; description: string | null }>> {
    return this.prisma.apiClient.findMany({ where: { ...inScope(scope), id: { in: [...ids] } }, select: { id: true, description: true } });
  }
}
