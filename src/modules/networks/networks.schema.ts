import type { OwnNetwork } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { OWN_NETWORK_LIMITS, type OwnNetworkList } from './networks.service.js';

const OwnNetworkKind = builder.enumType('OwnNetworkKind', {
  description: 'What a range is to the tenant.',
  values: {
    INTERNAL: { value: 'internal', description: 'An internal site: its addresses count as internal hosts (never an external organization).' },
    EXTERNAL: { value: 'external', description: 'An external organization (a partner, a provider): its addresses count as external.' },
  } as const,
});

const OwnNetworkRef = builder.objectRef<OwnNetwork>('OwnNetwork').implement({
  description: 'An address range a tenant names, consulted before the public IP → organization dataset (docs/networks.md).',
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    cidr: t.exposeString('cidr', { description: 'Canonical: the network address without host bits; IPv4 as `a.b.c.d/n`, IPv6 compressed.' }),
    name: t.exposeString('name', { description: 'The organization or site name explore and detection show for its addresses.' }),
    kind: t.field({ type: OwnNetworkKind, resolve: (n) => n.kind as 'internal' | 'external' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const OwnNetworkInput = builder.inputType('OwnNetworkInput', {
  fields: (t) => ({
    cidr: t.string({ required: true, description: 'IPv4 or IPv6 CIDR, e.g. `198.51.100.0/24`; host bits must be zero.' }),
    name: t.string({ required: true, description: `At most ${OWN_NETWORK_LIMITS.name} characters, no control or invisible formatting characters.` }),
    kind: t.field({ type: OwnNetworkKind, required: true }),
  }),
});

const OwnNetworksPayload = builder.objectRef<OwnNetworkList>('OwnNetworksPayload').implement({
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    networks: t.field({ type: [OwnNetworkRef], description: "The tenant's whole list after the change, by address.", resolve: (l) => l.networks }),
  }),
});

const TENANT = 'The tenant: the caller (default) or one of its children.';

builder.queryFields((t) => ({
  ownNetworks: t.field({
    type: [OwnNetworkRef],
    description: "Own networks of the caller's tree, or of one tenant in it (404 `not_found` outside), by tenant then address. Needs node_api.",
    args: { customerId: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.networks.list(await ctx.auth.requireSession(), args.customerId),
  }),
}));

builder.mutationFields((t) => ({
  replaceOwnNetworks: t.field({
    type: OwnNetworksPayload,
    description: `Makes \`networks\` the tenant's whole list (empty clears it); at most ${OWN_NETWORK_LIMITS.perTenant}. 400 \`validation_error\` (with \`field\`) for a bad or repeated CIDR, name or kind. Needs node_api.`,
    args: { customerId: t.arg.string({ required: false, description: TENANT }), networks: t.arg({ type: [OwnNetworkInput], required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.networks.replace(await ctx.auth.requireSession(), args.customerId, args.networks),
  }),
  addOwnNetworks: t.field({
    type: OwnNetworksPayload,
    description: 'Adds networks; 409 `own_network_exists` for one the tenant has, 409 `own_network_limit_reached` past the limit. Needs node_api.',
    args: { customerId: t.arg.string({ required: false, description: TENANT }), networks: t.arg({ type: [OwnNetworkInput], required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.networks.add(await ctx.auth.requireSession(), args.customerId, args.networks),
  }),
  removeOwnNetworks: t.field({
    type: OwnNetworksPayload,
    description:
      'Removes networks by CIDR (any spelling of the same network); 404 `own_network_not_found`, removing nothing, when one is not there. Needs node_api.',
    args: { customerId: t.arg.string({ required: false, description: TENANT }), cidrs: t.arg.stringList({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.networks.remove(await ctx.auth.requireSession(), args.customerId, args.cidrs),
  }),
}));
