import { resolveArrayConnection } from '@pothos/plugin-relay';
import type { Path } from 'graphql/jsutils/Path.js';
import { badRequest } from '../errors.js';
import { builder } from '../graphql/builder.js';

export const DeploymentState = builder.simpleObject('DeploymentState', {
  description: 'Provisioning state of a tenant; `deployed` once it can take collectors.',
  fields: (t) => ({ status: t.string() }),
});

export const TenantRef = builder.prismaNode('Tenant', {
  description: 'A customer: a top-level tenant, a parent MSP, or one of its child deployments.',
  id: { field: 'id' },
  fields: (t) => ({
    customerId: t.exposeString('id', { description: "The tenant's `customer_id`." }),
    name: t.exposeString('name', { nullable: true }),
    handle: t.exposeString('handle', { nullable: true, description: 'URL-safe: lowercase letters, digits, underscores.' }),
    type: t.exposeString('type', { description: '`customer`, `msp` (a parent) or `child`.' }),
    parentId: t.exposeString('parentId', { nullable: true, description: "The parent MSP's `customer_id`." }),
    isMsp: t.exposeBoolean('isMsp', { description: 'Provisioned as a parent that may own deployments.' }),
    subdomain: t.exposeString('subdomain', { nullable: true }),
    orgCode: t.exposeString('orgCode', { nullable: true, description: 'Identity-provider organization code.' }),
    deployment: t.field({ type: DeploymentState, resolve: (tenant) => ({ status: tenant.deploymentStatus }) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

/**
 * A plain field, not a Prisma relation: a relation is loaded by the include Pothos plans for any
 * Prisma query above it (a profile's `customer`, say), and a loaded relation skips its resolver,
 * so a child's own token would read its parent MSP. Read through the cached tenant tree, once per
 * distinct parent, it is no N+1; and roots that hand out tenants from that tree use no Prisma query.
 */
builder.prismaObjectField(TenantRef, 'parent', (t) =>
  t.field({
    type: TenantRef,
    nullable: true,
    description: "The parent MSP, when it is in the caller's tree: a child's own token sees none.",
    resolve: async (tenant, _args, ctx) => (tenant.parentId ? ctx.services.tenancy.visibleTenant(await ctx.auth.requireSession(), tenant.parentId) : null),
  }),
);

const DEPLOYMENTS_CONNECTION = 'TenantDeploymentsConnection';

/** Whether a field resolves under a deployments page (a child's `parent` leads back to it). */
function withinDeployments(path: Path | undefined): boolean {
  for (let at = path; at; at = at.prev) if (at.typename === DEPLOYMENTS_CONNECTION) return true;
  return false;
}

builder.prismaObjectField(TenantRef, 'deployments', (t) =>
  t.connection(
    {
      type: TenantRef,
      // Nullable: a token without deployment_api loses this field, not the tenant around it.
      nullable: true,
      description: 'Child deployments, oldest first (served from the cached tenant tree; scope deployment_api); not within another deployments page.',
      resolve: async (tenant, args, ctx, info) => {
        if (withinDeployments(info.path))
          throw badRequest('invalid_request', 'deployments cannot be asked for within deployments: each page would repeat the whole tree');
        const children = await ctx.services.tenancy.deploymentsOf(await ctx.auth.requireSession(), tenant.id);
        const page = resolveArrayConnection({ args, defaultSize: 100, maxSize: 10_000 }, children);
        return Object.assign(page!, { totalCount: children.length });
      },
    },
    { name: DEPLOYMENTS_CONNECTION, fields: (c) => ({ totalCount: c.int({ resolve: (conn) => (conn as unknown as { totalCount: number }).totalCount }) }) },
  ),
);

const Viewer = builder.simpleObject('Viewer', {
  description: 'The caller behind the bearer token, or the person behind the session cookie.',
  fields: (t) => ({
    customerId: t.string(),
    clientId: t.string({ nullable: true, description: 'The API client; null for a person (see `me`).' }),
    userId: t.string({ nullable: true, description: 'The person signed in; null for an API client.' }),
    scopes: t.stringList({ description: "The token's scopes; none for a person, whose role decides instead." }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: Viewer,
    description: 'Who the bearer token (or session cookie) speaks for.',
    resolve: async (_root, _args, ctx) => {
      const session = await ctx.auth.requireSession();
      session.assert('tenants.read');
      if (session.person) return { customerId: session.customerId, clientId: null, userId: session.person.userId, scopes: [] };
      return { customerId: session.customerId, clientId: session.claims.clientId, userId: null, scopes: session.claims.scopes };
    },
  }),
  viewerTenant: t.prismaField({
    type: 'Tenant',
    description: "The caller's own tenant, the root of its tree.",
    resolve: async (_query, _root, _args, ctx) => {
      const session = await ctx.auth.requireSession();
      return ctx.services.tenancy.requireVisibleTenant(session, session.customerId);
    },
  }),
  tenant: t.prismaField({
    type: 'Tenant',
    nullable: true,
    description: "A tenant in the caller's tree; null for anything else, as if it did not exist. Another than the caller's own needs deployment_api.",
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.tenancy.tenantById(await ctx.auth.requireSession(), args.customerId),
  }),
}));
