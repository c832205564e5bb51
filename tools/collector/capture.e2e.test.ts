// `collector run --capture IFACE` end to end: two namespaces joined by a veth; the CLI process runs
// inside one (reaching the real service through a loopback bridge) and captures on its veth end
// while a client there talks TCP and UDP to servers in the other. tcpdump on the far end records
// the same packets as the reference. The TCP flow leaves at its FINs, the UDP flow when idle: with
// no packet on the veth to move the flow table on, the wall-clock timer does, while the run goes on.
// --seconds ends the run: exit 0, and the search API returns each flow with the ports, packets and
// IP bytes tcpdump read, and the collector's own connection with the process /proc names as its owner.

import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { startTcpdump } from './meter/testing/tcpdump.js';
import { expectedFlow, readWithTcpdump } from './meter/testing/tcpdump-reference.js';
import { startCliInNamespace } from './testing/cli-in-namespace.js';
import { eventually } from './testing/fake-service.js';
import { createNamespacePair, type NamespacePair, startPeer } from './testing/netns.js';

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
    const started = Date.now();
    // Also the namespace's lo, which carries the collector's own connection to the bridge: two interfaces, one flow table.
    const args = ['--capture', pair.a.iface, '--capture', 'lo', '--seconds', String(RUN_SECONDS), '--idle-timeout', '2'];
    const { cli, machineId, bridgePort } = await startCliInNamespace({ t, tree, end: pair.a, dir, args, cleanups });
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
        body: {
          instance_ids: [tree.childA.id],
          module: 'flows',
          size: 50,
          start: { absolute: { date: new Date(started - 60_000).toISOString() } },
          end: { absolute: { date: new Date(Date.now() + 60_000).toISOString() } },
        },
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
      interfaces: [
        { name: pair.a.iface, dropped_by_kernel: 0, dropped_by_interface: 0 },
        { name: 'lo', dropped_by_kernel: 0, dropped_by_interface: 0 },
      ],
      packets_dropped: { capture: {}, flow_table: {} },
      queued: 0,
      failed: 0,
    });
    // The veth also carries IPv6 neighbour discovery: more packets and flows than the test's own.
    expect(summary.packets_read).toBeGreaterThanOrEqual(seen.length);
    expect(summary.interfaces[0].captured + summary.interfaces[1].captured).toBe(summary.packets_read);
    expect(summary.interfaces[1].captured).toBeGreaterThan(0);
    expect(summary.sent).toBe(summary.flows_emitted);
    expect(summary.flows_emitted).toBeGreaterThanOrEqual(2);

    const byServerPort = (port: number) => found!.find((f) => f.dst.port === port) as unknown as { '@timestamp': number };
    for (const [proto, port, client] of [
      ['TCP', ports.tcp, clientPorts.tcp],
      ['UDP', ports.udp, clientPorts.udp],
    ] as const) {
      const { '@timestamp': firstSeen, ...reference } = expectedFlow(seen, proto, port);
      expect(byServerPort(port)).toMatchObject({ ...reference, src: { ip: pair.a.address, port: client }, dst: { ip: pair.b.address } });
      // The reference stamps packets at the far end of the veth, a few microseconds apart: the same millisecond or the next.
      expect(Math.abs(byServerPort(port)['@timestamp'] - firstSeen)).toBeLessThanOrEqual(1);
    }
    // The UDP exchange: two datagrams each way, the answers twice the size (IP + UDP headers: 28 bytes).
    expect(byServerPort(ports.udp)).toMatchObject({
      stats: { volume: { bytes: { src: { count: 2, sum: 40 + 90 + 56 }, dst: { count: 2, sum: 80 + 180 + 56 } } } },
    });
    expect(byServerPort(ports.tcp)).toMatchObject({ path: [{ sensor: { id: machineId, interface: `${pair.a.iface},lo` } }] });
    // Nothing of the far namespace is this host's: no process on the servers' end.
    expect((byServerPort(ports.tcp) as unknown as { dst: { process?: unknown } }).dst.process).toBeUndefined();
    // The collector's own connections to the bridge, metered on lo (flushed at the end at the latest).
    const toBridge = await eventually(async () => (await search()).find((f) => f.dst.port === bridgePort), 10_000, 'a flow to the bridge');
    // Host context: /proc names the collector itself as the owner of its connection.
    expect((toBridge as unknown as { src: { process?: unknown } }).src.process).toMatchObject({
      name: 'node',
      executable: realpathSync(process.execPath),
      user: { id: 0, name: 'root' },
    });
    expect(summary.host_context.src_attributed).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
