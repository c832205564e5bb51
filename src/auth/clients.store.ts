import type { ApiClient } from '../generated/prisma/client.js';
import type { Prisma } from '../infra/database.js';
import { generateClientId } from './secrets.js';

export interface ClientCredential {
  id: string;
  customerId: string;
  secretHash: Uint8Array;
  scopes: string[];
  active: boolean;
}

/** A client to issue: its secret already hashed (ClientService). */
export type NewClient = Pick<ApiClient, 'customerId' | 'secretHash' | 'scopes' | 'description' | 'kind'>;

/**
 * `api_clients`. Clients are looked up by their id alone: a token request names nothing else, and
 * the id is what the secret is checked against. The tenant a new client belongs to has been
 * checked by its caller; listing takes the tenant whose clients it lists.
 */
export class ClientStore {
  constructor(private readonly prisma: Prisma) {}

  create(client: NewClient): Promise<ApiClient> {
    return this.prisma.apiClient.create({ data: { id: generateClientId(), ...client } });
  }

  /** Oldest first. */
  list(customerId: string): Promise<ApiClient[]> {
    return this.prisma.apiClient.findMany({ where: { customerId }, orderBy: { createdAt: 'asc' } });
  }

  find(clientId: string): Promise<ApiClient | null> {
    return this.prisma.apiClient.findUnique({ where: { id: clientId } });
  }

  revoke(clientId: string): Promise<ApiClient> {
    return this.prisma.apiClient.update({ where: { id: clientId }, data: { revokedAt: new Date() } });
  }
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
    private readonly store: ClientStore,
    private readonly ttlMs = 30_000,
  ) {}

  async get(clientId: string): Promise<ClientCredential | null> {
    const hit = this.entries.get(clientId);
    if (hit && Date.now() - hit.loadedAt < this.ttlMs) return hit.credential;
    const row = await this.store.find(clientId);
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
