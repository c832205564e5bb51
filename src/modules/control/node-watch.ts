import type { Session } from '../../auth/session.js';
import type { Node } from '../../generated/prisma/client.js';
import type { Logger } from '../../infra/logger.js';
import { type EventStream, type PubSub, eventStream } from '../../infra/pubsub.js';
import type { NodeService } from '../nodes/nodes.service.js';
import { nodeChangedTopic } from '../nodes/node-events.js';

/**
 * A node as it changes: its current state first, then a fresh read after every change announced
 * by any process (connects, disconnects, activation). Re-reads are chained so they emit in order.
 */
export async function watchNode(
  session: Session,
  nodeId: string,
  deps: { nodes: NodeService; pubsub: PubSub; logger: Logger },
): Promise<AsyncIterableIterator<Node>> {
  await deps.nodes.get(session, nodeId);
  let unsubscribe = () => {};
  const stream: EventStream<Node> = eventStream(() => unsubscribe());
  let chain = Promise.resolve();
  const refresh = () => {
    chain = chain
      .then(async () => stream.push(await deps.nodes.get(session, nodeId)))
      .catch((error) => {
        deps.logger.warn('nodes.watch_ended', { nodeId, error });
        stream.end();
      });
  };
  unsubscribe = await deps.pubsub.subscribe(nodeChangedTopic, (event) => event.nodeId === nodeId && refresh());
  refresh();
  return stream.iterator;
}
