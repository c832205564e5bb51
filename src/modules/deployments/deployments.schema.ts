import { builder } from '../../graphql/builder.js';
import { TenantRef } from '../../tenancy/tenancy.schema.js';

const IdentityOrg = builder.simpleObject('IdentityOrg', {
  description: 'The identity-provider organization behind a deployment.',
  fields: (t) => ({ code: t.string({ nullable: true }), name: t.string({ nullable: true }), handle: t.string({ nullable: true }) }),
});

const CreateDeploymentInput = builder.inputType('CreateDeploymentInput', {
  // Fields are optional in the schema so that a missing one is answered with the documented
  // `missing_required_fields` error rather than a generic validation failure.
  fields: (t) => ({
    name: t.string({ required: false }),
    handle: t.string({ required: false, description: 'Slugified to lowercase with underscores.' }),
    parentId: t.string({ required: false, description: "Must be the caller's own customer_id." }),
    subdomain: t.string({ required: false }),
  }),
});

const DeleteDeploymentInput = builder.inputType('DeleteDeploymentInput', {
  fields: (t) => ({
    customerId: t.string({ required: false, description: 'The child deployment to delete.' }),
    parentId: t.string({ required: false, description: 'Must be the caller and own the child.' }),
  }),
});

const CreateDeploymentPayload = builder.simpleObject('CreateDeploymentPayload', {
  fields: (t) => ({
    customer: t.field({ type: TenantRef }),
    org: t.field({ type: IdentityOrg }),
  }),
});

const DeletedDeployment = builder.simpleObject('DeletedDeployment', {
  fields: (t) => ({
    customerId: t.string(),
    name: t.string({ nullable: true }),
    handle: t.string({ nullable: true }),
  }),
});

const DeleteDeploymentPayload = builder.simpleObject('DeleteDeploymentPayload', {
  fields: (t) => ({ message: t.string(), deleted: t.field({ type: DeletedDeployment }) }),
});

builder.queryFields((t) => ({
  deploymentParent: t.prismaField({
    type: 'Tenant',
    description: 'The parent whose deployments are listed: the caller, or 403 `unauthorized` for any other id.',
    args: { parentId: t.arg.string({ required: false }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.deployments.parentFor(await ctx.auth.requireSession(), args.parentId),
  }),
}));

builder.mutationFields((t) => ({
  createDeployment: t.field({
    type: CreateDeploymentPayload,
    args: { input: t.arg({ type: CreateDeploymentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const customer = await ctx.services.deployments.create(await ctx.auth.requireSession(), input);
      return { customer, org: { code: customer.orgCode, name: customer.name, handle: customer.handle } };
    },
  }),
  deleteDeployment: t.field({
    type: DeleteDeploymentPayload,
    args: { input: t.arg({ type: DeleteDeploymentInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const deleted = await ctx.services.deployments.delete(await ctx.auth.requireSession(), input);
      return {
        message: `Deployment ${deleted.id} deleted`,
        deleted: { customerId: deleted.id, name: deleted.name, handle: deleted.handle },
      };
    },
  }),
}));
