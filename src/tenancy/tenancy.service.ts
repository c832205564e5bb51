import type { Session } from '../auth/session.js';
import { notFound } from '../errors.js';
import type { Prisma } from '../infra/database.js';

type TenantQuery = { include?: object; select?: object };

/** Reads of the tenant tree as the caller is allowed to see it. */
export class TenancyService {
  constructor(private readonly prisma: Prisma) {}

  async visibleTenant(session: Session, customerId: string, query: TenantQuery = {}) {
    if (!(await session.canSee(customerId))) return null;
    return this.prisma.tenant.findUnique({ ...query, where: { id: customerId } } as never);
  }

  async requireVisibleTenant(session: Session, customerId: string, code = 'not_found') {
    const tenant = await this.visibleTenant(session, customerId);
    if (!tenant) throw notFound(code, `Customer ${customerId} was not found`);
    return tenant;
  }
}
