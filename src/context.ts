import type { Session } from './auth/session.js';
import { DomainError, authenticationError } from './errors.js';
import type { Loaders } from './graphql/loaders.js';
import type { Prisma } from './infra/database.js';
import type { RequestOrigin } from './infra/rate-limits.js';
import type { Services } from './services.js';

/** What every resolver and every rest-compat route sees for one request (made by graphql/envelope.ts). */
export interface Context {
  requestId: string;
  prisma: Prisma;
  services: Services;
  auth: RequestAuth;
  loaders: Loaders;
  /** Where the request came from, for the rate limits of the anonymous endpoints. */
  origin: RequestOrigin;
  /** The request's User-Agent (cut to 500 characters), for the audit log. */
  userAgent: string | null;
  /** The HTTP response of a yoga request, where sign-in sets its cookie; absent for graphql-ws and REST. */
  http?: HttpExchange;
}

/** What sign-in and sign-out need of the HTTP exchange beyond GraphQL. */
export interface HttpExchange {
  userAgent: string | null;
  /** Whether the request carries the CSRF header (sign-in asks for it: no site may sign a browser in to another account). */
  csrfSafe: boolean;
  setCookie(header: string): void;
}

/** A request's session cookie (`bd_session`), for the doors that take one (GraphQL, graphql-ws; never REST). */
interface SessionCookie {
  value: string;
  /**
   * Whether the request shows it is not forged by another site: it carries `x-graphql-yoga-csrf`
   * (a header no cross-site form or link can add), or it is a graphql-ws upgrade from this origin.
   */
  csrfSafe: boolean;
  authenticate(value: string): Promise<Session | undefined>;
}

export const CSRF_HEADER = 'x-graphql-yoga-csrf';

export const csrfHeaderRequired = () =>
  new DomainError(403, 'csrf_header_required', `A request signed in with the session cookie, or signing in, must carry the header ${CSRF_HEADER}: 1`);

/**
 * The caller of one request, resolved lazily (public operations never touch the header) and at
 * most once: a bearer token when the request has an Authorization header, else a person's session
 * cookie. A bad header fails only the operations that need a caller.
 */
export class RequestAuth {
  private resolved: Promise<Session | undefined> | undefined;
  /** The cookie named a session that ended (signed out, expired, revoked): worth saying so. */
  private cookieEnded = false;

  constructor(
    private readonly authorization: string | null,
    private readonly authenticate: (header: string | null) => Promise<Session | undefined>,
    readonly cookie?: SessionCookie,
  ) {}

  /** The caller, `undefined` without credentials; rejects with a 401 for bad credentials. */
  session(): Promise<Session | undefined> {
    this.resolved ??= this.resolve();
    return this.resolved;
  }

  /**
   * The caller when an operation of this request already asked for it and it was valid; never
   * authenticates by itself, so recording a public operation costs no token check (the audit log).
   */
  async known(): Promise<Session | undefined> {
    return this.resolved?.catch(() => undefined);
  }

  async requireSession(): Promise<Session> {
    const session = await this.session();
    if (session) return session;
    if (this.cookieEnded) throw authenticationError('session_ended', 'Your session ended (signed out, expired or revoked): sign in again');
    throw authenticationError('missing_token', 'Authentication required');
  }

  private async resolve(): Promise<Session | undefined> {
    if ((this.authorization ?? '').trim() !== '' || !this.cookie) return this.authenticate(this.authorization);
    if (!this.cookie.csrfSafe) {
      throw csrfHeaderRequired();
    }
    const session = await this.cookie.authenticate(this.cookie.value);
    this.cookieEnded = !session;
    return session;
  }
}
