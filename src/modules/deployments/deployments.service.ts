import type { Session } from '../../auth/session.js';
import { missingFields, notFound, unauthorized } from '../../errors.js';
import type { Tenant } from '../../generated/prisma/client.js';
import type { TenantService } from '../../tenancy/tenants.service.js';

export interface CreateDeploymentInput {
  name?: string | null;
  handle?: string | null;
  parentId?: string | null;
  subdomain?: string | null;
}

export interface DeleteDeploymentInput {
  customerId?: string | null;
  parentId?: string | null;
}

const missing = (input: Record<string, unknown>, fields: Record<string, string>) =>
  Object.entries(fields)
    .filter(([key]) => typeof input[key] !== 'string' || (input[key] as string).trim() === '')
    .map(([, wire]) => wire);

/** Child deployments of a parent MSP (api-spec.md, Deployments). */
export class DeploymentService {
  constructor(private readonly tenants: TenantService) {}

  /** The parent whose deployments are listed: only the caller itself may be asked for. */
  async parentFor(session: Session, parentId?: string | null): Promise<Tenant> {
    session.assert('deployments.read');
    const id = parentId || session.customerId;
    if (id !== session.customerId) throw unauthorized('The token does not belong to the requested parent');
    const parent = await this.tenants.find(id);
    if (!parent) throw unauthorized('The token does not belong to the requested parent');
    return parent;
  }

  async create(session: Session, input: CreateDeploymentInput): Promise<Tenant> {
    session.assert('deployments.create');
    const absent = missing({ ...input }, { name: 'name', handle: 'handle', parentId: 'parent_id' });
    if (absent.length) throw missingFields(absent);
    if (input.parentId !== session.customerId) throw unauthorized('Cannot create deployments under this parent_id');
    const parent = await this.tenants.find(session.customerId);
    if (!parent?.isMsp) throw unauthorized('The caller is not provisioned as a parent');
    return this.tenants.create({
      name: input.name!,
      handle: input.handle!,
      parentId: parent.id,
      subdomain: input.subdomain ?? undefined,
    });
  }

  async delete(session: Session, input: DeleteDeploymentInput): Promise<Tenant> {
    session.assert('deployments.delete');
    const absent = missing({ ...input }, { customerId: 'customer_id', parentId: 'parent_id' });
    if (absent.length) throw missingFields(absent);
    if (input.parentId !== session.customerId) throw unauthorized('Cannot delete deployments of this parent_id');
    const child = await this.tenants.find(input.customerId!);
    const gone = () => notFound('deployment_not_found', `Deployment ${input.customerId} was not found`);
    if (!child || child.parentId !== session.customerId) throw gone();
    // A concurrent delete of the same child may have won meanwhile: only one answers `deleted`.
    if (!(await this.tenants.delete(child.id))) throw gone();
    return child;
  }
}
