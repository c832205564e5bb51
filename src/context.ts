import type { Session } from './auth/session.js';
import { authenticationError } from './errors.js';
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
}

/**
 * The caller of one request, resolved lazily (public operations never touch the header) and at
 * most once. A bad header fails only the operations that need a caller.
 */
export class RequestAuth {
  private resolved: Promise<Session | undefined> | undefined;

  constructor(
    private readonly authorization: string | null,
    private readonly authenticate: (header: string | null) => Promise<Session | undefined>,
  ) {}

  /** The caller, `undefined` without credentials; rejects with a 401 for bad credentials. */
  session(): Promise<Session | undefined> {
    this.resolved ??= this.authenticate(this.authorization);
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
    if (!session) throw authenticationError('missing_token', 'Authentication required');
    return session;
  }
}
