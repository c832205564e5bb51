import { randomBytes } from 'node:crypto';
import { type Action, type Role, roleAllows, roles } from '../../auth/actions.js';
import { hashSecret } from '../../auth/secrets.js';
import type { Session, TenantScope } from '../../auth/session.js';
import { DomainError, authenticationError, authorizationError, badRequest, notFound } from '../../errors.js';
import type { User } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import { nameProblem } from '../../infra/text.js';
import type { PublicLinks } from '../../infra/links.js';
import type { RequestOrigin } from '../../infra/rate-limits.js';
import { isUniqueViolation } from '../../infra/unique-violation.js';
import { tenantOnly } from '../../tenancy/tenant-scope.js';
import { checkNewPassword, hashPassword, passwordMatches } from './passwords.js';
import type { SignInGuard } from './sign-in-guard.js';
import type { UserSessionStore } from './user-sessions.store.js';
import type { UserStore } from './users.store.js';

/** How long a set-password link (an invitation or a reset) works: once, within a day. */
export const SET_PASSWORD_LINK_SECONDS = 86_400;
const MAX_EMAIL_LENGTH = 254;

/** A one-time set-password link, shown once to whoever created it. */
export interface SetPasswordLink {
  url: string;
  expiresAt: Date;
}

/** A person to add to a tenant; the name is optional. */
export interface NewPerson {
  customerId: string;
  email: string;
  role: string;
  name?: string | null;
}

/** What an invitation or a reset hands back: the person, and the link to pass on to them. */
export interface UserWithLink {
  user: User;
  link: SetPasswordLink;
}

/** An email as stored and compared: trimmed and lowercased (addresses are compared whatever their case). */
export function normalEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (normal.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normal)) {
    throw badRequest('invalid_request', 'email must be an email address (name@example.com)', { field: 'email' });
  }
  return normal;
}

export function parseRole(role: string): Role {
  if (!(roles as readonly string[]).includes(role)) {
    throw badRequest('invalid_request', `role must be one of ${roles.join(', ')}`, { field: 'role', valid_roles: roles });
  }
  return role as Role;
}

/** Characters of a display name, after trimming. */
export const MAX_NAME_LENGTH = 100;

/** A display name as stored: trimmed, null when empty; 400 for one too long or with control or invisible characters. */
export function checkedName(name: string | null | undefined): string | null {
  const trimmed = name?.trim() ?? '';
  if (!trimmed) return null;
  const problem = nameProblem(trimmed, MAX_NAME_LENGTH);
  if (problem) throw badRequest('invalid_request', `name ${problem}`, { field: 'name' });
  return trimmed;
}

/** What a person is called where others see them: their display name, else their email's local part. */
export function displayName(person: { name: string | null; email: string }): string {
  return person.name ?? (person.email.slice(0, person.email.lastIndexOf('@')) || person.email);
}

const userNotFound = (id: string) => notFound('not_found', `User ${id.slice(0, 200)} was not found`);

/**
 * Console users: who they are, their role, their password. Admins (and API clients with the
 * node_api scope) act on the users of their tree; the admin CLI on any tenant's. A person's own
 * password is theirs alone to change, or to set from a link.
 */
export class UserService {
  constructor(
    private readonly store: UserStore,
    private readonly sessions: UserSessionStore,
    private readonly links: PublicLinks,
    private readonly guard: SignInGuard,
    private readonly loadScope: (customerId: string) => Promise<TenantScope>,
  ) {}

  /** Whether a person may take `action` on the data of `customerId`: active, of a role that allows it, and seeing that tenant. */
  async mayTake(userId: string, action: Action, customerId: string): Promise<boolean> {
    const user = await this.store.findById(userId);
    if (!user || user.status !== 'active' || !roleAllows(user.role as Role, action)) return false;
    return (await this.loadScope(user.customerId)).tenantIds.has(customerId);
  }

  /** The signed-in person, for `me`. */
  self(userId: string): Promise<User | null> {
    return this.store.findById(userId);
  }

  /** `user create` of the admin CLI: the operator may add a person to any tenant. */
  createForOperator(input: NewPerson): Promise<UserWithLink> {
    return this.create(tenantOnly(input.customerId), input);
  }

  async invite(session: Session, input: NewPerson): Promise<UserWithLink> {
    return this.create(await session.assertTenant('users.manage', input.customerId), input);
  }

  async list(session: Session, customerId: string): Promise<User[]> {
    return this.store.list(await session.assertTenant('users.read', customerId), customerId);
  }

  listForOperator(customerId: string): Promise<User[]> {
    return this.store.list(tenantOnly(customerId), customerId);
  }

  async changeRole(session: Session, userId: string, role: string): Promise<User> {
    const { scope } = await this.managed(session, userId, 'change your own role');
    const user = await this.store.update(scope, userId, { role: parseRole(role) });
    if (!user) throw userNotFound(userId);
    return user;
  }

  async disable(session: Session, userId: string): Promise<User> {
    const { scope } = await this.managed(session, userId, 'disable yourself');
    return this.disableIn(scope, userId);
  }

  async resetPassword(session: Session, userId: string): Promise<UserWithLink> {
    const { user } = await this.managed(session, userId);
    return { user, link: await this.newLink(user.id) };
  }

  /** `user disable` and `user reset-password` of the admin CLI name the person by email. */
  async findForOperator(email: string): Promise<User> {
    const user = await this.store.findByEmail(normalEmail(email));
    if (!user) throw notFound('not_found', `No user has the email ${email.trim().slice(0, MAX_EMAIL_LENGTH)}`);
    return user;
  }

  disableForOperator(user: User): Promise<User> {
    return this.disableIn(tenantOnly(user.customerId), user.id);
  }

  newLinkForOperator(user: User): Promise<SetPasswordLink> {
    return this.newLink(user.id);
  }

  /** Public: the person sets a password from their link; the link is spent, and their sessions end. */
  async setPassword(token: string, password: string): Promise<boolean> {
    checkNewPassword(password);
    const userId = token.length <= 100 ? await this.store.usePasswordToken(hashSecret(token)) : null;
    if (!userId) throw new DomainError(400, 'invalid_link', 'This set-password link is unknown, used or expired; ask an admin for a new one');
    await this.store.setPasswordHash(userId, await hashPassword(password));
    await this.sessions.revokeAllOf(userId);
    return true;
  }

  /** A signed-in person's own display name; an empty one clears it. */
  async setMyName(session: Session, name: string | null | undefined): Promise<User> {
    const person = requirePerson(session);
    const user = await this.store.update(tenantOnly(person.customerId), person.userId, { name: checkedName(name) });
    if (!user) throw authenticationError('session_ended', 'Your account is gone');
    return user;
  }

  /**
   * A signed-in person's own password: the current one is asked again (a wrong one counts towards
   * the account's lock), and their other sessions end.
   */
  async changePassword(session: Session, current: string, next: string, origin: RequestOrigin): Promise<boolean> {
    const person = requirePerson(session);
    checkNewPassword(next);
    const user = await this.store.findById(person.userId);
    if (!user) throw authenticationError('session_ended', 'Your account is gone');
    await this.guard.assertOpen(user, origin);
    if (!(await passwordMatches(current, user.passwordHash))) {
      await this.guard.failed(user, origin, 'invalid_credentials', { during: 'change_password' });
      throw new DomainError(400, 'invalid_credentials', 'The current password is wrong');
    }
    await this.store.setPasswordHash(user.id, await hashPassword(next));
    await this.sessions.revokeAllOf(user.id, person.sessionId);
    return true;
  }

  private async create(scope: TenantScope, input: NewPerson): Promise<UserWithLink> {
    const email = normalEmail(input.email);
    const role = parseRole(input.role);
    const name = checkedName(input.name);
    const user = await this.store.create(scope, { customerId: input.customerId, email, role, name }).catch((error: unknown) => {
      if (isUniqueViolation(error)) throw new DomainError(409, 'email_taken', `A user with the email ${email} already exists`);
      if ((error as { code?: string }).code === 'P2003') throw notFound('not_found', `Customer ${input.customerId} was not found`);
      throw error;
    });
    return { user, link: await this.newLink(user.id) };
  }

  /** The person an admin names, in the admin's tree (404 outside it); never the admin themself when `selfRefusal` says what. */
  private async managed(session: Session, userId: string, selfRefusal?: string): Promise<{ scope: TenantScope; user: User }> {
    session.assert('users.manage');
    const scope = await session.tenantScope();
    const user = plausibleId(userId) ? await this.store.find(scope, userId) : null;
    if (!user) throw userNotFound(userId);
    if (selfRefusal && session.person?.userId === userId) {
      throw authorizationError(`You cannot ${selfRefusal}; ask another admin`, { reason: 'self' });
    }
    return { scope, user };
  }

  private async disableIn(scope: TenantScope, userId: string): Promise<User> {
    const user = await this.store.update(scope, userId, { status: 'disabled' });
    if (!user) throw userNotFound(userId);
    await this.sessions.revokeAllOf(userId);
    return user;
  }

  private async newLink(userId: string): Promise<SetPasswordLink> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + SET_PASSWORD_LINK_SECONDS * 1000);
    await this.store.createPasswordToken(userId, hashSecret(token), expiresAt);
    // In the fragment: browsers send it to no server, so it stays out of access logs and Referer.
    return { url: this.links.console(`/set-password#token=${token}`), expiresAt };
  }
}

/** The person behind a session, for their own account (`account.self`); 403 for an API client (an account is a person's). */
export function requirePerson(session: Session) {
  session.assert('account.self');
  if (!session.person) throw authorizationError('Only a signed-in person has an account', { reason: 'people_only' });
  return session.person;
}
