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
    const sessions = new SocketSessions(async () => sessionUntil(Date.now() / 1000 + 0.2));
    const socket = new FakeSocket();
    const anonymous = new FakeSocket();
    await sessions.opened(socket as never, 'Bearer t');
    await sessions.opened(anonymous as never, null);
    await expect.poll(() => socket.closedWith).toEqual([UNAUTHORIZED_CLOSE, 'token expired']);
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

    const nodeStatus = (client: Client, nodeId: string, seen: any[]) =>
      client.subscribe(
        { query: 'subscription($n: String!) { nodeStatus(nodeId: $n) { nodeId latestVersion updateAvailable } }', variables: { n: nodeId } },
        { next: (msg) => seen.push(msg.data?.nodeStatus ?? msg.errors), error: () => undefined, complete: () => undefined },
      );

    const node = async (customerId: string) =>
      t.app.db.prisma.node.create({ data: { id: newId('node'), customerId, machineId: newId('m'), status: 'active', os: 'linux', arch: 'arm7', collectorVersion: '1.0.0' } });

    it('closes the subscriptions of a revoked client at once', async () => {
      const revoked = await seedCaller(t.app, caller.customerId);
      const { id } = await node(caller.customerId);
      const closes: number[] = [];
      const seen: any[] = [];
      nodeStatus(connect(revoked.token, (code) => closes.push(code)), id, seen);
      await expect.poll(() => seen.length).toBe(1);
      await t.app.services.clients.revoke(revoked.clientId);
      await expect.poll(() => closes).toEqual([UNAUTHORIZED_CLOSE]);
    });

    it('keeps the subscriptions of another client of the tenant', async () => {
      const other = await seedCaller(t.app, caller.customerId);
      const kept = await seedCaller(t.app, caller.customerId);
      const { id } = await node(caller.customerId);
      const closes: number[] = [];
      const seen: any[] = [];
      nodeStatus(connect(kept.token, (code) => closes.push(code)), id, seen);
      await expect.poll(() => seen.length).toBe(1);
      await t.app.services.clients.revoke(other.clientId);
      await t.app.services.pubsub.publish(nodeChangedTopic, { nodeId: id });
      await expect.poll(() => seen.length).toBe(2);
      expect(closes).toEqual([]);
    });

    it('reads each event of a subscription afresh: a release published meanwhile shows', async () => {
      const { id } = await node(caller.customerId);
      const seen: any[] = [];
      nodeStatus(connect(caller.token), id, seen);
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]).toMatchObject({ nodeId: id, latestVersion: null, updateAvailable: false });
      await t.app.services.collector.publish({ file: Buffer.from('binary 2.0.0'), version: '2.0.0', channel: 'stable', os: 'linux', arch: 'arm7' });
      await t.app.services.pubsub.publish(nodeChangedTopic, { nodeId: id });
      await expect.poll(() => seen.length).toBe(2);
      expect(seen[1]).toMatchObject({ nodeId: id, latestVersion: '2.0.0', updateAvailable: true });
    });
  });
});
