import { badRequest, conflict, notFound } from '../errors.js';
import { newId, randomToken } from '../infra/ids.js';
import { nameProblem } from '../infra/text.js';
import type { Tenant } from '../generated/prisma/client.js';
import { slugifyHandle } from './handles.js';
import type { TenantDirectory } from './tenant-directory.js';
import type { TenantDeletionStore } from './tenant-deletions.store.js';
import type { TenantStore } from './tenants.store.js';

export const TenantType = { customer: 'customer', msp: 'msp', child: 'child' } as const;

const MAX_NAME = 200;
const MAX_HANDLE = 63;
const subdomainLabel = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export interface NewTenant {
  name: string;
  handle: string;
  parentId?: string;
  msp?: boolean;
  subdomain?: string;
}

/** Tenant rules shared by the admin CLI and the deployments API. */
export class TenantService {
  constructor(
    private readonly store: TenantStore,
    private readonly deletions: TenantDeletionStore,
    private readonly directory: TenantDirectory,
  ) {}

  async create(input: NewTenant): Promise<Tenant> {
    const name = input.name.trim();
    if (!name) throw badRequest('invalid_request', 'name must not be empty');
    const nameIssue = nameProblem(name, MAX_NAME);
    if (nameIssue) throw badRequest('invalid_request', `name ${nameIssue}`);
    const handle = slugifyHandle(input.handle);
    if (!handle) throw badRequest('invalid_request', 'handle must contain at least one letter or digit');
    if (handle.length > MAX_HANDLE) throw badRequest('invalid_request', `handle must be at most ${MAX_HANDLE} characters`);
    // A label the deployment carries, not an address anything resolves (api-spec.md names no URL
    // built from it): so it is not unique, and a taken one would tell one MSP about another's.
    const subdomain = input.subdomain?.trim().toLowerCase() || undefined;
    if (subdomain !== undefined && !subdomainLabel.test(subdomain)) {
      throw badRequest('invalid_request', 'subdomain must be a DNS label: a-z, 0-9 and inner hyphens, at most 63');
    }
    if (input.parentId) {
      const parent = await this.store.find(input.parentId);
      if (!parent) throw notFound('not_found', `Parent customer ${input.parentId} does not exist`);
      if (parent.parentId) throw badRequest('invalid_request', 'a child deployment cannot own deployments');
    }
    const handleTaken = () => conflict('handle_taken', `handle ${handle} is already used`);
    if (await this.store.handleTaken(input.parentId ?? null, handle)) throw handleTaken();
    const tenant = await this.store.create({
      id: newId('cus'),
      name,
      handle,
      subdomain,
      parentId: input.parentId ?? null,
      type: input.parentId ? TenantType.child : input.msp ? TenantType.msp : TenantType.customer,
      isMsp: !input.parentId && Boolean(input.msp),
      orgCode: `org_${randomToken(8)}`,
    });
    // A concurrent create took the handle between the check and the insert.
    if (!tenant) throw handleTaken();
    this.directory.invalidate(tenant.id, tenant.parentId);
    return tenant;
  }

  find(id: string): Promise<Tenant | null> {
    return this.directory.get(id);
  }

  childrenOf(parentId: string): Promise<Tenant[]> {
    return this.directory.childrenOf(parentId);
  }

  list(): Promise<Tenant[]> {
    return this.store.list();
  }

  /**
   * Deletes a tenant and its child deployments, as far as anyone can tell at once: in one
   * transaction they become `deleting` (hidden from every list and lookup, in every process
   * through `tenant_changed`), their handles are free again, their clients are revoked and a
   * deletion job is queued for each. The deletion worker (deletion-worker.ts) then removes what
   * they own outside PostgreSQL and finally their rows. Null when there was nothing to delete,
   * also for all but one of concurrent deletions of the same tenant.
   */
  async delete(id: string): Promise<Tenant | null> {
    const queued = await this.deletions.queue(id);
    if (!queued) return null;
    for (const doomed of queued.ids) this.directory.invalidate(doomed, doomed === id ? queued.tenant.parentId : id);
    return queued.tenant;
  }
}
