// Flow exports into ingest, on softflowd's real IPFIX datagrams replayed over loopback: startCollector
// with `exportListen` against the fake service (hello names it, --seconds bounds the run, every
// record stored), and the bounded backlog while ingest holds back.

import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExportIngest } from './exports-ingest.js';
import { collectorOnFakeService } from './testing/collector-on-fake.js';
import { eventually } from './testing/fake-service.js';
import { captureLoopback, softflowdExport, withTempDir } from './testing/softflowd.js';

let temp: ReturnType<typeof withTempDir>;
let datagrams: Buffer[];
let exported: number;

beforeAll(async () => {
  temp = withTempDir();
  const pcap = await captureLoopback(temp.dir, { tcpPort: 47571, udpPort: 47572, closedPort: 47573, tcpBytesEachWay: 300, udpPayloads: [50], udpFlows: 60 });
  const e = await softflowdExport(pcap, '10');
  datagrams = e.datagrams;
  exported = e.verbose.split('\n').filter((l) => l.startsWith('EXPIRED:')).length;
}, 30_000);
afterAll(() => temp?.remove());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function replay(port: number): Promise<void> {
  const sender = dgram.createSocket('udp4');
  for (const datagram of datagrams) await new Promise<void>((resolve) => sender.send(datagram, port, '127.0.0.1', () => resolve()));
  sender.close();
}

describe('startCollector with exportListen', () => {
  it('stores every exported record; hello names the listener; --seconds ends the run', async () => {
    const { service, collector } = await collectorOnFakeService(cleanups, {}, { exportListen: { host: '127.0.0.1', port: 0 }, seconds: 3 });
    const listening = await eventually(() => collector.logger.ring.last(100).find((line) => line.includes('"exports.listening"')), 10_000, 'listening');
    await replay(Number(/"listen":"127\.0\.0\.1:(\d+)"/.exec(listening!)![1]));
    await collector.done;
    const stats = collector.stats();
    expect(stats.exports).toMatchObject({
      datagrams: datagrams.length,
      records: exported,
      flows_emitted: exported,
      waiting_sets: 0,
      dropped: {},
      sequence: { gaps: 0 },
    });
    expect(stats.ingest).toMatchObject({ queued: 0, failed: 0, sent: exported });
    expect(service.storedFlows()).toBe(exported);
    expect(service.hellos[0].services).toMatchObject({ flowgen: { enabled: false }, exports: { listen: '127.0.0.1:0' } });
  }, 20_000);
});

describe('ExportIngest', () => {
  it('holds at most maxBacklog records while ingest is full, dropping and counting the rest', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const pushed: unknown[][] = [];
    const sink = { push: async (flows: readonly unknown[]) => void (pushed.push([...flows]), await held) };
    const ingest = new ExportIngest({ customerId: 'c1', host: '127.0.0.1', port: 0, batchFlows: 5, maxBacklog: 10, flushIntervalMs: 50 }, sink);
    const port = await ingest.listen();
    const stop = new AbortController();
    const running = ingest.run(stop.signal);
    await replay(port);
    await eventually(() => ingest.stats().records === exported, 5_000, 'every record decoded');
    // One batch (at most 5) went to the sink, which holds it; at most 10 more wait; the rest were
    // dropped. How many a datagram brings is softflowd's choice: one datagram may fill the backlog.
    expect(pushed).toHaveLength(1);
    expect(pushed[0].length).toBeLessThanOrEqual(5);
    const dropped = ingest.stats().dropped.ingest_backlog;
    release();
    stop.abort();
    await running;
    const handed = pushed.flat().length;
    expect(handed).toBeLessThanOrEqual(5 + 10);
    expect(dropped).toBe(exported - handed);
    expect(dropped).toBeGreaterThanOrEqual(exported - 15);
    expect(ingest.stats()).toMatchObject({ flows_emitted: handed, listen: `127.0.0.1:${port}` });
  });

  it('counts the datagrams the kernel dropped while the collector could not read them', async () => {
    const ingest = new ExportIngest({ customerId: 'c1', host: '127.0.0.1', port: 0, batchFlows: 100 }, { push: async () => undefined });
    const port = await ingest.listen();
    const stop = new AbortController();
    const running = ingest.run(stop.signal);
    // Another process sends 8 MB while this one's event loop is blocked: the receive buffer overflows.
    const flood = `const s = require('node:dgram').createSocket('udp4'); let left = 6000;
      const next = () => (left-- > 0 ? s.send(Buffer.alloc(1400, 1), ${port}, '127.0.0.1', next) : s.close()); next();`;
    const child = spawn(process.execPath, ['-e', flood], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (const until = Date.now() + 2_000; Date.now() < until;);
    await exited;
    const dropped = ingest.stats().dropped.socket_buffer;
    expect(dropped).toBeGreaterThan(0);
    expect(ingest.stats().datagrams + dropped).toBeLessThanOrEqual(6000);
    stop.abort();
    await running;
    // The socket is closed, its count kept.
    expect(ingest.stats().dropped.socket_buffer).toBeGreaterThanOrEqual(dropped);
  });
});
