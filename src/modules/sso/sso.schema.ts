import { roles } from '../../auth/actions.js';
import { builder } from '../../graphql/builder.js';
import type { RoleRule } from './role-rules.js';
import { ROLE_RULE_LIMITS } from './role-rules.js';
import type { SsoConnectionView } from './sso.service.js';

/** A person's role in a tenant; the console users' role and single sign-on's rules share it. */
export const RoleEnum = builder.enumType('Role', {
  description: 'What a person may do in a tenant, each role including the one before it (docs/authorization.md).',
  values: {
    VIEWER: { value: roles[0], description: 'Read investigations, search, explore, the fleet and events.' },
    ANALYST: { value: roles[1], description: 'Also answer and triage investigations and approve devices.' },
    ADMIN: { value: roles[2], description: 'Also manage the fleet, profiles, deployments, API clients, users and single sign-on.' },
  } as const,
});

const SsoRoleRuleRef = builder.objectRef<RoleRule>('SsoRoleRule').implement({
  description: 'A group the provider names, or an email domain, granting a role.',
  fields: (t) => ({
    group: t.string({ nullable: true, resolve: (r) => ('group' in r ? r.group : null) }),
    emailDomain: t.string({ nullable: true, resolve: (r) => ('emailDomain' in r ? r.emailDomain : null) }),
    role: t.field({ type: RoleEnum, resolve: (r) => r.role }),
  }),
});

const SsoConnectionRef = builder.objectRef<SsoConnectionView>('SsoConnection').implement({
  description: "A tenant's OpenID Connect provider (docs/sso.md). Its client secret is never shown.",
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    issuer: t.exposeString('issuer', { description: "The provider's issuer URL (its discovery document is under it)." }),
    clientId: t.exposeString('clientId'),
    groupsClaim: t.exposeString('groupsClaim', { description: 'The ID token claim holding the groups the rules name.' }),
    roleRules: t.field({
      type: [SsoRoleRuleRef],
      resolve: (c) => c.roleRules,
      description: 'The highest role any rule grants is the role the person signs in with.',
    }),
    redirectUri: t.exposeString('redirectUri', { description: 'The redirect URI to register at the provider.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const SsoRoleRuleInput = builder.inputType('SsoRoleRuleInput', {
  fields: (t) => ({
    group: t.string({ required: false, description: `A group name in the groups claim (at most ${ROLE_RULE_LIMITS.text} characters); or:` }),
    emailDomain: t.string({ required: false, description: 'An email domain such as example.com.' }),
    role: t.field({ type: RoleEnum, required: true }),
  }),
});

const SsoConnectionInput = builder.inputType('SsoConnectionInput', {
  fields: (t) => ({
    issuer: t.string({ required: true, description: 'The issuer URL; https (docs/sso.md says when http is allowed).' }),
    clientId: t.string({ required: true }),
    clientSecret: t.string({ required: false, description: 'Required for a new connection; the stored one is kept when omitted.' }),
    groupsClaim: t.string({ required: false, description: 'Default `groups`.' }),
    roleRules: t.field({ type: [SsoRoleRuleInput], required: true, description: `One to ${ROLE_RULE_LIMITS.rules} rules.` }),
  }),
});

builder.queryFields((t) => ({
  ssoConnection: t.field({
    type: SsoConnectionRef,
    nullable: true,
    description: "A tenant's single sign-on provider, null when it has none (admins; node_api for API clients).",
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.sso.connection(await ctx.auth.requireSession(), args.customerId),
  }),
}));

builder.mutationFields((t) => ({
  saveSsoConnection: t.field({
    type: SsoConnectionRef,
    description:
      "Sets a tenant's provider after checking it answers its OpenID discovery (400 `sso_provider_unreachable` otherwise). People then sign in at `/auth/sso/start?tenant=<customerId>`.",
    args: { customerId: t.arg.string({ required: true }), input: t.arg({ type: SsoConnectionInput, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.sso.save(await ctx.auth.requireSession(), args.customerId, args.input),
  }),
  deleteSsoConnection: t.boolean({
    description: "Removes a tenant's provider; false when it had none. Sessions already signed in stay until they end or are revoked.",
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.sso.remove(await ctx.auth.requireSession(), args.customerId),
  }),
}));
