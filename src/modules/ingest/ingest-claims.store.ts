import { randomUUID } from 'node:crypto';
import type { BatchClaims, ClaimedBatch } from '../../flowstore/insert-queue.js';
import type { Prisma } from '../../infra/database.js';

/**
 * How long a claim holds: well past the longest store of a group (its check and its inserts, each
 * bounded by the flow store's 30 s statement limit). A process that dies holding claims delays
 * those batches' retries by at most this long.
 */
export const CLAIM_LEASE_MS = 5 * 60_000;

/**
 * Claims on collectors' batches in PostgreSQL (ingest_claims), shared by every server process: a
 * batch is inserted by one process at a time. A claim is taken when none is held or the one held
 * has lapsed, in one statement for a whole group of batches.
 */
export class IngestClaimsStore implements BatchClaims {
  /** This process's instance: a restarted process does not own its predecessor's claims. */
  private readonly owner = randomUUID();

  constructor(private readonly prisma: Prisma) {}

  async claim(batches: readonly ClaimedBatch[]): Promise<ReadonlySet<string>> {
    if (!batches.length) return new Set();
    const expiresAt = new Date(Date.now() + CLAIM_LEASE_MS);
    const rows = await this.prisma.$queryRaw<Array<{ token: string }>>`/* ingest.claim */
      INSERT INTO ingest_claims (customer_id, token, owner, expires_at)
      SELECT b.customer_id, b.token, ${this.owner}, ${expiresAt}
      FROM unnest(${batches.map((b) => b.customerId)}::text[], ${batches.map((b) => b.token)}::text[]) AS b (customer_id, token)
      ON CONFLICT (customer_id, token) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
        WHERE ingest_claims.expires_at < now() OR ingest_claims.owner = EXCLUDED.owner
      RETURNING token`;
    return new Set(rows.map((r) => r.token));
  }

  async release(batches: readonly ClaimedBatch[]): Promise<void> {
    if (!batches.length) return;
    await this.prisma.$executeRaw`/* ingest.release */
      DELETE FROM ingest_claims AS c USING unnest(${batches.map((b) => b.customerId)}::text[], ${batches.map((b) => b.token)}::text[]) AS b (customer_id, token)
      WHERE c.customer_id = b.customer_id AND c.token = b.token AND c.owner = ${this.owner}`;
  }
}
