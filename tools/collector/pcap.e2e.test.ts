// `collector run --pcap` end to end: Debian's tcpdump captures the test's own loopback traffic (a
// TCP exchange, a UDP exchange, curl against a Node http server), the CLI process meters the file
// into the real service, and the search API returns each flow with what tcpdump itself says was
// on the wire: ports, protocol, packets and IP bytes each way, and the first packet's time.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { startTcpdump } from './meter/testing/tcpdump.js';
import { expectedFlow, readWithTcpdump } from './meter/testing/tcpdump-reference.js';
import { spawnCli } from './testing/cli-process.js';
import { eventually } from './testing/fake-service.js';

const run = promisify(execFile);
const HTTP_BODY = 'z'.repeat(3000);

describe('collector run --pcap against the service', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  const cleanups: Array<() => unknown> = [];

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await t?.stop();
  });

  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'collector-pcap-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  /** A TCP server answering 2,000 bytes to any request, a UDP server answering twice the size, an http server. */
  async function servers() {
    const tcp = createServer((socket) => {
      socket.once('data', () => socket.end('r'.repeat(2000)));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const udp = createSocket('udp4');
    udp.on('message', (message, from) => udp.send(Buffer.alloc(message.length * 2, 0x62), from.port, from.address));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const http = createHttpServer((_req, res) => res.end(HTTP_BODY));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => tcp.close(resolve)));
    cleanups.push(() => udp.close());
    cleanups.push(() => new Promise((resolve) => http.close(resolve)));
    return { tcp: (tcp.address() as AddressInfo).port, udp: udp.address().port, http: (http.address() as AddressInfo).port };
  }

  async function traffic(ports: { tcp: number; udp: number; http: number }) {
    await new Promise<void>((resolve, reject) => {
      const client = connect(ports.tcp, '127.0.0.1', () => client.write('q'.repeat(700)));
      client.on('data', () => undefined);
      client.once('end', () => client.end());
      client.once('close', () => resolve());
      client.once('error', reject);
    });
    const sender = createSocket('udp4');
    await new Promise<void>((resolve) => sender.bind(0, '127.0.0.1', resolve));
    for (const size of [40, 90]) {
      const answered = new Promise((resolve) => sender.once('message', resolve));
      sender.send(Buffer.alloc(size, 0x61), ports.udp, '127.0.0.1');
      await answered;
    }
    sender.close();
    const { stdout } = await run('curl', ['-s', '--max-time', '5', `http://127.0.0.1:${ports.http}/`], { timeout: 10_000 });
    expect(stdout).toBe(HTTP_BODY);
  }

  it('meters a tcpdump capture into stored flows that match the capture, exit 0', async () => {
    const ports = await servers();
    const capture = await startTcpdump({ iface: 'lo', filter: `port ${ports.tcp} or port ${ports.udp} or port ${ports.http}` });
    await traffic(ports).catch(async (error) => {
      await capture.stop();
      throw error;
    });
    const { bytes } = await capture.stop();
    const dir = tempDir();
    const file = join(dir, 'traffic.pcap');
    writeFileSync(file, bytes);
    const seen = await readWithTcpdump(file);

    const machineId = `pcap-${randomUUID()}`;
    const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
      token: tree.mspCaller.token,
      body: { customer_id: tree.childA.id, machine_id: machineId, description: 'pcap e2e' },
    });
    expect(provisioned.status).toBe(201);
    const cli = spawnCli(
      ['run', '--pcap', file, '--base-url', t.url, '--access-key', provisioned.body.access_key, '--machine-id', machineId, '--state-dir', tempDir()],
      cleanups,
    );
    expect(await cli.exited, cli.stderr()).toBe(0);

    const summary = cli.summary();
    expect(summary).toMatchObject({
      machine_id: machineId,
      files: 1,
      packets_read: seen.length,
      packets_decoded: seen.length,
      packets_dropped: { capture: {}, decode: {}, flow_table: {} },
      flows_emitted: 3,
      sent: 3,
      queued: 0,
      failed: 0,
    });
    const events = cli.events();
    expect(events).toContain('control.welcome');
    expect(events).toContain('meter.done');

    const first = Math.min(...seen.map((p) => p.ms));
    const found = await eventually(
      async () => {
        const res = await call(t.url, 'POST', '/search/records/1.0', {
          token: tree.childACaller.token,
          body: {
            instance_ids: [tree.childA.id],
            module: 'flows',
            size: 50,
            start: { absolute: { date: new Date(first - 60_000).toISOString() } },
            end: { absolute: { date: new Date(first + 60_000).toISOString() } },
          },
        });
        expect(res.status).toBe(200);
        return res.body[tree.childA.id].flows.length === 3 ? res.body[tree.childA.id].flows : undefined;
      },
      10_000,
      'the three flows searchable',
    );
    const byServerPort = (port: number) => found.find((f: { dst: { port: number } }) => f.dst.port === port);
    expect(byServerPort(ports.tcp)).toMatchObject(expectedFlow(seen, 'TCP', ports.tcp));
    expect(byServerPort(ports.udp)).toMatchObject(expectedFlow(seen, 'UDP', ports.udp));
    expect(byServerPort(ports.http)).toMatchObject(expectedFlow(seen, 'TCP', ports.http));
    // curl's request, read by the payload inspectors on a port no table names.
    expect(byServerPort(ports.http)).toMatchObject({ app_name: 'HTTP', http: { method: 'GET', host: `127.0.0.1:${ports.http}`, uri: '/' } });
    expect(byServerPort(ports.http).http.user_agent).toMatch(/^curl\//);
    // The UDP exchange: two datagrams each way, the answers twice the size (IP + UDP headers: 28 bytes).
    expect(byServerPort(ports.udp).stats.volume.bytes).toMatchObject({ src: { count: 2, sum: 40 + 90 + 56 }, dst: { count: 2, sum: 80 + 180 + 56 } });
  }, 30_000);
});
