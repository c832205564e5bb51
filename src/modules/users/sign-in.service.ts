import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../auth/secrets.js';
import { type Role, roleAllows } from '../../auth/actions.js';
import { Session, type TenantScope } from '../../auth/session.js';
import type { SignInSettings } from '../../config.js';
import { DomainError, notFound } from '../../errors.js';
import type { User, UserSession } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import type { RateLimiter, RequestOrigin } from '../../infra/rate-limits.js';
import { passwordMatches } from './passwords.js';
import type { SecondFactorService, SecondFactorUsed } from './second-factor.service.js';
import { type SignInGuard, lockedOut } from './sign-in-guard.js';
import type { UserSessionStore } from './user-sessions.store.js';
import { requirePerson } from './users.service.js';
import type { UserStore } from './users.store.js';

interface SignInInput {
  email: string;
  password: string;
  totpCode?: string | null;
  recoveryCode?: string | null;
}

/** A sign-in that passed: the cookie value (shown once, to be set as the cookie) and its session. */
export interface SignedIn {
  user: User;
  cookieValue: string;
  session: UserSession;
}

type SignInOutcome = SignedIn | { secondFactorRequired: true };

/** A session cookie's value: 256 random bits, base64url. Anything else is not looked up. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

const invalidCredentials = (message = 'The email or password is wrong') => new DomainError(401, 'invalid_credentials', message);

/**
 * Signing people in and their sessions. A session is a random cookie value, stored as SHA-256,
 * with an absolute end (SESSION_MAX_SECONDS after sign-in) and an idle end (SESSION_IDLE_SECONDS
 * after its last use); every sign-in makes a new one (no fixation). Failed sign-ins lock the
 * account after SIGN_IN_MAX_FAILURES in a row, and every attempt counts against its address.
 */
export class SignInService {
  constructor(
    private readonly users: UserStore,
    private readonly sessions: UserSessionStore,
    private readonly secondFactor: SecondFactorService,
    private readonly limiter: RateLimiter,
    private readonly guard: SignInGuard,
    private readonly loadScope: (customerId: string) => Promise<TenantScope>,
    private readonly tenantIsLive: (customerId: string) => Promise<boolean>,
    readonly settings: SignInSettings,
  ) {}

  async signIn(origin: RequestOrigin, userAgent: string | null, input: SignInInput): Promise<SignInOutcome> {
    await this.limiter.take('sign_in', origin).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'rate_limited')
        throw lockedOut(new Date(Date.now() + Number(error.headers['retry-after']) * 1000), 'address');
      throw error;
    });
    const email = input.email.trim().toLowerCase();
    const user = email.length <= 254 ? await this.users.findByEmail(email) : null;
    if (user) await this.guard.assertOpen(user, origin);
    if (!(await passwordMatches(input.password, user?.passwordHash)) || !user) {
      if (user) await this.guard.failed(user, origin, 'invalid_credentials');
      throw invalidCredentials();
    }
    if (user.status !== 'active' || !(await this.tenantIsLive(user.customerId))) {
      await this.guard.failed(user, origin, 'disabled');
      throw invalidCredentials('This account is disabled; ask an admin of your organization');
    }
    let factor: SecondFactorUsed | null = null;
    if (user.totpBox) {
      if (!input.totpCode && !input.recoveryCode) return { secondFactorRequired: true };
      factor = await this.secondFactor.verify(user, input);
      if (!factor) {
        await this.guard.failed(user, origin, 'invalid_second_factor');
        throw invalidCredentials('The code is wrong or was already used');
      }
    }
    return this.openSession(user, origin, userAgent, { method: 'password', second_factor: factor });
  }

  /**
   * A new session for a person who proved who they are (a password, or their organization's
   * single sign-on): always a new random id, never one the browser brought.
   */
  async openSession(
    user: User,
    origin: RequestOrigin,
    userAgent: string | null,
    how: { method: 'password' | 'oidc'; second_factor?: SecondFactorUsed | null },
  ): Promise<SignedIn> {
    await this.users.recordSignIn(user.id);
    const cookieValue = randomBytes(32).toString('base64url');
    const session = await this.sessions.create({
      tokenHash: hashSecret(cookieValue),
      userId: user.id,
      customerId: user.customerId,
      address: origin.address,
      userAgent: userAgent?.slice(0, 300) ?? null,
      expiresAt: new Date(Date.now() + this.settings.sessionMaxSeconds * 1000),
    });
    await this.guard.record(user, 'signed_in', { session_id: session.id, address: origin.address, ...how });
    return { user, cookieValue, session };
  }

  /** A sign-in refused after its person was known (single sign-on of a disabled person), as an event. */
  refused(user: User, origin: RequestOrigin, reason: string) {
    return this.guard.failed(user, origin, reason);
  }

  /** The person a session cookie speaks for; undefined when it names no session in force. */
  async authenticate(cookieValue: string): Promise<Session | undefined> {
    if (!COOKIE_VALUE.test(cookieValue)) return undefined;
    const row = await this.sessions.findByToken(hashSecret(cookieValue));
    const now = Date.now();
    if (!row || row.revokedAt || row.expiresAt.getTime() <= now || this.idleEnd(row.lastSeenAt) <= now) return undefined;
    if (row.user.status !== 'active' || !(await this.tenantIsLive(row.user.customerId))) return undefined;
    await this.sessions.touch(row.id, row.lastSeenAt, this.settings.sessionIdleSeconds);
    return new Session(
      {
        userId: row.userId,
        customerId: row.user.customerId,
        role: row.user.role as Role,
        sessionId: row.id,
        expiresAt: Math.min(row.expiresAt.getTime(), this.idleEnd(new Date(now))),
      },
      this.loadScope,
    );
  }

  /** Ends the session of a cookie; false when it named none in force. */
  async signOut(cookieValue: string, origin: RequestOrigin): Promise<boolean> {
    if (!COOKIE_VALUE.test(cookieValue)) return false;
    const ended = await this.sessions.revokeByToken(hashSecret(cookieValue));
    if (!ended) return false;
    const user = await this.users.findById(ended.userId);
    if (user) await this.guard.record(user, 'signed_out', { session_id: ended.id, address: origin.address });
    return true;
  }

  mySessions(session: Session): Promise<UserSession[]> {
    return this.sessions.listOf(requirePerson(session).userId, this.settings.sessionIdleSeconds);
  }

  async userSessions(session: Session, userId: string): Promise<UserSession[]> {
    session.assert('sessions.manage');
    return this.sessions.listInScope(await session.tenantScope(), userId, this.settings.sessionIdleSeconds);
  }

  /** A person ends one of their own sessions; an admin (sessions.manage) any session of their tree. */
  async revoke(session: Session, id: string): Promise<boolean> {
    if (!plausibleId(id)) throw notFound('not_found', 'Session was not found');
    if (session.person && (await this.sessions.revoke(session.person.userId, id))) return true;
    // A person who may not manage sessions learns nothing of other people's: theirs is not found.
    if (session.person && !roleAllows(session.person.role, 'sessions.manage')) throw notFound('not_found', `Session ${id} was not found`);
    session.assert('sessions.manage');
    const row = await this.sessions.findInScope(await session.tenantScope(), id);
    if (!row) throw notFound('not_found', `Session ${id} was not found`);
    await this.sessions.revoke(row.userId, id);
    return true;
  }

  /** When a session last used at `lastSeenAt` ends if unused (ms). */
  idleEnd(lastSeenAt: Date): number {
    return lastSeenAt.getTime() + this.settings.sessionIdleSeconds * 1000;
  }

  purgeEnded(): Promise<number> {
    return this.sessions.purgeEnded(this.settings.sessionIdleSeconds);
  }
}
