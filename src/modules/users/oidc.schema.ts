import type { OidcProvider } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { OIDC_START_PATH } from './oidc.service.js';
import type { RoleRule } from './oidc.store.js';
import { UserRole } from './users.schema.js';

const SingleSignOnRule = builder.objectRef<RoleRule>('SingleSignOnRoleRule').implement({
  description: 'A group, or an email domain, and the role it gives.',
  fields: (t) => ({
    group: t.string({ nullable: true, resolve: (r) => r.group ?? null }),
    emailDomain: t.string({ nullable: true, resolve: (r) => r.email_domain ?? null }),
    role: t.field({ type: UserRole, resolve: (r) => r.role as 'viewer' | 'analyst' | 'admin' }),
  }),
});

const SingleSignOn = builder.objectRef<OidcProvider>('SingleSignOn').implement({
  description: "A tenant's OpenID Connect provider for console sign-in (docs/users.md); its client secret is never shown.",
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    issuer: t.exposeString('issuer'),
    clientId: t.exposeString('clientId'),
    roleRules: t.field({ type: [SingleSignOnRule], description: 'First match wins.', resolve: (p) => p.roleRules as unknown as RoleRule[] }),
    defaultRole: t.field({
      type: UserRole,
      nullable: true,
      description: 'For a person no rule matches; null: refused.',
      resolve: (p) => p.defaultRole as 'viewer' | null,
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    startUrl: t.string({
      description: "Where the tenant's people start signing on.",
      resolve: (p, _args, ctx) => `${ctx.services.links.base()}${OIDC_START_PATH}?customer=${encodeURIComponent(p.customerId)}`,
    }),
  }),
});

const SingleSignOnRuleInput = builder.inputType('SingleSignOnRoleRuleInput', {
  fields: (t) => ({
    group: t.string({ required: false, description: 'A value of the ID token’s `groups` claim.' }),
    emailDomain: t.string({ required: false, description: 'The domain of the verified email, e.g. `example.com`.' }),
    role: t.field({ type: UserRole, required: true }),
  }),
});

const SingleSignOnInput = builder.inputType('SingleSignOnInput', {
  fields: (t) => ({
    issuer: t.string({ required: true, description: 'The provider’s issuer URL (https); its discovery document must answer.' }),
    clientId: t.string({ required: true }),
    clientSecret: t.string({ required: true, description: 'Stored sealed; never shown again.' }),
    roleRules: t.field({ type: [SingleSignOnRuleInput], required: true, description: 'Each names a group or an email domain; first match wins.' }),
    defaultRole: t.field({ type: UserRole, required: false }),
  }),
});

builder.queryFields((t) => ({
  singleSignOn: t.field({
    type: SingleSignOn,
    nullable: true,
    description: "A tenant's single sign-on settings, null when it has none. Admins; node_api for API clients.",
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.oidc.configuration(await ctx.auth.requireSession(), args.customerId),
  }),
}));

builder.mutationFields((t) => ({
  configureSingleSignOn: t.field({
    type: SingleSignOn,
    description: `Sets a tenant's OpenID Connect provider; people then sign on at ${OIDC_START_PATH}?customer=… (authorization code with PKCE).`,
    args: { customerId: t.arg.string({ required: true }), input: t.arg({ type: SingleSignOnInput, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.oidc.configure(await ctx.auth.requireSession(), args.customerId, args.input),
  }),
}));
