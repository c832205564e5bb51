import type { Node } from '../../generated/prisma/client.js';

/** A node whose last heartbeat is younger than this counts as healthy and reachable. */
export const HEALTHY_WITHIN_MS = 90_000;
/** Flows received within this window mean the ingest path is up. */
export const INGEST_WITHIN_MS = 5 * 60_000;
/** Older than this and a node is offline rather than degraded. */
export const OFFLINE_AFTER_MS = 15 * 60_000;

type Liveness = Pick<Node, 'controlConnectedAt' | 'controlDisconnectedAt' | 'lastSeenAt' | 'ingestSeenAt'>;

/** Connected now: a control connection is open (opened after the last disconnect). */
export function controlConnected(node: Liveness): boolean {
  if (!node.controlConnectedAt) return false;
  return !node.controlDisconnectedAt || node.controlConnectedAt > node.controlDisconnectedAt;
}

/** `connection.control_plane`: connected now, or heard from within HEALTHY_WITHIN_MS. */
export function controlPlaneUp(node: Liveness, now = Date.now()): boolean {
  return controlConnected(node) || (node.lastSeenAt !== null && now - node.lastSeenAt.getTime() < HEALTHY_WITHIN_MS);
}

export function ingestUp(node: Liveness, now = Date.now()): boolean {
  return node.ingestSeenAt !== null && now - node.ingestSeenAt.getTime() < INGEST_WITHIN_MS;
}

/** `health.status`: healthy, degraded (quiet for a while), offline, or unknown (never heard from). */
export function healthStatus(node: Liveness, now = Date.now()): 'healthy' | 'degraded' | 'offline' | 'unknown' {
  if (!node.lastSeenAt) return controlConnected(node) ? 'healthy' : 'unknown';
  const age = now - node.lastSeenAt.getTime();
  if (age < HEALTHY_WITHIN_MS) return 'healthy';
  return age < OFFLINE_AFTER_MS ? 'degraded' : 'offline';
}
