/**
 * What a tenant owns outside PostgreSQL's foreign keys (flows in ClickHouse, live collector
 * connections, ...) is removed by hooks that each domain registers here once; deleting a tenant
 * runs them all before the tenant's rows go. Callers never keep their own list.
 */
export type TenantDeletionHook = (customerId: string) => Promise<void>;

export class TenantDeletionHooks {
  private readonly hooks = new Map<string, TenantDeletionHook>();

  register(name: string, hook: TenantDeletionHook): void {
    if (this.hooks.has(name)) throw new Error(`tenant deletion hook ${name} registered twice`);
    this.hooks.set(name, hook);
  }

  async run(customerId: string): Promise<void> {
    for (const hook of this.hooks.values()) await hook(customerId);
  }
}
