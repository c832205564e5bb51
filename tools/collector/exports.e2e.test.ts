// `collector run --ipfix-listen` end to end, with real exporters sending to the CLI process: it runs
// inside a test namespace (reaching the real service through a loopback bridge) and receives
// softflowd's NetFlow v5, v9 and IPFIX and pmacctd's IPFIX (nfprobe), each metering a tcpdump
// capture of loopback traffic, and fprobe's NetFlow v5 of live TCP and UDP across the namespace's
// veth. One softflowd IPFIX export goes through a relay that drops its second datagram: the
// sequence gap shows in diagnostics over REST and in the summary. SIGTERM ends the run; the search
// API returns each exporter's flows with the packets and IP bytes tcpdump counted.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { startTcpdump } from './meter/testing/tcpdump.js';
import { expectedFlow, readWithTcpdump, type Seen } from './meter/testing/tcpdump-reference.js';
import { startCliInNamespace } from './testing/cli-in-namespace.js';
import { runPmacctd, startFprobe } from './testing/exporters.js';
import { eventually } from './testing/fake-service.js';
import { createNamespacePair, type NamespacePair, startPeer } from './testing/netns.js';
import { captureLoopback, type LoopbackTraffic, runSoftflowd } from './testing/softflowd.js';

type Flow = {
  src: { ip: string; port: number };
  dst: { ip: string; port: number };
  transport: { proto: string };
  meta: { flow_types: string[] };
  path: Array<{ sensor: { id: string } }>;
  stats: { volume: { bytes: { src: { count: number; sum: number } } } };
};

/** Loopback traffic on ports no other test uses: one TCP exchange, UDP datagrams, `udpFlows` more one-datagram flows. */
const traffic = (base: number, udpFlows: number): LoopbackTraffic => ({
  tcpPort: base,
  udpPort: base + 1,
  closedPort: base + 2,
  tcpBytesEachWay: 600,
  udpPayloads: [64, 80],
  udpFlows,
});

describe('collector run --ipfix-listen against the service, with real exporters', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let pair: NamespacePair;
  let dir: string;
  const cleanups: Array<() => unknown> = [];
  /** Captures (file and tcpdump's reading of it) for softflowd's direct exports, pmacctd and the relayed export. */
  const captures: Record<'softflowd' | 'pmacctd' | 'relayed', { file: string; seen: Seen[]; traffic: LoopbackTraffic }> = {} as never;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    dir = mkdtempSync(join(tmpdir(), 'collector-exports-e2e-'));
    pair = await createNamespacePair('hexp');
    for (const [name, shape] of [
      ['softflowd', traffic(47541, 0)],
      ['pmacctd', traffic(47551, 0)],
      ['relayed', traffic(47561, 200)],
    ] as const) {
      const sub = join(dir, name);
      mkdirSync(sub);
      const file = await captureLoopback(sub, shape);
      captures[name] = { file, seen: await readWithTcpdump(file), traffic: shape };
    }
  }, 60_000);
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await pair?.remove();
    rmSync(dir, { recursive: true, force: true });
    await t?.stop();
  });

  it('stores what softflowd (v5, v9, IPFIX), pmacctd (IPFIX) and fprobe (v5) export; a lost datagram is a gap', async () => {
    const started = Date.now();
    const { cli, machineId } = await startCliInNamespace({ t, tree, end: pair.a, dir, args: ['--ipfix-listen', '127.0.0.1:0'], cleanups });
    const logged = (event: string) =>
      cli
        .stderr()
        .split('\n')
        .filter((line) => line.includes(`"${event}"`))
        .map((line) => JSON.parse(line));
    const first = async (event: string) => (await eventually(() => logged(event)[0], 15_000, event))!;
    const port = Number(/:(\d+)$/.exec((await first('exports.listening')).listen)![1]);
    const nodeId = (await first('control.welcome')).node_id;

    // Files metered by exporters inside the namespace, sending to the collector's port there.
    for (const version of ['5', '9', '10'] as const) await runSoftflowd(captures.softflowd.file, port, version, [], pair.a.exec);
    await runPmacctd(dir, captures.pmacctd.file, port, '10', pair.a.exec);
    const relay = startPeer(pair.a, ['relay', String(port), '2']);
    cleanups.push(() => relay.kill());
    const relayed = (await relay.line()) as { port: number; from: number };
    await runSoftflowd(captures.relayed.file, relayed.port, '10', [], pair.a.exec);

    // fprobe on the namespace's veth while a client there talks to servers across it.
    const servers = startPeer(pair.b, ['serve', pair.b.address]);
    cleanups.push(() => servers.kill());
    const ports = (await servers.line()) as { tcp: number; udp: number };
    const reference = await startTcpdump({ iface: pair.b.iface, filter: `port ${ports.tcp} or port ${ports.udp}`, wrapper: pair.b.exec });
    const fprobe = await startFprobe(pair.a.iface, port, pair.a.exec);
    const client = startPeer(pair.a, ['client', pair.b.address, String(ports.tcp), String(ports.udp)]);
    const clientPorts = (await client.line()) as { tcp: number; udp: number };
    const live = await reference.stop();
    await fprobe.stop();
    writeFileSync(join(dir, 'live.pcap'), live.bytes);
    const liveSeen = await readWithTcpdump(join(dir, 'live.pcap'));

    // The gap, while the collector runs: diagnostics over REST.
    const exporter = `127.0.0.1:${relayed.from}`;
    const diagnostics = await eventually(
      async () => {
        const res = await call(t.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
        return res.status === 200 && res.body.diagnostics?.collector?.exports?.domains?.some((d: { exporter: string }) => d.exporter === exporter)
          ? res.body.diagnostics.collector.exports
          : undefined;
      },
      10_000,
      'diagnostics with the relayed exporter',
    );
    expect(diagnostics.sequence.gaps).toBe(1);
    expect(diagnostics.domains.find((d: { exporter: string }) => d.exporter === exporter)).toMatchObject({ kind: 'ipfix', gaps: 1 });

    cli.kill('SIGTERM');
    expect(await cli.exited, cli.stderr()).toBe(0);
    const summary = cli.summary();
    expect(summary).toMatchObject({
      machine_id: machineId,
      queued: 0,
      failed: 0,
      exports: { listen: `127.0.0.1:${port}`, waiting_sets: 0, dropped: {}, sequence: { gaps: 1 } },
    });
    expect(summary.exports.sequence.missing).toBeGreaterThan(0);
    expect(summary.sent).toBe(summary.flows_emitted);
    expect(summary.flows_emitted).toBe(summary.exports.records);
    // Exporters: softflowd ×3 directly, pmacctd, softflowd through the relay, fprobe; each one domain.
    expect(summary.exports.domains, JSON.stringify(summary.exports.domains)).toHaveLength(6);
    expect(summary.exports.domains[0]).toMatchObject({ exporter, gaps: 1 });
    expect(summary.exports.domains.slice(1).every((d: { gaps: number }) => d.gaps === 0)).toBe(true);

    const found = (await eventually(
      async () => {
        const res = await call(t.url, 'POST', '/search/records/1.0', {
          token: tree.childACaller.token,
          body: {
            instance_ids: [tree.childA.id],
            module: 'flows',
            size: 1000,
            start: { absolute: { date: new Date(started - 3_600_000).toISOString() } },
            end: { absolute: { date: new Date(Date.now() + 3_600_000).toISOString() } },
          },
        });
        expect(res.status).toBe(200);
        const flows = res.body[tree.childA.id].flows as Flow[];
        return flows.length >= summary.sent ? flows : undefined;
      },
      15_000,
      'every exported flow searchable',
    ))!;
    expect(found).toHaveLength(summary.sent);

    /**
     * The record of `kind` from client to server port `server`, whose packets and IP bytes are one
     * of `times` multiples of tcpdump's for that direction.
     */
    const expectOneWay = (flows: Flow[], kind: string, seen: Seen[], proto: 'TCP' | 'UDP', server: number, times = [1]) => {
      const want = expectedFlow(seen, proto, server);
      const { count, sum } = want.stats.volume.bytes.src;
      const record = flows.find((f) => f.meta.flow_types[0] === kind && f.dst.port === server && f.src.port === want.src.port);
      expect(record, `${kind} ${proto} to ${server}`).toMatchObject({ transport: { proto } });
      const got = record!.stats.volume.bytes.src;
      expect(
        times.map((n) => ({ count: count * n, sum: sum * n })),
        `${kind} ${proto} to ${server}`,
      ).toContainEqual({ count: got.count, sum: got.sum });
    };
    const notRelayed = found.filter((f) => !f.path[0].sensor.id.startsWith(`${exporter}/`));
    for (const kind of ['netflow_v5', 'netflow_v9', 'ipfix']) {
      for (const proto of ['TCP', 'UDP'] as const) {
        const { seen, traffic: shape } = captures.softflowd;
        expectOneWay(notRelayed, kind, seen, proto, proto === 'TCP' ? shape.tcpPort : shape.udpPort);
      }
    }
    for (const proto of ['TCP', 'UDP'] as const) {
      const { seen, traffic: shape } = captures.pmacctd;
      // pmacctd 1.7.7 delivers a savefile's packets to its plugins twice (its own print plugin
      // counts them twice too, and nfdump reads the same totals from the export), or once when the
      // plugin ends before the second copy reaches it: on a loaded machine, a matter of timing.
      expectOneWay(notRelayed, 'ipfix', seen, proto, proto === 'TCP' ? shape.tcpPort : shape.udpPort, [2, 1]);
      expectOneWay(notRelayed, 'netflow_v5', liveSeen, proto, proto === 'TCP' ? ports.tcp : ports.udp);
    }
    expect(found.find((f) => f.dst.port === ports.tcp && f.src.port === clientPorts.tcp)).toMatchObject({
      src: { ip: pair.a.address },
      dst: { ip: pair.b.address },
    });
    // The relayed export lost one datagram's records, the rest are stored.
    const relayedFlows = found.filter((f) => f.path[0].sensor.id.startsWith(`${exporter}/`));
    expect(relayedFlows.length).toBe(summary.exports.domains[0].records);
  }, 120_000);
});
