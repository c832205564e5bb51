import { DomainError, authenticationError } from '../errors.js';
import type { RateLimiter, RequestOrigin } from '../infra/rate-limits.js';
import type { ClientCredentialCache } from './clients.store.js';
import { secretMatches } from './secrets.js';
import { Session, type TenantScope } from './session.js';
import type { IssuedToken, TokenService } from './tokens.js';

const invalidCredentials = () => new DomainError(401, 'invalid_credentials', 'Invalid client credentials');

/** Client credentials in, tokens out; bearer tokens in, Sessions out. */
export class AuthService {
  constructor(
    private readonly tokens: TokenService,
    private readonly clients: ClientCredentialCache,
    private readonly loadScope: (customerId: string) => Promise<TenantScope>,
    /** Whether the tenant exists and is not being deleted (the tenant directory, cached). */
    private readonly tenantIsLive: (customerId: string) => Promise<boolean>,
    private readonly limiter: RateLimiter,
  ) {}

  /**
   * The token endpoint: `issueToken` for a request from `origin`, counted per address and per
   * client_id first (429 `rate_limited`), so guessing a secret or burning CPU on hashing is bounded.
   */
  async requestToken(
    origin: RequestOrigin,
    clientId: string | null | undefined,
    clientSecret: string | null | undefined,
    grantType?: string | null,
  ): Promise<IssuedToken> {
    await this.limiter.take('token', origin, clientId);
    return this.issueToken(clientId, clientSecret, grantType);
  }

  async issueToken(clientId: string | null | undefined, clientSecret: string | null | undefined, grantType?: string | null): Promise<IssuedToken> {
    // RFC 6749 5.2: a request naming another grant is refused as such, whatever its credentials.
    if (grantType != null && grantType !== 'client_credentials') {
      throw new DomainError(400, 'unsupported_grant_type', 'grant_type must be client_credentials');
    }
    if (!clientId || !clientSecret || clientId.length > 200 || clientSecret.length > 200) throw invalidCredentials();
    const client = await this.clients.get(clientId);
    if (!client || !client.active || !secretMatches(clientSecret, client.secretHash)) throw invalidCredentials();
    if (!(await this.tenantIsLive(client.customerId))) throw invalidCredentials();
    return this.tokens.issue({ customerId: client.customerId, clientId: client.id, scopes: client.scopes });
  }

  /** The tenant of a client that exists (revoked or not), for filing a refused token request naming it. */
  async tenantOfClient(clientId: string): Promise<string | undefined> {
    if (clientId.length === 0 || clientId.length > 200) return undefined;
    return (await this.clients.get(clientId))?.customerId;
  }

  /** `undefined` when the request carries no credentials at all; a 401 when they are bad. */
  async authenticate(authorization: string | null | undefined): Promise<Session | undefined> {
    if (authorization === null || authorization === undefined || authorization.trim() === '') return undefined;
    const match = /^Bearer[ ]+([A-Za-z0-9\-_.]+)\s*$/i.exec(authorization);
    if (!match) throw authenticationError('invalid_token', 'Authorization header must be "Bearer <token>"');
    const claims = await this.tokens.verify(match[1]);
    const client = await this.clients.get(claims.clientId);
    // A deleted tenant's clients are revoked in the deleting transaction; its directory entry goes
    // in this process before the deletion is answered, so its tokens fail here from that moment
    // on, before the revocation's notification has arrived.
    if (!client || !client.active || client.customerId !== claims.customerId || !(await this.tenantIsLive(client.customerId))) {
      throw authenticationError('client_revoked', 'The credentials behind this token were revoked');
    }
    return new Session(claims, this.loadScope);
  }
}
