import type { Session } from '../auth/session.js';
import { notFound } from '../errors.js';
import type { TenantDirectory } from './tenant-directory.js';

/** Reads of the tenant tree as the caller is allowed to see it. */
export class TenancyService {
  constructor(private readonly directory: TenantDirectory) {}

  async visibleTenant(session: Session, customerId: string) {
    if (!(await session.canSee(customerId))) return null;
    return this.directory.get(customerId);
  }

  /** The children of a tenant the caller already holds (the tree is two levels deep). */
  childrenOf(parentId: string) {
    return this.directory.childrenOf(parentId);
  }

  async requireVisibleTenant(session: Session, customerId: string, code = 'not_found') {
    const tenant = await this.visibleTenant(session, customerId);
    if (!tenant) throw notFound(code, `Customer ${customerId} was not found`);
    return tenant;
  }
}
