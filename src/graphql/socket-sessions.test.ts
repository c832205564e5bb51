import { EventEmitter } from 'node:events';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { type Caller, seedCaller, seedTenant } from '../../test/kit/seed.js';
import { Session } from '../auth/session.js';
import { newId } from '../infra/ids.js';
import { nodeChangedTopic } from '../modules/nodes/node-events.js';
import { SocketSessions, UNAUTHORIZED_CLOSE } from './socket-sessions.js';

/**
 * How long a test waits for a socket's message or close: they cross a real server and database,
 * and on a loaded 2-core machine the first event of a subscription took over expect.poll's default
 * second.
 */
const SOCKET_EVENT = { timeout: 10_000 };

/** The least of a ws socket SocketSessions uses. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  closedWith?: [number, string];
  close(code: number, reason: string) {
    this.closedWith = [code, reason];
    this.readyState = 3;
    this.emit('close');
  }
}

const sessionUntil = (expiresAt: number) =>
  new Session({ customerId: 'cus_a', clientId: 'cl_a', scopes: [], expiresAt }, async () => ({ tenantIds: new Set(['cus_a']) }) as never);

describe('graphql-ws sockets and their credentials', () => {
  it('closes a socket when its token expires, and leaves a socket without credentials alone', async () => {
    const expiresAt = Date.now() + 200;
    // As the token service does: the token authenticates until it expires.
    const sessions = new SocketSessions(async () => (Date.now() < expiresAt ? sessionUntil(expiresAt / 1000) : undefined));
    const socket = new FakeSocket();
    const anonymous = new FakeSocket();
    await sessions.opened(socket as never, { authorization: 'Bearer t', sessionCookie: null });
    await sessions.opened(anonymous as never, { authorization: null, sessionCookie: null });
    await expect.poll(() => socket.closedWith, SOCKET_EVENT).toEqual([UNAUTHORIZED_CLOSE, 'token expired']);
    expect(anonymous.closedWith).toBeUndefined();
  });

  describe('in the service', () => {
    let t: TestApp;
    let caller: Caller;
    const clients: Client[] = [];
    beforeAll(async () => {
      t = await startTestApp();
      caller = await seedCaller(t.app, (await seedTenant(t.app)).id);
    });
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.dispose()));
      await t.stop();
    });

    const connect = (token: string, closed?: (code: number) => void) => {
      const client = createClient({
        url: t.url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { authorization: `Bearer ${token}` },
        on: { closed: (event) => closed?.((event as { code: number }).code) },
      });
      clients.push(client);
      return client;
    };

    /** A new node of the caller's tenant, watched over a socket opened with `token`, past its first event. */
    const watchNewNode = async (token: string) => {
      const { id } = await t.app.db.prisma.node.create({
        data: {
          id: newId('node'),
          customerId: caller.customerId,
          machineId: newId('m'),
          status: 'active',
          os: 'linux',
          arch: 'arm7',
          collectorVersion: '1.0.0',
        },
      });
      const closes: number[] = [];
      const seen: any[] = [];
      connect(token, (code) => closes.push(code)).subscribe(
        { query: 'subscription($n: String!) { nodeStatus(nodeId: $n) { nodeId latestVersion updateAvailable } }', variables: { n: id } },
        { next: (msg) => seen.push(msg.data?.nodeStatus ?? msg.errors), error: () => undefined, complete: () => undefined },
      );
      await expect.poll(() => seen.length, SOCKET_EVENT).toBe(1);
      return { id, closes, seen };
    };
    const changed = (nodeId: string) => t.app.services.pubsub.publish(nodeChangedTopic, { nodeId });

    it('closes the subscriptions of a revoked client at once', async () => {
      const revoked = await seedCaller(t.app, caller.customerId);
      const { closes } = await watchNewNode(revoked.token);
      await t.app.services.clients.revoke(revoked.clientId);
      await expect.poll(() => closes, SOCKET_EVENT).toEqual([UNAUTHORIZED_CLOSE]);
    });

    it('keeps the subscriptions of another client of the tenant', async () => {
      const other = await seedCaller(t.app, caller.customerId);
      const { id, closes, seen } = await watchNewNode((await seedCaller(t.app, caller.customerId)).token);
      await t.app.services.clients.revoke(other.clientId);
      await changed(id);
      await expect.poll(() => seen.length, SOCKET_EVENT).toBe(2);
      expect(closes).toEqual([]);
    });

    it('reads each event of a subscription afresh: a release published meanwhile shows', async () => {
      const { id, seen } = await watchNewNode(caller.token);
      expect(seen[0]).toMatchObject({ nodeId: id, latestVersion: null, updateAvailable: false });
      await t.app.services.collector.publish({ file: Buffer.from('binary 2.0.0'), version: '2.0.0', channel: 'stable', os: 'linux', arch: 'arm7' });
      await changed(id);
      await expect.poll(() => seen.length, SOCKET_EVENT).toBe(2);
      expect(seen[1]).toMatchObject({ nodeId: id, latestVersion: '2.0.0', updateAvailable: true });
    });
  });
});
