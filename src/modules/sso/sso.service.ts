import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Role } from '../../auth/actions.js';
import type { Session } from '../../auth/session.js';
import { DomainError, badRequest, notFound } from '../../errors.js';
import type { SsoConnection } from '../../generated/prisma/client.js';
import type { PublicLinks } from '../../infra/links.js';
import type { SecretsKey } from '../../infra/secrets-key.js';
import { checkTarget, parseTargetUrl, TargetRefused } from '../automation/targets.js';
import { type RoleRule, checkRoleRules, roleFor } from './role-rules.js';
import { type SsoStore, secretContext } from './sso.store.js';

/** How long a browser may take at the provider before its sign-in is forgotten. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
/** How long a provider's discovered metadata is reused before it is fetched again. */
const DISCOVERY_TTL_MS = 10 * 60_000;
const PROVIDER_TIMEOUT_SECONDS = 10;
export const CALLBACK_PATH = '/auth/sso/callback';
export const START_PATH = '/auth/sso/start';

/** The person a provider vouched for, with the role the tenant's rules give them. */
export interface VerifiedPerson {
  customerId: string;
  email: string;
  role: Role;
  issuer: string;
  subject: string;
  /** Where in the console the person was going (a path under /console). */
  returnTo: string;
}

export interface SsoConnectionInput {
  issuer: string;
  clientId: string;
  /** Required for a new connection; kept when omitted on a change. */
  clientSecret?: string | null;
  groupsClaim?: string | null;
  roleRules: ReadonlyArray<{ group?: string | null; emailDomain?: string | null; role: Role }>;
}

/** A connection as admins read it: never its secret. */
export interface SsoConnectionView {
  customerId: string;
  issuer: string;
  clientId: string;
  groupsClaim: string;
  roleRules: RoleRule[];
  redirectUri: string;
  updatedAt: Date;
}

const ssoFailed = (message: string) => new DomainError(400, 'sso_failed', message);
const hashState = (state: string) => new Uint8Array(createHash('sha256').update(state).digest());

/**
 * Single sign-on with OpenID Connect, one provider per tenant: the authorization code flow with
 * PKCE (S256), a state bound to the browser by a cookie (sso.http.ts) and a nonce bound to the ID
 * token, through openid-client. Admins configure it; the flow ends with the person the provider
 * vouched for, whom the caller signs in.
 */
export class SsoService {
  private discovered = new Map<string, { at: number; updatedAt: number; config: Promise<oidc.Configuration> }>();

  constructor(
    private readonly store: SsoStore,
    private readonly secretsKey: SecretsKey,
    private readonly links: PublicLinks,
    private readonly tenantIsLive: (customerId: string) => Promise<boolean>,
    /** Providers on private or loopback addresses, and over plain http (docs/sso.md). */
    private readonly allowPrivateIssuers: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  redirectUri(): string {
    return `${this.links.base()}${CALLBACK_PATH}`;
  }

  async connection(session: Session, customerId: string): Promise<SsoConnectionView | null> {
    const scope = await session.assertTenant('sso.read', customerId);
    const row = await this.store.find(scope, customerId);
    return row && this.view(row);
  }

  /** Creates or changes a tenant's provider, after checking the provider answers its discovery. */
  async save(session: Session, customerId: string, input: SsoConnectionInput): Promise<SsoConnectionView> {
    const scope = await session.assertTenant('sso.manage', customerId);
    const issuer = await this.checkIssuer(input.issuer);
    const clientId = input.clientId.trim();
    if (!clientId || clientId.length > 255) throw badRequest('invalid_request', 'clientId must be 1 to 255 characters');
    const groupsClaim = input.groupsClaim?.trim() || 'groups';
    if (!/^[A-Za-z0-9_.:/-]{1,100}$/.test(groupsClaim)) throw badRequest('invalid_request', 'groupsClaim must be a claim name such as groups');
    const roleRules = checkRoleRules(input.roleRules);
    const secret = input.clientSecret ?? undefined;
    if (secret !== undefined && (secret.length === 0 || secret.length > 1024)) throw badRequest('invalid_request', 'clientSecret must be 1 to 1024 characters');
    const existing = await this.store.find(scope, customerId);
    if (!existing && secret === undefined)
      throw badRequest('missing_required_fields', 'clientSecret is required for a new connection', { fields: ['clientSecret'] });
    await this.discover(issuer, clientId, secret ?? this.secretOf(existing!)).catch((error: unknown) => {
      throw new DomainError(400, 'sso_provider_unreachable', `The provider at ${issuer} did not answer its OpenID discovery: ${(error as Error).message}`);
    });
    const row = { issuer, clientId, groupsClaim, roleRules };
    const saved =
      secret === undefined
        ? await this.store.update(scope, customerId, row)
        : await this.store.save(scope, customerId, { ...row, clientSecretBox: new Uint8Array(this.secretsKey.seal(secretContext(customerId), secret)) });
    this.discovered.delete(customerId);
    return this.view(saved);
  }

  async remove(session: Session, customerId: string): Promise<boolean> {
    const scope = await session.assertTenant('sso.manage', customerId);
    this.discovered.delete(customerId);
    return this.store.delete(scope, customerId);
  }

  /**
   * A browser starts signing in to `customerId`: the provider's authorization URL, and the state
   * the browser must bring back (sso.http.ts keeps it in a cookie).
   */
  async begin(customerId: string, returnTo: string): Promise<{ location: string; state: string }> {
    const connection = (await this.tenantIsLive(customerId)) ? await this.store.ofTenant(customerId) : null;
    if (!connection) throw notFound('sso_not_configured', 'This tenant has no single sign-on');
    const config = await this.configOf(connection);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await this.store.begin(hashState(state), { customerId, codeVerifier, nonce, returnTo, expiresAt: new Date(this.now() + SIGN_IN_TTL_MS) });
    const location = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(),
      scope: 'openid email profile',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { location: location.href, state };
  }

  /**
   * The provider sent the browser back: the code exchanged (with the PKCE verifier), the ID token
   * checked (issuer, audience, nonce, signature), and the person's role from the tenant's rules.
   * `browserState` is the state the browser kept; a callback that is not this browser's is refused.
   */
  async finish(query: URLSearchParams, browserState: string | undefined): Promise<VerifiedPerson> {
    const state = query.get('state');
    if (!state || state.length > 200) throw ssoFailed('The sign-in came back without its state; start again');
    if (browserState !== state) throw ssoFailed('This sign-in was not started in this browser; start again');
    const pending = await this.store.take(hashState(state), new Date(this.now()));
    if (!pending) throw ssoFailed('This sign-in expired or was already used; start again');
    const error = query.get('error');
    if (error) throw ssoFailed(`The provider refused the sign-in: ${error.slice(0, 100)}`);
    const connection = await this.store.ofTenant(pending.customerId);
    if (!connection || !(await this.tenantIsLive(pending.customerId))) throw notFound('sso_not_configured', 'This tenant has no single sign-on');
    const config = await this.configOf(connection);
    const callback = new URL(this.redirectUri());
    callback.search = query.toString();
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (e) {
      throw ssoFailed(`The provider's answer was refused: ${(e as Error).message}`);
    }
    const email = typeof claims?.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email || claims?.email_verified === false) throw ssoFailed('The provider gave no verified email address for this person');
    const rawGroups = claims?.[connection.groupsClaim];
    const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
    const role = roleFor(connection.roleRules as RoleRule[], { email, groups });
    if (!role) throw new DomainError(403, 'sso_no_role', `No role of this tenant is granted to ${email}; ask an admin to add a rule`);
    return { customerId: pending.customerId, email, role, issuer: connection.issuer, subject: String(claims!.sub), returnTo: pending.returnTo };
  }

  purgeExpired(): Promise<number> {
    return this.store.purgeExpired(new Date(this.now()));
  }

  private view(row: SsoConnection): SsoConnectionView {
    const { customerId, issuer, clientId, groupsClaim, updatedAt } = row;
    return { customerId, issuer, clientId, groupsClaim, roleRules: row.roleRules as RoleRule[], redirectUri: this.redirectUri(), updatedAt };
  }

  private secretOf(row: SsoConnection): string {
    return this.secretsKey.open(secretContext(row.customerId), Buffer.from(row.clientSecretBox));
  }

  private async checkIssuer(raw: string): Promise<string> {
    const url = parseTargetUrl(raw, 'issuer');
    if (url.protocol !== 'https:' && !this.allowPrivateIssuers) throw badRequest('invalid_request', 'issuer must be an https URL');
    if (url.search || url.hash) throw badRequest('invalid_request', 'issuer must have no query or fragment');
    try {
      await checkTarget(url, this.allowPrivateIssuers);
    } catch (error) {
      if (error instanceof TargetRefused)
        throw badRequest('invalid_request', `issuer: ${error.message.replace('AUTOMATION_ALLOW_PRIVATE_TARGETS', 'SSO_ALLOW_PRIVATE_ISSUERS')}`);
      throw error;
    }
    return url.href.replace(/\/$/, '');
  }

  private configOf(connection: SsoConnection): Promise<oidc.Configuration> {
    const cached = this.discovered.get(connection.customerId);
    const updatedAt = connection.updatedAt.getTime();
    if (cached && cached.updatedAt === updatedAt && this.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
    const config = this.discover(connection.issuer, connection.clientId, this.secretOf(connection));
    this.discovered.set(connection.customerId, { at: this.now(), updatedAt, config });
    config.catch(() => this.discovered.delete(connection.customerId));
    return config.catch((error: unknown) => {
      throw new DomainError(502, 'sso_provider_unreachable', `The sign-in provider did not answer: ${(error as Error).message}`);
    });
  }

  private discover(issuer: string, clientId: string, clientSecret: string): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(issuer), clientId, clientSecret, undefined, {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      ...(this.allowPrivateIssuers && issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
  }
}
