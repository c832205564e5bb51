import { roles } from '../../auth/actions.js';
import { type Context, csrfHeaderRequired } from '../../context.js';
import { DomainError } from '../../errors.js';
import type { User, UserSession } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { TenantRef } from '../../tenancy/tenancy.schema.js';
import { MIN_PASSWORD_LENGTH } from './passwords.js';
import { RECOVERY_CODE_COUNT } from './second-factor.service.js';
import { clearedSessionCookieHeader, sessionCookieHeader } from './session-cookie.js';
import { MAX_NAME_LENGTH, SET_PASSWORD_LINK_SECONDS, type UserWithLink } from './users.service.js';

export const UserRole = builder.enumType('UserRole', {
  description: 'What a person may do, each role including the one before it (docs/users.md).',
  values: {
    viewer: { value: 'viewer', description: 'Read everything of their tenants.' },
    analyst: { value: 'analyst', description: 'Also triage investigations and approve devices.' },
    admin: { value: 'admin', description: 'Also manage fleet, profiles, deployments, automation, API clients and users.' },
  } as const,
});

const UserStatus = builder.enumType('UserStatus', {
  values: { active: { value: 'active' }, disabled: { value: 'disabled', description: 'Cannot sign in; its sessions were ended.' } } as const,
});

const UserRef = builder.objectRef<User>('User').implement({
  description: 'A person who signs in to the console.',
  fields: (t) => ({
    id: t.exposeString('id'),
    email: t.exposeString('email', { description: 'Lowercased.' }),
    name: t.exposeString('name', {
      nullable: true,
      description: `The display name (at most ${MAX_NAME_LENGTH} characters); null when none was given: they set it themself (\`setMyName\`), or an admin inviting them, or their sign-on's \`name\` claim.`,
    }),
    role: t.field({ type: UserRole, resolve: (u) => u.role as (typeof roles)[number] }),
    status: t.field({ type: UserStatus, resolve: (u) => u.status as 'active' | 'disabled' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    twoFactorEnabled: t.boolean({ description: 'Whether sign-in also asks for a TOTP code.', resolve: (u) => u.totpBox !== null }),
    customer: t.field({
      type: TenantRef,
      description: 'The tenant the person belongs to.',
      resolve: (u, _args, ctx) => ctx.services.tenancy.tenantOfPerson(u.customerId),
    }),
    tenants: t.field({
      type: [TenantRef],
      description: "The tenants the person acts on: their own and, for an MSP's people, its children.",
      resolve: (u, _args, ctx) => ctx.services.tenancy.treeOf(u.customerId),
    }),
  }),
});

const SetPasswordLinkRef = builder.simpleObject('SetPasswordLink', {
  description: `A one-time link where the person sets their password, valid ${SET_PASSWORD_LINK_SECONDS / 3600} h; shown only here, pass it on to them.`,
  fields: (t) => ({ url: t.string(), expiresAt: t.field({ type: 'DateTime' }) }),
});

const UserWithLinkRef = builder.objectRef<UserWithLink>('UserWithLink').implement({
  fields: (t) => ({
    user: t.field({ type: UserRef, resolve: (r) => r.user }),
    setPasswordLink: t.field({ type: SetPasswordLinkRef, resolve: (r) => r.link }),
  }),
});

const UserSessionRef = builder.objectRef<UserSession & { current: boolean; idleExpiresAt: Date }>('UserSession').implement({
  description: "A person's signed-in session (never its cookie).",
  fields: (t) => ({
    id: t.exposeString('id'),
    userId: t.exposeString('userId'),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the person signed in.' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime', description: 'Its last use, to the minute.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'Its absolute end, however much it is used.' }),
    idleExpiresAt: t.expose('idleExpiresAt', { type: 'DateTime', description: 'When it ends unless used again.' }),
    address: t.exposeString('address', { nullable: true }),
    userAgent: t.exposeString('userAgent', { nullable: true }),
    current: t.exposeBoolean('current', { description: 'The session of this request.' }),
  }),
});

const SignInResult = builder.simpleObject('SignInResult', {
  fields: (t) => ({
    user: t.field({ type: UserRef, nullable: true, description: 'The person signed in; null when a second factor is still needed.' }),
    secondFactorRequired: t.boolean({ description: 'The password was right; sign in again with `totpCode` or `recoveryCode` too.' }),
  }),
});

const TotpEnrolment = builder.simpleObject('TotpEnrolment', {
  description: 'A TOTP secret being enrolled: shown once. Confirm it with a code from the app.',
  fields: (t) => ({
    secret: t.string({ description: 'Base32, to type into an authenticator app.' }),
    otpauthUri: t.string({ description: 'The same as an `otpauth://` URI, for a QR code.' }),
  }),
});

const SignInInput = builder.inputType('SignInInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    password: t.string({ required: true }),
    totpCode: t.string({ required: false, description: 'The 6 digits of the authenticator app, when the person has a second factor.' }),
    recoveryCode: t.string({ required: false, description: 'One of the recovery codes instead of `totpCode`; each works once.' }),
  }),
});

const UserInviteInput = builder.inputType('UserInviteInput', {
  fields: (t) => ({
    customerId: t.string({ required: true, description: 'The tenant the person joins: the caller or one of its children.' }),
    email: t.string({ required: true }),
    role: t.field({ type: UserRole, required: true }),
    name: t.string({ required: false, description: `Their display name, at most ${MAX_NAME_LENGTH} characters; they may change it.` }),
  }),
});

/** The sessions as the schema shows them, the request's own marked. */
const sessionViews = (rows: UserSession[], ctx: Context, currentId: string | undefined) =>
  rows.map((row) => ({ ...row, current: row.id === currentId, idleExpiresAt: new Date(ctx.services.signIn.idleEnd(row.lastSeenAt)) }));

const PASSWORD = `At least ${MIN_PASSWORD_LENGTH} characters.`;

builder.queryFields((t) => ({
  me: t.field({
    type: UserRef,
    nullable: true,
    description: "Public: the person of the request's session cookie; null without one (or with a bearer token).",
    resolve: async (_root, _args, ctx) => {
      const person = (await ctx.auth.session())?.person;
      return person ? ctx.services.users.self(person.userId) : null;
    },
  }),
  users: t.field({
    type: [UserRef],
    description: 'The console users of a tenant of the tree (404 `not_found` outside), oldest first. Admins; node_api for API clients.',
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.users.list(await ctx.auth.requireSession(), args.customerId),
  }),
  mySessions: t.field({
    type: [UserSessionRef],
    description: "The signed-in person's sessions in force, newest first.",
    resolve: async (_root, _args, ctx) => {
      const session = await ctx.auth.requireSession();
      return sessionViews(await ctx.services.signIn.mySessions(session), ctx, session.person?.sessionId);
    },
  }),
  userSessions: t.field({
    type: [UserSessionRef],
    description: "A user's sessions in force, for admins of the user's tree (sessions.manage).",
    args: { userId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const session = await ctx.auth.requireSession();
      return sessionViews(await ctx.services.signIn.userSessions(session, args.userId), ctx, session.person?.sessionId);
    },
  }),
}));

builder.mutationFields((t) => ({
  signIn: t.field({
    type: SignInResult,
    description:
      'Public: signs a person in and sets the `bd_session` cookie (HttpOnly, SameSite=Lax; Secure over https), a new session each time. Needs the `x-graphql-yoga-csrf` header. 401 `invalid_credentials`; 429 `too_many_attempts` saying when to try again.',
    args: { input: t.arg({ type: SignInInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const http = requireHttp(ctx);
      if (!http.csrfSafe) throw csrfHeaderRequired();
      const outcome = await ctx.services.signIn.signIn(ctx.origin, http.userAgent, input);
      if ('secondFactorRequired' in outcome) return { user: null, secondFactorRequired: true };
      const { settings } = ctx.services.signIn;
      http.setCookie(sessionCookieHeader(outcome.cookieValue, settings.sessionMaxSeconds, settings.secureCookies));
      return { user: outcome.user, secondFactorRequired: false };
    },
  }),
  signOut: t.boolean({
    description: "Public: ends the request's session and clears its cookie; false when it had none in force.",
    resolve: async (_root, _args, ctx) => {
      const http = requireHttp(ctx);
      const value = ctx.auth.cookie?.value;
      // A forged cross-site request must not sign anybody out either.
      if (value) await ctx.auth.session();
      http.setCookie(clearedSessionCookieHeader(ctx.services.signIn.settings.secureCookies));
      return value ? ctx.services.signIn.signOut(value, ctx.origin) : false;
    },
  }),
  setPassword: t.boolean({
    description: `Public: sets a password from a set-password link's token (the part after \`#token=\`); the link is spent and the person's sessions end. ${PASSWORD} 400 \`invalid_link\`.`,
    args: { token: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.users.setPassword(args.token, args.password),
  }),
  setMyName: t.field({
    type: UserRef,
    description: `The signed-in person's own display name, at most ${MAX_NAME_LENGTH} characters, no control or invisible characters; empty or null clears it.`,
    args: { name: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.users.setMyName(await ctx.auth.requireSession(), args.name),
  }),
  changePassword: t.boolean({
    description: `The signed-in person's own password; their other sessions end. ${PASSWORD}`,
    args: { currentPassword: t.arg.string({ required: true }), newPassword: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.users.changePassword(await ctx.auth.requireSession(), args.currentPassword, args.newPassword, ctx.origin),
  }),
  revokeSession: t.boolean({
    description: "Ends a session: one of the person's own, or, for admins (sessions.manage), any of their tree's users.",
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.signIn.revoke(await ctx.auth.requireSession(), args.id),
  }),
  inviteUser: t.field({
    type: UserWithLinkRef,
    description: 'Adds a person to a tenant of the tree, with a one-time set-password link to pass on. 409 `email_taken`.',
    args: { input: t.arg({ type: UserInviteInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ctx.services.users.invite(await ctx.auth.requireSession(), input),
  }),
  changeUserRole: t.field({
    type: UserRef,
    description: 'Changes the role of a user of the tree (not your own).',
    args: { userId: t.arg.string({ required: true }), role: t.arg({ type: UserRole, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.users.changeRole(await ctx.auth.requireSession(), args.userId, args.role),
  }),
  disableUser: t.field({
    type: UserRef,
    description: 'Disables a user of the tree (not yourself): they cannot sign in, and their sessions end.',
    args: { userId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.users.disable(await ctx.auth.requireSession(), args.userId),
  }),
  resetUserPassword: t.field({
    type: UserWithLinkRef,
    description: 'A new one-time set-password link for a user of the tree; earlier unused links stop working.',
    args: { userId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.users.resetPassword(await ctx.auth.requireSession(), args.userId),
  }),
  startTotpEnrolment: t.field({
    type: TotpEnrolment,
    description: 'Starts turning on two-factor sign-in for the signed-in person: a new secret, pending until confirmed.',
    resolve: async (_root, _args, ctx) => ctx.services.secondFactor.startEnrolment(await ctx.auth.requireSession()),
  }),
  confirmTotpEnrolment: t.stringList({
    description: `Turns two-factor sign-in on with a code from the app; answers the ${RECOVERY_CODE_COUNT} one-time recovery codes, shown only here.`,
    args: { code: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.secondFactor.confirmEnrolment(await ctx.auth.requireSession(), args.code),
  }),
  disableTotp: t.boolean({
    description: "Turns the signed-in person's two-factor sign-in off; asks for the password again.",
    args: { password: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.secondFactor.disable(await ctx.auth.requireSession(), args.password, ctx.origin),
  }),
}));

/** Sign-in and sign-out set a cookie: only a request over HTTP can. */
function requireHttp(ctx: Context) {
  if (!ctx.http) throw new DomainError(400, 'invalid_request', 'Sign in and out over HTTP POST /graphql, not over a WebSocket');
  return ctx.http;
}
