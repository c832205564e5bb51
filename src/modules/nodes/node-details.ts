import DataLoader from 'dataloader';
import type { Node } from '../../generated/prisma/client.js';
import type { NodeStore } from './nodes.store.js';

/** What a node's fields need besides its own row (read with it: NodeStore). */
export interface NodeDetails {
  customerName: string | null;
  profile: { name: string; services: unknown } | null;
  /** The release line it follows (nodeChannel). */
  channel: string;
  /** The newest installable release of its line for its platform, if any. */
  latestVersion: string | null;
}

/** The release line a node follows: its own reported channel, else its profile's, else stable. */
export function nodeChannel(node: Pick<Node, 'updateChannel'>, profileChannel: string | null | undefined): string {
  return node.updateChannel ?? profileChannel ?? 'stable';
}

/**
 * Per request. A list reads its nodes with their details and primes them here, so that each field
 * of each node then reads them synchronously (`known`): awaiting a loader per field was ~20,000
 * promise turns for a list of 1,000 nodes, most of its time. A single node's fields go through
 * the batch loader, one statement per batch.
 */
export class NodeDetailsLoader {
  private readonly loaded = new Map<string, NodeDetails>();
  private readonly loader: DataLoader<Node, NodeDetails, string>;

  constructor(store: NodeStore) {
    this.loader = new DataLoader(
      async (nodes) => {
        const details = await store.detailsOf(nodes);
        return nodes.map((node) => {
          const found = details.get(node.id);
          if (!found) return new Error(`node ${node.id} is gone`);
          this.loaded.set(node.id, found);
          return found;
        });
      },
      { cacheKeyFn: (node) => node.id },
    );
  }

  /** The node's details when this request has read them already. */
  known(node: Node): NodeDetails | undefined {
    return this.loaded.get(node.id);
  }

  load(node: Node): Promise<NodeDetails> {
    return this.loader.load(node);
  }

  /** Details read along with their nodes (NodeStore.listOfKind). */
  prime(listed: ReadonlyArray<{ node: Node; details: NodeDetails }>): void {
    for (const { node, details } of listed) this.loaded.set(node.id, details);
  }
}
