import { authorizationError, notFound } from '../errors.js';
import { MAX_ID_LENGTH, plausibleId } from '../infra/ids.js';
import { type Action, type TreeAction, actions } from './actions.js';
import type { TokenClaims } from './tokens.js';

/** Who took an action, as events, triage and the audit log record it. */
export interface Actor {
  kind: 'client' | 'user';
  id: string;
}

/** The tenants a caller may see: itself, and its children when it is a parent MSP. */
export interface TenantScope {
  customerId: string;
  tenantIds: ReadonlySet<string>;
}

/** The 404 of a tenant outside the caller's tree, or gone: as if it did not exist (the id cut to a plausible length). */
export const customerNotFound = (customerId: string) => notFound('not_found', `Customer ${customerId.slice(0, MAX_ID_LENGTH)} was not found`);

/**
 * Who is calling, with which scopes, over which tenants: the one place that answers "may this
 * caller do that", by the actions of actions.ts. Built once per request; the tenant tree is loaded
 * at most once, on first use.
 */
export class Session {
  private scopePromise: Promise<TenantScope> | undefined;

  constructor(
    readonly claims: TokenClaims,
    private readonly loadScope: (customerId: string) => Promise<TenantScope>,
  ) {}

  get customerId(): string {
    return this.claims.customerId;
  }

  get actor(): Actor {
    return { kind: 'client', id: this.claims.clientId };
  }

  /** 403 `insufficient_scope` naming the scope when the token lacks the action's. */
  assert(action: Action): void {
    const { scope } = actions[action];
    if (scope !== null && !this.claims.scopes.includes(scope)) {
      throw authorizationError('Token is missing the required scope', {
        reason: 'insufficient_scope',
        required_scope: scope,
      });
    }
  }

  /**
   * The action on the tenant a request names: the scope first (403), then the tenant, which must be
   * in the caller's tree (404 `not_found` otherwise, as if it did not exist). Resolves to the tree.
   */
  async assertTenant(action: TreeAction, customerId: string): Promise<TenantScope> {
    this.assert(action);
    if (!plausibleId(customerId) || !(await this.canSee(customerId))) {
      throw customerNotFound(customerId);
    }
    return this.tenantScope();
  }

  tenantScope(): Promise<TenantScope> {
    this.scopePromise ??= this.loadScope(this.customerId);
    return this.scopePromise;
  }

  /** Whether a tenant is in the caller's tree, for the actions whose contract answers otherwise than 404 outside it. */
  async canSee(customerId: string): Promise<boolean> {
    return (await this.tenantScope()).tenantIds.has(customerId);
  }
}
