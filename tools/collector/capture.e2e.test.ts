// `collector run --capture IFACE` end to end: two namespaces joined by a veth; the CLI process runs
// inside one (reaching the real service through a loopback bridge) and captures on its veth end
// while a client there talks TCP and UDP to servers in the other. tcpdump on the far end records
// the same packets as the reference. The TCP flow leaves at its FINs, the UDP flow when idle: with
// no packet on the veth to move the flow table on, the wall-clock timer does, while the run goes on.
// --seconds ends the run: exit 0, and the search API returns each flow with the ports, packets and
// IP bytes tcpdump read.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { startTcpdump } from './meter/testing/tcpdump.js';
import { expectedFlow, readWithTcpdump } from './meter/testing/tcpdump-reference.js';
import { spawnCli } from './testing/cli-process.js';
import { eventually } from './testing/fake-service.js';
import { bridgeLoopback, createNamespacePair, type NamespacePair, startPeer } from './testing/netns.js';

/** Long enough for the process to start, connect and capture the traffic; the flows are flushed when it ends. */
const RUN_SECONDS = 15;

describe('collector run --capture against the service', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let pair: NamespacePair;
  let dir: string;
  const cleanups: Array<() => unknown> = [];

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    dir = mkdtempSync(join(tmpdir(), 'collector-live-e2e-'));
    pair = await createNamespacePair('hcap');
  }, 30_000);
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await pair?.remove();
    rmSync(dir, { recursive: true, force: true });
    await t?.stop();
  });

  it('meters TCP and UDP on a veth into stored flows that match tcpdump, exit 0 after --seconds', async () => {
    const servers = startPeer(pair.b, ['serve', pair.b.address]);
    cleanups.push(() => servers.kill());
    const ports = (await servers.line()) as { tcp: number; udp: number };
    const reference = await startTcpdump({ iface: pair.b.iface, filter: `port ${ports.tcp} or port ${ports.udp}`, wrapper: pair.b.exec });
    const bridge = await bridgeLoopback(pair.a, Number(new URL(t.url).port), join(dir, 'service.sock'));
    cleanups.push(() => bridge.close());

    const machineId = `live-${randomUUID()}`;
    const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
      token: tree.mspCaller.token,
      body: { customer_id: tree.childA.id, machine_id: machineId, description: 'live capture e2e' },
    });
    expect(provisioned.status).toBe(201);
    const started = Date.now();
    const args = ['run', '--capture', pair.a.iface, '--seconds', String(RUN_SECONDS), '--idle-timeout', '2', '--base-url', `http://127.0.0.1:${bridge.port}`];
    const cli = spawnCli([...args, '--access-key', provisioned.body.access_key, '--machine-id', machineId, '--state-dir', join(dir, 'state')], cleanups, { prefix: pair.a.exec });
    await eventually(() => cli.stderr().includes('"meter.listening"'), 10_000, 'the collector capturing');

    const client = startPeer(pair.a, ['client', pair.b.address, String(ports.tcp), String(ports.udp)]);
    const clientPorts = (await client.line()) as { tcp: number; udp: number };
    const { bytes, droppedByKernel } = await reference.stop();
    expect(droppedByKernel).toBe(0);
    writeFileSync(join(dir, 'reference.pcap'), bytes);
    const seen = await readWithTcpdump(join(dir, 'reference.pcap'));

    const search = async () => {
      const res = await call(t.url, 'POST', '/search/records/1.0', {
        token: tree.childACaller.token,
        body: { instance_ids: [tree.childA.id], module: 'flows', size: 50, start: { absolute: { date: new Date(started - 60_000).toISOString() } }, end: { absolute: { date: new Date(Date.now() + 60_000).toISOString() } } },
      });
      expect(res.status).toBe(200);
      return res.body[tree.childA.id].flows as Array<{ dst: { port: number } }>;
    };
    const found = await eventually(
      async () => {
        const flows = await search();
        return flows.some((f) => f.dst.port === ports.tcp) && flows.some((f) => f.dst.port === ports.udp) ? flows : undefined;
      },
      RUN_SECONDS * 1000,
      'the TCP and UDP flows searchable',
    );
    // Stored before the run ended: the idle UDP flow left on the wall clock, not at the final flush.
    expect(cli.running()).toBe(true);

    expect(await cli.exited, cli.stderr()).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(RUN_SECONDS * 1000);
    const summary = cli.summary();
    expect(summary).toMatchObject({
      machine_id: machineId,
      interfaces: [{ name: pair.a.iface, dropped_by_kernel: 0, dropped_by_interface: 0 }],
      packets_dropped: { capture: {}, flow_table: {} },
      queued: 0,
      failed: 0,
    });
    // The veth also carries IPv6 neighbour discovery: more packets and flows than the test's own.
    expect(summary.packets_read).toBeGreaterThanOrEqual(seen.length);
    expect(summary.interfaces[0].captured).toBe(summary.packets_read);
    expect(summary.sent).toBe(summary.flows_emitted);
    expect(summary.flows_emitted).toBeGreaterThanOrEqual(2);

    const byServerPort = (port: number) => found!.find((f) => f.dst.port === port) as unknown as { '@timestamp': number };
    for (const [proto, port, client] of [['TCP', ports.tcp, clientPorts.tcp], ['UDP', ports.udp, clientPorts.udp]] as const) {
      const { '@timestamp': firstSeen, ...reference } = expectedFlow(seen, proto, port);
      expect(byServerPort(port)).toMatchObject({ ...reference, src: { ip: pair.a.address, port: client }, dst: { ip: pair.b.address } });
      // The reference stamps packets at the far end of the veth, a few microseconds apart: the same millisecond or the next.
      expect(Math.abs(byServerPort(port)['@timestamp'] - firstSeen)).toBeLessThanOrEqual(1);
    }
    // The UDP exchange: two datagrams each way, the answers twice the size (IP + UDP headers: 28 bytes).
    expect(byServerPort(ports.udp)).toMatchObject({ stats: { volume: { bytes: { src: { count: 2, sum: 40 + 90 + 56 }, dst: { count: 2, sum: 80 + 180 + 56 } } } } });
    expect(byServerPort(ports.tcp)).toMatchObject({ path: [{ sensor: { id: machineId, interface: pair.a.iface } }] });
  }, 60_000);
});
