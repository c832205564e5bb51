import { authorizationError } from '../errors.js';
import type { TokenClaims } from './tokens.js';

/** The tenants a caller may see: itself, and its children when it is a parent MSP. */
export interface TenantScope {
  customerId: string;
  tenantIds: ReadonlySet<string>;
}

/**
 * Who is calling, with which scopes, over which tenants: the one place that answers "may this
 * caller do that". Built once per request; the tenant tree is loaded at most once, on first use.
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

  hasScope(scope: string): boolean {
    return this.claims.scopes.includes(scope);
  }

  requireScope(scope: string): void {
    if (!this.hasScope(scope)) {
      throw authorizationError('Token is missing the required scope', {
        reason: 'insufficient_scope',
        required_scope: scope,
      });
    }
  }

  tenantScope(): Promise<TenantScope> {
    this.scopePromise ??= this.loadScope(this.customerId);
    return this.scopePromise;
  }

  async canSee(customerId: string): Promise<boolean> {
    return (await this.tenantScope()).tenantIds.has(customerId);
  }
}
