import { authorizationError, notFound } from '../errors.js';
import { MAX_ID_LENGTH, plausibleId } from '../infra/ids.js';
import { type Action, type Role, type TreeAction, actions, roleAllows, roleScopes } from './actions.js';
import { tenantOnly } from '../tenancy/tenant-scope.js';
import type { TokenClaims } from './tokens.js';

/** Who took an action, as events, triage and the audit log record it. */
export interface Actor {
  kind: 'client' | 'user';
  id: string;
}

/** A person signed in with a session cookie (src/modules/users/sign-in.service.ts). */
export interface PersonClaims {
  userId: string;
  customerId: string;
  role: Role;
  /** The session's public id (`mySessions`), never its cookie value. */
  sessionId: string;
  /** When the session ends unless used again (ms): the sooner of its idle and absolute expiry. */
  expiresAt: number;
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
  /** The API client's token claims; undefined for a person. */
  private readonly token: TokenClaims | undefined;
  /** The person behind a session cookie; undefined for an API client. */
  readonly person: PersonClaims | undefined;

  constructor(
    caller: TokenClaims | PersonClaims,
    private readonly loadScope: (customerId: string) => Promise<TenantScope>,
  ) {
    if ('userId' in caller) this.person = caller;
    else this.token = caller;
  }

  get customerId(): string {
    return (this.person ?? this.token!).customerId;
  }

  get actor(): Actor {
    return this.person ? { kind: 'user', id: this.person.userId } : { kind: 'client', id: this.token!.clientId };
  }

  /** When the caller's credentials end (ms): the token's expiry, or the session's next idle or absolute end. */
  get expiresAt(): number {
    return this.person ? this.person.expiresAt : this.token!.expiresAt * 1000;
  }

  /** The scopes the caller holds: an API client's token's own; a person's, what its role allows (`roleScopes`). */
  get scopes(): readonly string[] {
    return this.person ? roleScopes(this.person.role) : this.token!.scopes;
  }

  /**
   * An API client's token claims. Only the doors of API clients read them (a collector's, whose
   * actions have no role), so a person, refused those actions by `assert`, never gets here.
   */
  get claims(): TokenClaims {
    if (!this.token) throw authorizationError('Only API clients may do this', { reason: 'clients_only' });
    return this.token;
  }

  /**
   * 403 when the caller may not take the action: an API client needs the action's scope
   * (`insufficient_scope` naming it), a person a role that includes it (`insufficient_role`).
   */
  assert(action: Action): void {
    const { scope, role } = actions[action];
    if (this.person) {
      if (!roleAllows(this.person.role, action)) {
        throw authorizationError(role ? `This needs the ${role} role; yours is ${this.person.role}` : 'Only API clients may do this', {
          reason: 'insufficient_role',
          required_role: role,
        });
      }
      return;
    }
    if (scope !== null && !this.token!.scopes.includes(scope)) {
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

  /**
   * The tenants a list reads: the caller's tree, or only the tenant of it `customerId` names
   * (after `assertTenant`: 404 `not_found` outside the tree).
   */
  async listScope(action: TreeAction, customerId?: string | null): Promise<TenantScope> {
    if (customerId === undefined || customerId === null) {
      this.assert(action);
      return this.tenantScope();
    }
    await this.assertTenant(action, customerId);
    return tenantOnly(customerId);
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
