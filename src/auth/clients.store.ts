import type { Prisma } from '../infra/database.js';

export interface ClientCredential {
  id: string;
  customerId: string;
  secretHash: Uint8Array;
  scopes: string[];
  active: boolean;
}

/**
 * Credentials are read on every token request and every authenticated call (a revoked client's
 * tokens must stop working), so each process keeps them in memory. The database triggers of
 * the foundation migration announce every change, and `forget` drops the stale entry at once;
 * the TTL only bounds the damage of a lost notification.
 */
export class ClientCredentialCache {
  private entries = new Map<string, { credential: ClientCredential | null; loadedAt: number }>();

  constructor(
    private readonly prisma: Prisma,
    private readonly ttlMs = 30_000,
  ) {}

  async get(clientId: string): Promise<ClientCredential | null> {
    const hit = this.entries.get(clientId);
    if (hit && Date.now() - hit.loadedAt < this.ttlMs) return hit.credential;
    const row = await this.prisma.apiClient.findUnique({ where: { id: clientId } });
    const credential = row && {
      id: row.id,
      customerId: row.customerId,
      secretHash: row.secretHash,
      scopes: row.scopes,
      active: row.revokedAt === null,
    };
    if (this.entries.size > 50_000) this.entries.clear();
    this.entries.set(clientId, { credential, loadedAt: Date.now() });
    return credential;
  }

  forget(clientId: string): void {
    this.entries.delete(clientId);
  }
}
