import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocketServer, type WebSocket } from 'ws';
import type { AuthService } from '../../auth/auth.service.js';
import type { Session } from '../../auth/session.js';
import { DomainError } from '../../errors.js';
import type { Node } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import { PeriodicJob } from '../../infra/jobs.js';
import type { Logger } from '../../infra/logger.js';
import { type PubSub, topic } from '../../infra/pubsub.js';
import { type EventRecorder, noEvents } from '../events/events.service.js';
import { nodeChangedTopic } from '../nodes/node-events.js';
import type { NodeService } from '../nodes/nodes.service.js';
import { deliveredServices } from '../profiles/services-defaults.js';
import { ChannelClosed, CollectorConnection, CommandTimeout } from './connection.js';
import type { ControlStore, NodeWithProfile } from './control.store.js';
import { HolderLock, heldSession } from './holder-lock.js';
import {
  CloseCode,
  type CommandResult,
  HEARTBEAT_INTERVAL_S,
  HELLO_TIMEOUT_MS,
  type Hello,
  LAST_SEEN_WRITE_MS,
  MAX_FRAME_BYTES,
  MAX_HELLO_BYTES,
  checkedResult,
  collectorMessage,
  refusalReason,
} from './protocol.js';

export const CONTROL_PATH = '/collector/control/1.0';

interface RelayedCommand {
  id: string;
  nodeId: string;
  name: string;
  args: Record<string, unknown>;
  deadline: number;
}

/** Connection changes, for the `nodeStatus` subscription and other processes' channels. */
export interface NodeConnectionEvent {
  nodeId: string;
  customerId: string;
  session: string;
  connected: boolean;
}

export const nodeConnectionTopic = topic<NodeConnectionEvent>('node_connection');

/** How often a process checks its own holder lock and releases the channels of processes gone. */
const HOLDER_CHECK_MS = 30_000;

const commandTopic = topic<RelayedCommand>('node_command');
const resultTopic = topic<{ id: string }>('node_command_result');

export class NotConnected extends Error {}
export { ChannelClosed, CommandTimeout };

/**
 * The service end of every collector control channel held by this process, and the relay that
 * lets any process command a collector whose channel another process holds.
 */
export class ControlHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly connections = new Map<string, CollectorConnection>();
  private readonly relayed = new Map<string, (result: CommandResult) => void>();
  private readonly stops: Array<() => unknown> = [];
  /** Disconnect bookkeeping still being written; stop() waits for it before the database closes. */
  private readonly closing = new Set<Promise<void>>();
  private readonly holder: HolderLock;
  private readonly holderCheck: PeriodicJob;

  constructor(
    private readonly db: Database,
    private readonly store: ControlStore,
    private readonly pubsub: PubSub,
    private readonly auth: AuthService,
    private readonly nodes: NodeService,
    private readonly logger: Logger,
    private readonly events: EventRecorder = noEvents,
  ) {
    this.holder = new HolderLock(db.url, (error) => this.holderLost(error));
    this.holderCheck = new PeriodicJob('control.holder_check', HOLDER_CHECK_MS, () => this.checkHolders(), logger);
  }

  async start(): Promise<void> {
    // Before any channel is accepted: held channels are tagged with the lock's key, and what a
    // previous incarnation of this process (or any other process gone) held is released.
    await this.checkHolders();
    this.holderCheck.start();
    this.stops.push(
      await this.pubsub.subscribe(commandTopic, (cmd) => this.background('control.forward_failed', { commandId: cmd.id }, this.forward(cmd))),
      await this.pubsub.subscribe(resultTopic, ({ id }) => this.background('control.relay_collect_failed', { commandId: id }, this.collectRelayed(id))),
      await this.pubsub.subscribe(nodeConnectionTopic, (event) =>
        this.background('control.replaced_check_failed', { nodeId: event.nodeId }, this.dropIfReplaced(event)),
      ),
      await this.db.listen('node_config_changed', (nodeId) => this.background('control.push_config_failed', { nodeId }, this.pushConfig(nodeId))),
      await this.db.listen('profile_changed', (profileId) => this.background('control.push_profile_failed', { profileId }, this.pushProfile(profileId))),
      await this.db.listen('auth_client_changed', (clientId) => this.dropClient(clientId)),
    );
  }

  async stop(): Promise<void> {
    await this.holderCheck.stop();
    for (const stop of this.stops.splice(0)) await stop();
    for (const connection of this.connections.values()) connection.ws.close(CloseCode.shuttingDown, 'server stopping');
    this.wss.close();
    while (this.closing.size) await Promise.all([...this.closing]);
    await this.holder.release();
  }

  /** Upgrades `GET /collector/control/1.0` after checking the bearer token (scope ingest). */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    let session: Session | undefined;
    try {
      session = await this.auth.authenticate(req.headers.authorization);
      if (!session) throw new DomainError(401, 'authentication_error', 'Authentication required');
      session.assert('collector.control');
    } catch (error) {
      const status = error instanceof DomainError ? error.status : 500;
      socket.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Unauthorized'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const authenticated = session;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, authenticated));
  }

  isHeldHere(nodeId: string): boolean {
    return this.connections.has(nodeId);
  }

  /** Channels this process holds (/metrics: collector_control_connections). */
  get heldCount(): number {
    return this.connections.size;
  }

  /**
   * Sends a command to a node's collector, wherever its channel is held, and waits for the
   * answer until `timeoutMs`. Throws NotConnected, CommandTimeout or ChannelClosed.
   */
  async command(node: Node, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandResult> {
    const id = newId('cmd');
    const deadline = Date.now() + timeoutMs;
    const local = this.connections.get(node.id);
    if (local) return local.command(id, name, args, deadline);
    // A channel whose process is gone would never answer: release it and say so now.
    if (!node.controlSession || (await this.releaseOrphans(node.id)) > 0) throw new NotConnected(node.id);
    return new Promise<CommandResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.relayed.delete(id);
        reject(new CommandTimeout(`no answer to ${name} by its deadline`));
      }, timeoutMs);
      this.relayed.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      this.pubsub.publish(commandTopic, { id, nodeId: node.id, name, args, deadline }).catch((error) => {
        clearTimeout(timer);
        this.relayed.delete(id);
        reject(error);
      });
    });
  }

  private accept(ws: WebSocket, session: Session): void {
    let connection: CollectorConnection | undefined;
    let greeted = false;
    const helloTimer = setTimeout(() => ws.close(CloseCode.protocol, 'no hello in time'), HELLO_TIMEOUT_MS);
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return ws.close(CloseCode.protocol, 'frames must be JSON text');
      if (!greeted && frameBytes(raw) > MAX_HELLO_BYTES) return ws.close(CloseCode.protocol, `hello must be at most ${MAX_HELLO_BYTES} bytes`);
      let message;
      try {
        message = collectorMessage.parse(JSON.parse(raw.toString()));
      } catch (error) {
        return ws.close(CloseCode.protocol, refusalReason(error));
      }
      if (!greeted) {
        if (message.type !== 'hello') return ws.close(CloseCode.protocol, 'hello must come first');
        greeted = true;
        clearTimeout(helloTimer);
        this.hello(ws, session, message, (opened) => (connection = opened)).catch((error) => this.refuse(ws, error));
        return;
      }
      // Frames that arrive while the hello is still being processed carry nothing to lose.
      if (!connection) return;
      if (message.type === 'heartbeat')
        this.heartbeat(connection).catch((error) => this.logger.warn('control.heartbeat_failed', { nodeId: connection!.nodeId, error }));
      else if (message.type === 'result') connection.settle(message.id, checkedResult({ ok: message.ok, data: message.data, error: message.error }));
    });
    ws.on('close', () => {
      clearTimeout(helloTimer);
      if (connection) this.track(this.closed(connection));
    });
    ws.on('error', (error) => this.logger.warn('control.socket_error', { error }));
  }

  /** Registers the node, then `onOpen` before the welcome: results may follow it at once. */
  private async hello(ws: WebSocket, session: Session, hello: Hello, onOpen: (c: CollectorConnection) => void): Promise<void> {
    const facts = {
      machineId: hello.machine_id,
      hostname: hello.hostname,
      collectorVersion: hello.collector_version,
      updateChannel: hello.update_channel,
      os: hello.os,
      arch: hello.arch,
      localIp: hello.local_ip,
      publicIp: hello.public_ip,
      hardware: hello.hardware ?? undefined,
      services: hello.services ?? undefined,
    };
    const registered =
      hello.kind === 'legacy'
        ? await this.nodes.legacyRegister(session, { machineId: hello.machine_id, hostname: hello.hostname })
        : await this.nodes.register(session, facts);
    const holderKey = await this.holderKey();
    if (holderKey === undefined) return ws.close(CloseCode.restart, 'holder lock lost');
    const connection = new CollectorConnection(ws, registered.id, session.claims.clientId, heldSession(holderKey));
    // Under the row's lock, so that this process's map changes in the order the row does: of two
    // channels registering at once, the one the row names last is the one kept.
    const node = await this.store.connect(registered.id, connection.session, (updated) => {
      this.connections.get(updated.id)?.ws.close(CloseCode.replaced, 'replaced');
      this.connections.set(updated.id, connection);
      onOpen(connection);
    });
    connection.lastSeenWrite = Date.now();
    if (ws.readyState !== ws.OPEN) {
      this.track(this.closed(connection));
      return;
    }
    // The lock was lost meanwhile: another process may already have released this row.
    if (this.holder.key !== holderKey) return ws.close(CloseCode.restart, 'holder lock lost');
    connection.send({
      type: 'welcome',
      node_id: node.id,
      status: node.status,
      heartbeat_interval_s: HEARTBEAT_INTERVAL_S,
      config: configOf(node),
    });
    await this.pubsub.publish(nodeConnectionTopic, { nodeId: node.id, customerId: node.customerId, session: connection.session, connected: true });
    await this.pubsub.publish(nodeChangedTopic, { nodeId: node.id });
    await this.events.record({
      customerId: node.customerId,
      topic: 'node_lifecycle',
      kind: 'node_connected',
      subject: node.id,
      data: { node_id: node.id, hostname: node.hostname, collector_version: node.collectorVersion, os: node.os, arch: node.arch },
    });
    this.logger.info('control.connected', { nodeId: node.id, customerId: node.customerId });
  }

  private refuse(ws: WebSocket, error: unknown): void {
    if (error instanceof DomainError) {
      ws.send(JSON.stringify({ type: 'error', code: error.code, message: error.message }));
      ws.close(
        error.status === 401 ? CloseCode.unauthenticated : error.status === 403 || error.status === 409 ? CloseCode.forbidden : CloseCode.protocol,
        error.code,
      );
      return;
    }
    this.logger.error('control.hello_failed', { error });
    ws.close(1011, 'internal error');
  }

  private async heartbeat(connection: CollectorConnection): Promise<void> {
    if (Date.now() - connection.lastSeenWrite < LAST_SEEN_WRITE_MS) return;
    connection.lastSeenWrite = Date.now();
    await this.store.touch(connection.nodeId);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error) => this.logger.error('control.disconnect_failed', { error })).finally(() => this.closing.delete(tracked));
    this.closing.add(tracked);
  }

  private async closed(connection: CollectorConnection): Promise<void> {
    connection.failAll();
    if (this.connections.get(connection.nodeId) === connection) this.connections.delete(connection.nodeId);
    const customerId = await this.store.disconnect(connection.nodeId, connection.session);
    if (customerId) await this.announceDisconnected(connection.nodeId, customerId, connection.session);
  }

  private async announceDisconnected(nodeId: string, customerId: string, session: string): Promise<void> {
    await this.pubsub.publish(nodeConnectionTopic, { nodeId, customerId, session, connected: false });
    await this.pubsub.publish(nodeChangedTopic, { nodeId });
    await this.events.record({ customerId, topic: 'node_lifecycle', kind: 'node_disconnected', subject: nodeId, data: { node_id: nodeId } });
    this.logger.info('control.disconnected', { nodeId });
  }

  /**
   * The key of this process's holder lock. Just after the lock was lost a collector may come back
   * before the next lock is taken: it waits for that, rather than be refused. Undefined when no
   * lock can be taken (the database is out of reach).
   */
  private async holderKey(): Promise<number | undefined> {
    if (this.holder.key === undefined) await this.holderCheck.trigger();
    return this.holder.key;
  }

  /** Renews this process's holder lock, then releases what processes that are gone held. */
  private async checkHolders(): Promise<void> {
    await this.holder.renew();
    await this.releaseOrphans();
  }

  /** Returns how many nodes were released. */
  private async releaseOrphans(nodeId: string | null = null): Promise<number> {
    const rows = await this.store.releaseOrphans(nodeId);
    for (const row of rows) await this.announceDisconnected(row.id, row.customer_id, row.session);
    return rows.length;
  }

  /**
   * Another process may now release what this one holds: its channels close, and their collectors
   * reconnect under the next lock, taken at once.
   */
  private holderLost(error: Error): void {
    this.logger.error('control.holder_lock_lost', { error });
    for (const connection of this.connections.values()) connection.ws.close(CloseCode.restart, 'holder lock lost');
    void this.holderCheck.trigger();
  }

  /** Work an event handler starts and nobody awaits: a failure is logged, never left to end the process. */
  private background(failure: string, fields: Record<string, unknown>, work: Promise<void>): void {
    work.catch((error) => this.logger.error(failure, { ...fields, error }));
  }

  /**
   * Another channel for a node this process holds has registered. Events can arrive late (this
   * may announce a channel that `local` itself replaced), so the row decides which one is newer.
   */
  private async dropIfReplaced({ nodeId, session, connected }: NodeConnectionEvent): Promise<void> {
    const local = this.connections.get(nodeId);
    if (!connected || !local || local.session === session) return;
    // The read waits for a registration still being written (hello holds the row's lock).
    if ((await this.store.channelHolder(nodeId)) !== local.session) local.ws.close(CloseCode.replaced, 'replaced');
  }

  /** Another process asked for a command on a channel this process may hold. */
  private async forward(cmd: RelayedCommand): Promise<void> {
    const connection = this.connections.get(cmd.nodeId);
    if (!connection) return;
    let result: CommandResult;
    try {
      result = await connection.command(cmd.id, cmd.name, cmd.args, cmd.deadline);
    } catch (error) {
      if (error instanceof CommandTimeout) return;
      result = { ok: false, error: { code: 'not_connected', message: (error as Error).message } };
    }
    await this.store.saveResult(cmd.id, cmd.nodeId, result);
    await this.pubsub.publish(resultTopic, { id: cmd.id });
  }

  private async collectRelayed(id: string): Promise<void> {
    const resolve = this.relayed.get(id);
    if (!resolve) return;
    this.relayed.delete(id);
    const row = await this.store.takeResult(id);
    resolve({ ok: row.ok, data: row.data as Record<string, unknown> | null, error: row.error as CommandResult['error'] });
  }

  private async pushConfig(nodeId: string): Promise<void> {
    const connection = this.connections.get(nodeId);
    if (!connection) return;
    const node = await this.store.withProfile(nodeId);
    if (node) connection.send({ type: 'config', config: configOf(node) });
  }

  private async pushProfile(profileId: string): Promise<void> {
    const held = [...this.connections.keys()];
    if (!held.length) return;
    for (const id of await this.store.following(profileId, held)) await this.pushConfig(id);
  }

  /** A revoked credential's channels close at once. */
  private dropClient(clientId: string): void {
    for (const connection of this.connections.values()) {
      if (connection.clientId === clientId) connection.ws.close(CloseCode.unauthenticated, 'credential revoked');
    }
  }
}

function configOf(node: NodeWithProfile) {
  return {
    profile_id: node.profileId,
    update_channel: node.updateChannel ?? node.profile?.updateChannel ?? 'stable',
    services: deliveredServices(node.profile?.services),
  };
}

/** A text frame's size as ws hands it over (one buffer, fragments, or an ArrayBuffer). */
function frameBytes(raw: RawData): number {
  if (Array.isArray(raw)) return raw.reduce((sum, part) => sum + part.length, 0);
  return raw.byteLength;
}
