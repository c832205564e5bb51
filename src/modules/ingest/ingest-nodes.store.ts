import type { Node } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

/**
 * The nodes ingest stamps batches for, always within the one tenant of the credential sending them
 * (ingest never writes for another tenant, not even a child): the tenant is every statement's first
 * condition.
 */
export class IngestNodeStore {
  constructor(private readonly prisma: Prisma) {}

  /** A node of the tenant, by id. */
  find(customerId: string, nodeId: string): Promise<Node | null> {
    return this.prisma.node.findFirst({ where: { customerId, id: nodeId } });
  }

  /** The tenant's node enrolled with (or sharing) this API client. */
  ofClient(customerId: string, clientId: string): Promise<Node | null> {
    return this.prisma.node.findFirst({ where: { customerId, clientId } });
  }

  /** Records that the node's flows arrived (`nodes.ingest_seen_at`). */
  async markSeen(customerId: string, nodeId: string, at: Date): Promise<void> {
    await this.prisma.node.updateMany({ where: { customerId, id: nodeId }, data: { ingestSeenAt: at } });
  }
}
