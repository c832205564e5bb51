import type { Tenant } from '../generated/prisma/client.js';
import type { TenantStore } from './tenants.store.js';

/**
 * The tenant tree, cached in memory: every authenticated call needs the caller's tree, and
 * tenants change rarely. Writes in this process invalidate at once; writes anywhere else arrive
 * through the `tenant_changed` notification. A load that overlaps an invalidation is not kept,
 * so a stale read can never outlive the change that made it stale. A tenant being deleted is
 * neither found nor listed.
 */
export class TenantDirectory {
  private tenants = new Map<string, Promise<Tenant | null>>();
  private children = new Map<string, Promise<Tenant[]>>();
  private version = 0;

  constructor(private readonly store: TenantStore) {}

  get(id: string): Promise<Tenant | null> {
    return this.cached(this.tenants, id, () => this.store.find(id));
  }

  /** Children oldest first (creation time, then id), as the deployments list shows them. */
  childrenOf(parentId: string): Promise<Tenant[]> {
    return this.cached(this.children, parentId, () => this.store.childrenOf(parentId));
  }

  /** `tenant_changed` payload: `<id>,<parent id or empty>`. */
  invalidate(id: string, parentId?: string | null): void {
    this.version++;
    this.tenants.delete(id);
    this.children.delete(id);
    if (parentId) this.children.delete(parentId);
  }

  handleNotification(payload: string): void {
    const [id, parentId] = payload.split(',');
    this.invalidate(id, parentId || null);
  }

  private cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit) return hit;
    const startedAt = this.version;
    const loading = load();
    map.set(key, loading);
    loading.then(
      () => {
        if (this.version !== startedAt && map.get(key) === loading) map.delete(key);
      },
      () => map.delete(key),
    );
    if (map.size > 100_000) map.clear();
    return loading;
  }
}
