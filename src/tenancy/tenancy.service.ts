import type { Session } from '../auth/session.js';
import { type ErrorCode, notFound } from '../errors.js';
import type { TenantDirectory } from './tenant-directory.js';

/** Reads of the tenant tree as the caller is allowed to see it. */
export class TenancyService {
  constructor(private readonly directory: TenantDirectory) {}

  async visibleTenant(session: Session, customerId: string) {
    session.assert('tenants.read');
    if (!(await session.canSee(customerId))) return null;
    return this.directory.get(customerId);
  }

  /**
   * Another tenant of the caller's tree, by id: a child deployment is what the deployments list
   * shows, so it takes that list's scope (deployment_api); the caller's own tenant takes none.
   */
  async tenantById(session: Session, customerId: string) {
    if (customerId !== session.customerId) session.assert('deployments.read');
    return this.visibleTenant(session, customerId);
  }

  /** The child deployments of a tenant the caller already holds, with the deployments list's scope. */
  deploymentsOf(session: Session, parentId: string) {
    session.assert('deployments.read');
    return this.directory.childrenOf(parentId);
  }

  /** A person's tenants: their own and, for an MSP's people, its children (what they act on). */
  /**
   * A person's own tenant, with no caller to check: a User is answered only to that person (me,
   * signIn, whose session may not exist yet) or to admins of their tree, who see it anyway.
   */
  async tenantOfPerson(customerId: string) {
    const tenant = await this.directory.get(customerId);
    if (!tenant) throw notFound('not_found', `Customer ${customerId} was not found`);
    return tenant;
  }

  async treeOf(customerId: string) {
    const own = await this.directory.get(customerId);
    return own ? [own, ...(await this.directory.childrenOf(customerId))] : [];
  }

  async requireVisibleTenant(session: Session, customerId: string, code: ErrorCode = 'not_found') {
    const tenant = await this.visibleTenant(session, customerId);
    if (!tenant) throw notFound(code, `Customer ${customerId} was not found`);
    return tenant;
  }
}
