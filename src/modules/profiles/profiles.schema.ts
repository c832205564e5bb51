import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../../graphql/builder.js';
import { PROFILE_LIMITS } from './profile-input.js';
import { encodeProfileCursor } from './profile-page.js';
import type { ProfileSelection } from './profiles.store.js';
import { deliveredServices } from './services-defaults.js';

export const ProfileRef = builder.prismaNode('Profile', {
  description: 'Reusable collector capture configuration, applied to the nodes provisioned with it.',
  id: { field: 'id' },
  fields: (t) => ({
    profileId: t.exposeString('id', { description: "The profile's `profile_id`." }),
    customerId: t.exposeString('customerId', { description: 'The owning tenant: the caller or one of its children.' }),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    services: t.expose('services', {
      type: 'JSON',
      description: 'The service blocks exactly as submitted; unset blocks and fields are not filled in.',
    }),
    deliveredServices: t.field({
      type: 'JSON',
      description: 'What a node using this profile runs with: `services` merged over the server defaults.',
      resolve: (profile) => deliveredServices(profile.services),
    }),
    tags: t.exposeStringList('tags', { description: 'Tags applied to nodes using the profile.' }),
    updateChannel: t.exposeString('updateChannel', { description: '`stable`, `dev` or `pinned`.' }),
    autoUpdate: t.exposeBoolean('autoUpdate'),
    fleetStaging: t.exposeBoolean('fleetStaging', {
      description: 'When true, nodes enrolled with a provision credential start in status `staged`.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    // Through the tree, as every tenant the API hands out (its `parent` must stay out of reach).
    customer: t.relation('customer', {
      resolve: async (_query, profile, _args, ctx) => ctx.services.tenancy.requireVisibleTenant(await ctx.auth.requireSession(), profile.customerId),
    }),
  }),
});

const CreateProfileInput = builder.inputType('CreateProfileInput', {
  // `name` is optional in the schema so that a missing one is answered with the documented
  // `missing_required_fields` error. `services` is JSON so that the service can name the exact
  // field at fault (`services.packet.num_workers must be ...`).
  fields: (t) => ({
    name: t.string({ required: false, description: `Required; at most ${PROFILE_LIMITS.name} characters.` }),
    description: t.string({ required: false, description: `At most ${PROFILE_LIMITS.description} characters.` }),
    services: t.field({
      type: 'JSON',
      required: false,
      description: 'Service blocks (`packet`, `netflow`, `suricata_logs`, `suricata_ids`, `host_logs`); see docs/profiles.md.',
    }),
    tags: t.stringList({ required: false, description: `At most ${PROFILE_LIMITS.tags}, each at most ${PROFILE_LIMITS.tag} characters.` }),
    updateChannel: t.string({ required: false, description: '`stable` (default), `dev` or `pinned`.' }),
    fleetStaging: t.boolean({ required: false, description: 'Default false.' }),
    autoUpdate: t.boolean({ required: false, description: 'Default true.' }),
    customerId: t.string({ required: false, description: 'The owner: the caller (default) or one of its children.' }),
  }),
});

const CreateProfilePayload = builder.simpleObject('CreateProfilePayload', {
  fields: (t) => ({ profile: t.field({ type: ProfileRef }) }),
});

const DeletedProfile = builder.simpleObject('DeletedProfile', {
  fields: (t) => ({ profileId: t.string() }),
});

const DeleteProfilePayload = builder.simpleObject('DeleteProfilePayload', {
  fields: (t) => ({ deleted: t.field({ type: DeletedProfile }) }),
});

builder.queryFields((t) => ({
  // A plain connection rather than `t.prismaConnection`, whose cursor is a row id that Prisma must
  // find again: paging stopped dead once that profile was deleted. This one pages by keyset
  // (profile-page.ts), and keeps the printed types `prismaConnection` had.
  profiles: t.connection(
    {
      type: ProfileRef,
      description: 'Profiles of the caller and its child deployments, oldest first.',
      args: {
        customerId: t.arg.string({ required: false, description: "One tenant of the caller's tree (404 `not_found` outside it); default: the whole tree." }),
      },
      resolve: async (_root, args, ctx, info) => {
        // Relations only: `Profile` plans includes, not selects, so every row keeps the `createdAt`
        // and `id` its cursor is made of.
        const selection = queryFromInfo({ context: ctx, info, typeName: 'Profile', path: ['edges', 'node'] }) as ProfileSelection;
        const page = await ctx.services.profiles.page(await ctx.auth.requireSession(), args, selection);
        const edges = page.profiles.map((profile) => ({ cursor: encodeProfileCursor(profile), node: profile }));
        return {
          // Read by totalCount, which counts the same tenants.
          customerId: args.customerId,
          edges,
          pageInfo: {
            hasPreviousPage: page.hasPreviousPage,
            hasNextPage: page.hasNextPage,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      },
    },
    {
      fields: (c) => ({
        totalCount: c.int({
          resolve: async (connection, _args, ctx) => ctx.services.profiles.count(await ctx.auth.requireSession(), connection.customerId),
        }),
      }),
    },
  ),
  profile: t.prismaField({
    type: 'Profile',
    nullable: true,
    description: "A profile in the caller's tree; null for anything else, as if it did not exist.",
    args: { profileId: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.profiles.find(await ctx.auth.requireSession(), args.profileId, query),
  }),
}));

builder.mutationFields((t) => ({
  createProfile: t.field({
    type: CreateProfilePayload,
    description:
      'Creates a profile; 400 `missing_required_fields` without a name, 400 `invalid_request` for bad fields, 403 `unauthorized` for an owner outside the tree.',
    args: { input: t.arg({ type: CreateProfileInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ({
      profile: await ctx.services.profiles.create(await ctx.auth.requireSession(), input),
    }),
  }),
  deleteProfile: t.field({
    type: DeleteProfilePayload,
    description: "Deletes a profile in the caller's tree (404 `not_found` otherwise); its nodes fall back to the server defaults.",
    args: { profileId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({
      deleted: await ctx.services.profiles.delete(await ctx.auth.requireSession(), args.profileId),
    }),
  }),
}));
