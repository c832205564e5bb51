import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { type Role, roles } from '../../auth/actions.js';
import type { Session } from '../../auth/session.js';
import { DomainError, badRequest, notFound } from '../../errors.js';
import type { OidcProvider, User } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import type { PublicLinks } from '../../infra/links.js';
import type { RateLimiter, RequestOrigin } from '../../infra/rate-limits.js';
import { TargetRefused, checkTarget } from '../automation/targets.js';
import type { SecretsKey } from '../../infra/secrets-key.js';
import { nameProblem } from '../../infra/text.js';
import { tenantOnly } from '../../tenancy/tenant-scope.js';
import type { OidcStore, RoleRule } from './oidc.store.js';
import type { SignInService, SignedIn } from './sign-in.service.js';
import { MAX_NAME_LENGTH, normalEmail, parseRole } from './users.service.js';
import type { UserStore } from './users.store.js';

export const OIDC_START_PATH = '/auth/oidc/start';
export const OIDC_CALLBACK_PATH = '/auth/oidc/callback';
/** How long a person has to get through their provider's sign-in. */
const LOGIN_SECONDS = 600;
const MAX_RULES = 50;

/** What the client secret is sealed under: its tenant, so a box copied to another row does not open. */
export const oidcSecretContext = (customerId: string) => `oidc-client-secret:${customerId}`;

const hashState = (state: string) => createHash('sha256').update(state).digest();

interface OidcInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
  roleRules: Array<{ group?: string | null; emailDomain?: string | null; role: string }>;
  defaultRole?: string | null;
}

/**
 * An issuer is https on a public address: a tenant's admin chooses it, and the server fetches it
 * from inside our network, so a private one would let them probe internal services (SSRF, as for
 * webhooks). With OIDC_ALLOW_PRIVATE_ISSUERS, private addresses too, and http on this machine (a
 * provider inside the operator's network, or under test).
 */
async function issuerUrl(issuer: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw badRequest('invalid_request', 'issuer must be a URL', { field: 'issuer' });
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && allowPrivate)) {
    throw badRequest('invalid_request', 'issuer must be an https URL', { field: 'issuer' });
  }
  try {
    await checkTarget(url, allowPrivate, undefined, 'OIDC_ALLOW_PRIVATE_ISSUERS');
  } catch (error) {
    if (!(error instanceof TargetRefused)) throw error;
    throw badRequest('invalid_request', `issuer: ${error.message}`, { field: 'issuer' });
  }
  return url;
}

const signOnFailed = (message: string) => new DomainError(403, 'authorization_error', message, { details: { reason: 'single_sign_on' } });

/**
 * Single sign-on with OpenID Connect, configured per tenant: the authorization code flow with
 * PKCE (S256), a state and a nonce, through `openid-client`. The person comes back with an ID
 * token whose email (verified) names them; the tenant's rules map a group or the email's domain
 * to a role. A person the tenant does not have yet is created with that role; one it has keeps
 * their account, their role set from the rules at each sign-on.
 */
export class OidcService {
  private readonly configurations = new Map<string, { at: Date; config: Promise<client.Configuration> }>();

  constructor(
    private readonly store: OidcStore,
    private readonly users: UserStore,
    private readonly signIn: SignInService,
    private readonly secretsKey: SecretsKey,
    private readonly links: PublicLinks,
    private readonly limiter: RateLimiter,
    private readonly allowPrivateIssuers: boolean,
  ) {}

  /** An admin sets their tenant's provider; the provider's discovery document must answer. */
  async configure(session: Session, customerId: string, input: OidcInput): Promise<OidcProvider> {
    const scope = await session.assertTenant('users.manage', customerId);
    const issuer = await issuerUrl(input.issuer.trim(), this.allowPrivateIssuers);
    if (!input.clientId.trim() || input.clientId.length > 500) throw badRequest('invalid_request', 'clientId is required', { field: 'clientId' });
    if (!input.clientSecret || input.clientSecret.length > 1000) throw badRequest('invalid_request', 'clientSecret is required', { field: 'clientSecret' });
    if (input.roleRules.length > MAX_RULES) throw badRequest('invalid_request', `at most ${MAX_RULES} role rules`, { field: 'roleRules' });
    const roleRules: RoleRule[] = input.roleRules.map((rule) => {
      const role = parseRole(rule.role);
      if (rule.group && !rule.emailDomain) return { group: rule.group, role };
      if (rule.emailDomain && !rule.group) return { email_domain: rule.emailDomain.trim().toLowerCase().replace(/^@/, ''), role };
      throw badRequest('invalid_request', 'each role rule names a group or an emailDomain, not both', { field: 'roleRules' });
    });
    await this.discover(issuer, input.clientId.trim(), input.clientSecret).catch((error: unknown) => {
      throw badRequest('invalid_request', `The issuer's discovery document could not be read: ${(error as Error).message}`, { field: 'issuer' });
    });
    this.configurations.delete(customerId);
    return this.store.save(scope, customerId, {
      issuer: issuer.href,
      clientId: input.clientId.trim(),
      clientSecretBox: this.secretsKey.seal(oidcSecretContext(customerId), input.clientSecret),
      roleRules,
      defaultRole: input.defaultRole ? parseRole(input.defaultRole) : null,
    });
  }

  async configuration(session: Session, customerId: string): Promise<OidcProvider | null> {
    return this.store.findInScope(await session.assertTenant('users.read', customerId), customerId);
  }

  /**
   * Where the person's browser goes to sign on with their tenant's provider, and the state the
   * browser keeps (oidc.http.ts sets it in a cookie) to show the callback is its own. A start writes
   * a row, so it counts against the address as a sign-in attempt does.
   */
  async start(customerId: string, origin: RequestOrigin): Promise<{ url: URL; state: string }> {
    await this.limiter.take('sign_in', origin);
    const provider = plausibleId(customerId) ? await this.store.find(customerId) : null;
    if (!provider) throw notFound('not_found', 'This organization has no single sign-on');
    const config = await this.configOf(provider);
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    await this.store.startLogin({ stateHash: hashState(state), customerId, codeVerifier, nonce, expiresAt: new Date(Date.now() + LOGIN_SECONDS * 1000) });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(),
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state };
  }

  /**
   * The provider sent the person back: the code is exchanged, the ID token checked, the person
   * signed in. `browserState` is the state this browser kept at the start: a callback link made
   * for another browser (an attacker's own sign-on, planted to sign the victim in as the attacker)
   * is refused before it is spent.
   */
  async callback(currentUrl: URL, browserState: string | null, origin: RequestOrigin, userAgent: string | null): Promise<SignedIn> {
    const state = currentUrl.searchParams.get('state');
    if (state && state !== browserState) throw badRequest('invalid_request', 'This sign-on was not started in this browser: start again');
    const login = state && state.length <= 200 ? await this.store.takeLogin(hashState(state)) : null;
    if (!login) throw badRequest('invalid_request', 'This sign-on is unknown, used or expired: start again');
    const provider = await this.store.find(login.customerId);
    if (!provider) throw badRequest('invalid_request', 'This organization no longer has single sign-on');
    if (currentUrl.searchParams.has('error')) {
      throw signOnFailed(`Your organization's sign-on refused: ${currentUrl.searchParams.get('error_description') ?? currentUrl.searchParams.get('error')}`);
    }
    const callbackUrl = new URL(this.redirectUri());
    callbackUrl.search = currentUrl.search;
    const tokens = await client
      .authorizationCodeGrant(await this.configOf(provider), callbackUrl, {
        pkceCodeVerifier: login.codeVerifier,
        expectedState: state!,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      })
      .catch((error: unknown) => {
        throw signOnFailed(`Your organization's sign-on could not be completed: ${(error as Error).message}`);
      });
    const claims = tokens.claims()!;
    if (typeof claims.email !== 'string' || claims.email_verified === false) throw signOnFailed('Your organization’s sign-on gave no verified email');
    const email = normalEmail(claims.email);
    const groups = Array.isArray(claims.groups) ? claims.groups.filter((g): g is string => typeof g === 'string') : [];
    const role = roleFor(provider, email, groups);
    if (!role) throw signOnFailed('Your organization’s sign-on gives you no role here; ask an admin');
    const user = await this.person(login.customerId, email, role, nameClaim(claims.name));
    if (user.status !== 'active') {
      await this.signIn.refused(user, origin, 'disabled');
      throw signOnFailed('This account is disabled; ask an admin of your organization');
    }
    return this.signIn.openSession(user, origin, userAgent, { method: 'oidc' });
  }

  /**
   * The tenant's person of that email, made or given the role the rules say, and named by the
   * sign-on's `name` claim while they have no name (one they set themself stays theirs).
   */
  private async person(customerId: string, email: string, role: Role, name: string | null): Promise<User> {
    const scope = tenantOnly(customerId);
    const existing = await this.users.findByEmail(email);
    if (existing && existing.customerId !== customerId) throw signOnFailed('This email belongs to a person of another organization');
    if (!existing) return this.users.create(scope, { customerId, email, role, name });
    const change = { ...(existing.role === role ? {} : { role }), ...(existing.name === null && name ? { name } : {}) };
    if (Object.keys(change).length === 0) return existing;
    return (await this.users.update(scope, existing.id, change))!;
  }

  private redirectUri(): string {
    return `${this.links.base()}${OIDC_CALLBACK_PATH}`;
  }

  /** The provider's discovered configuration, kept per tenant until the tenant changes it. */
  private configOf(provider: OidcProvider): Promise<client.Configuration> {
    const held = this.configurations.get(provider.customerId);
    if (held && held.at.getTime() === provider.updatedAt.getTime()) return held.config;
    const secret = this.secretsKey.open(oidcSecretContext(provider.customerId), provider.clientSecretBox);
    const config = this.discover(new URL(provider.issuer), provider.clientId, secret);
    config.catch(() => this.configurations.delete(provider.customerId));
    this.configurations.set(provider.customerId, { at: provider.updatedAt, config });
    return config;
  }

  private async discover(issuer: URL, clientId: string, clientSecret: string): Promise<client.Configuration> {
    const insecure = issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
    return client.discovery(issuer, clientId, clientSecret, undefined, { ...insecure, timeout: 10 });
  }
}

/** The ID token's `name` claim as a display name, or null when it is absent or not one we would store. */
function nameClaim(claim: unknown): string | null {
  if (typeof claim !== 'string') return null;
  const trimmed = claim.trim();
  return trimmed && !nameProblem(trimmed, MAX_NAME_LENGTH) ? trimmed : null;
}

/** The first rule that matches, else the default role, else none. */
export function roleFor(provider: Pick<OidcProvider, 'roleRules' | 'defaultRole'>, email: string, groups: readonly string[]): Role | null {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  for (const rule of provider.roleRules as unknown as RoleRule[]) {
    if ((rule.group !== undefined && groups.includes(rule.group)) || (rule.email_domain !== undefined && rule.email_domain === domain))
      return rule.role as Role;
  }
  return provider.defaultRole && (roles as readonly string[]).includes(provider.defaultRole) ? (provider.defaultRole as Role) : null;
}
