import { checkKnownScopes } from '../../auth/clients.service.js';
import { generateSecret, hashSecret } from '../../auth/secrets.js';
import { type Session, type TenantScope, customerNotFound } from '../../auth/session.js';
import { DomainError, authorizationError, badRequest, notFound } from '../../errors.js';
import { MAX_ID_LENGTH, plausibleId } from '../../infra/ids.js';
import { nameProblem } from '../../infra/text.js';
import { tenantOnly } from '../../tenancy/tenant-scope.js';
import type { ApiClientFilter, ApiClientRow, ApiClientStore } from './api-clients.store.js';

export const API_CLIENT_LIMITS = {
  /** Characters of a description, after trimming. */
  description: 200,
  /** Active clients of kind `api` per tenant; collector credentials are bounded by their nodes instead. */
  activePerTenant: 100,
  /** Clients one list answers, newest first. */
  listed: 500,
} as const;

/** The kind of the clients this door creates; `provision` and `device` are a collector's enrolment credentials. */
const KIND = 'api';

/** A client just created, with its `<client_id>.<client_secret>`: the only time the secret is shown. */
export interface CreatedApiClient {
  client: ApiClientRow;
  secret: string;
  accessKey: string;
}

const clientNotFound = (clientId: string) => notFound('not_found', `API client ${clientId.slice(0, MAX_ID_LENGTH)} was not found`);

function checkedDescription(description: string): string {
  const trimmed = description.trim();
  if (!trimmed) throw badRequest('invalid_request', 'description must not be empty: say who or what uses the client', { field: 'description' });
  const problem = nameProblem(trimmed, API_CLIENT_LIMITS.description);
  if (problem) throw badRequest('invalid_request', `description ${problem}`, { field: 'description' });
  return trimmed;
}

/** The scopes asked for, once each, each a known scope (400 naming those that are not). */
function knownScopesOnce(scopes: readonly string[]): string[] {
  const wanted = [...new Set(scopes)];
  checkKnownScopes(wanted);
  return wanted;
}

/** The scopes asked for, once each: known, and each held by the caller itself (a caller never hands out more than it has). */
function checkedScopes(session: Session, scopes: readonly string[]): string[] {
  if (scopes.length === 0) throw badRequest('invalid_request', 'scopes must name at least one scope', { field: 'scopes' });
  const wanted = knownScopesOnce(scopes);
  const notHeld = wanted.filter((s) => !session.scopes.includes(s));
  if (notHeld.length) {
    throw authorizationError(`You cannot grant scopes you do not hold yourself: ${notHeld.join(', ')}`, { reason: 'scope_not_held', scopes: notHeld });
  }
  return wanted;
}

/**
 * API clients for the admins of a tree (docs/api-clients.md): listed without their secrets,
 * created with a secret shown once and stored hashed, revoked so that their tokens stop working
 * at once. The admin CLI's `client` commands do the same for an operator, on any tenant.
 */
export class ApiClientService {
  constructor(
    private readonly store: ApiClientStore,
    /** Drops this process's cached credential; other processes hear of it through the table's trigger. */
    private readonly forgetCredential: (clientId: string) => void,
  ) {}

  async list(session: Session, customerId: string, filter: ApiClientFilter = {}): Promise<ApiClientRow[]> {
    const scope = await session.assertTenant('clients.read', customerId);
    return this.store.list(scope, customerId, API_CLIENT_LIMITS.listed, filter);
  }

  async create(session: Session, input: { customerId: string; description: string; scopes: readonly string[] }): Promise<CreatedApiClient> {
    const scope = await session.assertTenant('clients.manage', input.customerId);
    return this.insert(scope, input.customerId, checkedDescription(input.description), checkedScopes(session, input.scopes));
  }

  /**
   * The admin CLI's door (`client create`): an operator acts on any tenant and may grant any known
   * scope, and the description may be left out; the tenant's limit of active clients holds as it
   * does for an admin.
   */
  async createAsOperator(input: { customerId: string; description?: string; scopes: readonly string[] }): Promise<CreatedApiClient> {
    const scopes = knownScopesOnce(input.scopes);
    const description = input.description === undefined ? null : checkedDescription(input.description);
    return this.insert(tenantOnly(input.customerId), input.customerId, description, scopes);
  }

  private async insert(scope: TenantScope, customerId: string, description: string | null, scopes: string[]): Promise<CreatedApiClient> {
    const secret = generateSecret();
    const outcome = await this.store.createUnlessFull(
      scope,
      { customerId, secretHash: hashSecret(secret), scopes, description, kind: KIND },
      API_CLIENT_LIMITS.activePerTenant,
    );
    if ('refused' in outcome) {
      if (outcome.refused === 'tenant_gone') throw customerNotFound(customerId);
      throw new DomainError(
        409,
        'client_limit_reached',
        `A tenant may have at most ${API_CLIENT_LIMITS.activePerTenant} active API clients; revoke one it no longer needs`,
      );
    }
    return { client: outcome.created, secret, accessKey: `${outcome.created.id}.${secret}` };
  }

  /**
   * Revokes a client of the tree: its tokens are refused from now on, in this process at once.
   * A collector's credential may be revoked too: its node is cut off until enrolled again. The
   * credential of the request itself may not: that is how a script locks itself out.
   */
  async revoke(session: Session, clientId: string): Promise<ApiClientRow> {
    session.assert('clients.manage');
    const { actor } = session;
    if (actor.kind === 'client' && actor.id === clientId) {
      throw badRequest('invalid_request', 'You cannot revoke the API client this request is made with; revoke it with another client or in the console', {
        field: 'clientId',
      });
    }
    const scope = await session.tenantScope();
    const client = plausibleId(clientId) ? await this.store.revoke(scope, clientId) : null;
    if (!client) throw clientNotFound(clientId);
    this.forgetCredential(client.id);
    return client;
  }
}
