import { builder } from '../../graphql/builder.js';
import { API_CLIENT_LIMITS, type CreatedApiClient } from './api-clients.service.js';
import type { ApiClientRow } from './api-clients.store.js';

const ApiClientRef = builder.objectRef<ApiClientRow>('ApiClient').implement({
  description: 'A credential a script, SDK or collector exchanges at the token endpoint (never its secret).',
  fields: (t) => ({
    clientId: t.exposeString('id', { description: 'The `client_id`: the part of the access key before the first dot.' }),
    customerId: t.exposeString('customerId', { description: 'The tenant its tokens act for.' }),
    description: t.exposeString('description', { nullable: true, description: 'Who or what uses it.' }),
    scopes: t.exposeStringList('scopes'),
    kind: t.exposeString('kind', {
      description: "`api` (created here or by the admin CLI), or a collector's enrolment credential: `provision` or `device`.",
    }),
    nodeIds: t.stringList({
      description: 'The collector nodes that enrolled with it; revoking it cuts them off until they enrol again.',
      resolve: (client) => client.nodes.map((n) => n.id),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'Since when its tokens are refused; null while active.' }),
  }),
});

const CreatedApiClientRef = builder.objectRef<CreatedApiClient>('CreatedApiClient').implement({
  fields: (t) => ({
    client: t.field({ type: ApiClientRef, resolve: (r) => r.client }),
    accessKey: t.exposeString('accessKey', {
      description: '`<client_id>.<client_secret>`, shown only here: exchange it (or its two halves, split at the first dot) at the token endpoint.',
    }),
  }),
});

const CreateApiClientInput = builder.inputType('CreateApiClientInput', {
  fields: (t) => ({
    customerId: t.string({ required: true, description: 'The tenant its tokens act for: the caller or one of its children.' }),
    description: t.string({ required: true, description: `Who or what uses it; at most ${API_CLIENT_LIMITS.description} characters.` }),
    scopes: t.stringList({ required: true, description: 'At least one; only scopes the caller holds itself (people: those their role allows).' }),
  }),
});

const ApiClientKind = builder.enumType('ApiClientKind', {
  values: {
    api: { value: 'api', description: 'Created by an admin or the admin CLI, for a script or an SDK.' },
    provision: { value: 'provision', description: 'A collector enrolled with an access key from Provision a collector.' },
    device: { value: 'device', description: 'A collector enrolled through the device flow.' },
  } as const,
});

builder.queryFields((t) => ({
  apiClients: t.field({
    type: [ApiClientRef],
    description:
      `The API clients of a tenant of the tree, newest first, at most ${API_CLIENT_LIMITS.listed}: of one \`kind\` when given, ` +
      'and only the active (`active: true`) or only the revoked (`active: false`) ones when given. A tenant has at most ' +
      `${API_CLIENT_LIMITS.activePerTenant} active clients of kind \`api\`, so that list is always whole; collectors' ` +
      'credentials number as many as its nodes. 404 `not_found` outside the tree.',
    args: {
      customerId: t.arg.string({ required: true }),
      kind: t.arg({ type: ApiClientKind, required: false }),
      active: t.arg.boolean({ required: false }),
    },
    resolve: async (_root, args, ctx) =>
      ctx.services.apiClients.list(await ctx.auth.requireSession(), args.customerId, { kind: args.kind ?? undefined, active: args.active ?? undefined }),
  }),
}));

builder.mutationFields((t) => ({
  createApiClient: t.field({
    type: CreatedApiClientRef,
    description:
      `Creates an API client; its secret is answered once, in \`accessKey\`. 403 \`authorization_error\` (reason \`scope_not_held\`) for a scope the caller lacks; ` +
      `409 \`client_limit_reached\` past ${API_CLIENT_LIMITS.activePerTenant} active clients of kind \`api\` per tenant.`,
    args: { input: t.arg({ type: CreateApiClientInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ctx.services.apiClients.create(await ctx.auth.requireSession(), input),
  }),
  revokeApiClient: t.field({
    type: ApiClientRef,
    description:
      "Revokes an API client of the tree: its tokens are refused at once (a collector's node is cut off). Revoking again changes nothing. " +
      '400 for the client the request is made with; 404 `not_found` outside the tree.',
    args: { clientId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.apiClients.revoke(await ctx.auth.requireSession(), args.clientId),
  }),
}));
