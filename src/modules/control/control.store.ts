import type pg from 'pg';
import type { Node, NodeCommandResult, Prisma as PrismaTypes, Profile } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { LIVE_HOLDER_KEYS_SQL } from './holder-lock.js';
import type { CommandResult } from './protocol.js';

/** A node with the profile its config is made of. */
export type NodeWithProfile = Node & { profile: Profile | null };

/** A channel released because the process holding it is gone: what it held. */
export interface ReleasedChannel {
  id: string;
  customer_id: string;
  session: string;
}

/**
 * Disconnects the nodes (all, or the one `$1` names) whose channel was held by a process that is
 * gone; a session without a key, from before keys, counts as such. Returns what each held.
 */
const RELEASE_ORPHANS_SQL = `/* control.release_orphans */
  UPDATE nodes SET control_session = NULL, control_disconnected_at = now()
  FROM (SELECT id, control_session FROM nodes
        WHERE control_session IS NOT NULL AND ($1::text IS NULL OR id = $1)
          AND split_part(control_session, '.', 1) NOT IN (${LIVE_HOLDER_KEYS_SQL})
        FOR UPDATE) gone
  WHERE nodes.id = gone.id
  RETURNING nodes.id, nodes.customer_id, gone.control_session AS session`;

/**
 * The control channels' columns of `nodes`, and `node_command_results`. These functions take no
 * tenant scope: their caller is the control hub, acting for the channels its process holds, on
 * node ids those channels registered under their own credential (or that processes relay to it).
 * No caller's request reaches them with an id of its own; NodeStore answers those, in scope.
 */
export class ControlStore {
  constructor(
    private readonly prisma: Prisma,
    private readonly pool: pg.Pool,
  ) {}

  /**
   * Records `session` as the node's channel, then runs `whileLocked` before the row's lock is
   * released, so that what it changes changes in the order the row does.
   */
  connect(nodeId: string, session: string, whileLocked: (node: NodeWithProfile) => void): Promise<NodeWithProfile> {
    return this.prisma.$transaction(async (tx) => {
      const node = await tx.node.update({
        where: { id: nodeId },
        data: { controlSession: session, controlConnectedAt: new Date(), lastSeenAt: new Date() },
        include: { profile: true },
      });
      whileLocked(node);
      return node;
    });
  }

  async touch(nodeId: string): Promise<void> {
    await this.prisma.node.updateMany({ where: { id: nodeId }, data: { lastSeenAt: new Date() } });
  }

  /** Ends the node's channel if `session` is still the one the row names: returns the node's owner then, else null. */
  async disconnect(nodeId: string, session: string): Promise<string | null> {
    const { count } = await this.prisma.node.updateMany({
      where: { id: nodeId, controlSession: session },
      data: { controlSession: null, controlDisconnectedAt: new Date() },
    });
    if (count === 0) return null;
    const node = await this.prisma.node.findUnique({ where: { id: nodeId }, select: { customerId: true } });
    return node?.customerId ?? null;
  }

  /** Disconnects the channels (all, or the node's) of processes that are gone. */
  async releaseOrphans(nodeId: string | null): Promise<ReleasedChannel[]> {
    const { rows } = await this.pool.query<ReleasedChannel>(RELEASE_ORPHANS_SQL, [nodeId]);
    return rows;
  }

  /** The channel the row names; waits (FOR SHARE) for a registration still being written. */
  async channelHolder(nodeId: string): Promise<string | null> {
    const [row] = await this.prisma.$queryRaw<Array<{ control_session: string | null }>>`/* control.channel_holder */
      SELECT control_session FROM nodes WHERE id = ${nodeId} FOR SHARE`;
    return row?.control_session ?? null;
  }

  /** The answer to a relayed command, for the process that asked (takeResult). */
  async saveResult(id: string, nodeId: string, result: CommandResult): Promise<void> {
    await this.prisma.nodeCommandResult.create({
      data: { id, nodeId, ok: result.ok, data: (result.data ?? undefined) as PrismaTypes.InputJsonObject | undefined, error: result.error ?? undefined },
    });
  }

  /** Reads and deletes the answer to a relayed command. */
  takeResult(id: string): Promise<NodeCommandResult> {
    return this.prisma.nodeCommandResult.delete({ where: { id } });
  }

  withProfile(nodeId: string): Promise<NodeWithProfile | null> {
    return this.prisma.node.findUnique({ where: { id: nodeId }, include: { profile: true } });
  }

  /** Which of `nodeIds` follow the profile. */
  async following(profileId: string, nodeIds: string[]): Promise<string[]> {
    const nodes = await this.prisma.node.findMany({ where: { id: { in: nodeIds }, profileId }, select: { id: true } });
    return nodes.map((n) => n.id);
  }
}
