import { topic } from '../../infra/pubsub.js';

/** Anything a node's watchers should re-read: connection, status, reported facts. */
export const nodeChangedTopic = topic<{ nodeId: string }>('node_changed');
