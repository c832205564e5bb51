// Live capture (`--capture IFACE`) against the fake service: tcpdump on `lo` while the test makes
// loopback traffic; idle flows leave while the capture runs, stop() and SIGTERM flush the rest,
// tcpdump's counts come back. Then tcpdump's failures as an operator meets them:
// the CLI as a process on a missing interface, as user nobody (no permission), without tcpdump.

import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listenOnLoopback } from './meter/testing/tcpdump.js';
import { LiveCapture } from './meter/live-capture.js';
import { CaptureMeter } from './meter/meter-capture.js';
import { CaptureInterfaceError, TcpdumpProcess } from './meter/tcpdump-process.js';
import { spawnCli } from './testing/cli-process.js';
import { collectorOnFakeService } from './testing/collector-on-fake.js';
import { eventually, startFakeService } from './testing/fake-service.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Flow = {
  src: { port: number };
  dst: { port: number };
  transport: { proto: string };
  stats: { volume: { bytes: { src: { count: number; sum: number }; dst: { count: number } } } };
  path: Array<{ sensor: { interface: string } }>;
};

describe('startCollector with a live interface', () => {
  it('meters loopback traffic: idle flows leave on the wall clock, stop() flushes the rest', async () => {
    const peers = await listenOnLoopback('127.0.0.1');
    cleanups.push(() => peers.close());
    const { service, collector } = await collectorOnFakeService(cleanups, {}, { captureInterfaces: ['lo'], idleTimeoutSecs: 1, machineId: 'live-1' });
    await eventually(() => collector.logger.ring.last(100).some((line) => line.includes('"meter.listening"')), 10_000, 'tcpdump listening');
    await peers.sendUdp([100, 200, 300]);
    const flows = () => [...service.stored.values()].flat() as Flow[];
    const ours = (port: number) => flows().find((f) => f.dst.port === port);
    // Idle 1 s: out by the next packet on lo, or by the wall-clock timer when lo is quiet (capture.e2e
    // shows the timer alone, on a veth nothing else uses).
    const udp = await eventually(() => ours(peers.udpPort), 15_000, 'the idle UDP flow stored while the capture runs');
    expect(udp).toMatchObject({
      transport: { proto: 'UDP' },
      stats: { volume: { bytes: { src: { count: 3, sum: 600 + 3 * 28 } } } },
      path: [{ sensor: { interface: 'lo' } }],
    });

    await peers.exchangeTcp('hello', 'world');
    await new Promise((resolve) => setTimeout(resolve, 500)); // as below: tcpdump gets to read it
    expect(await collector.stop()).toEqual({ unsent: 0 });
    // Ended with FINs (or flushed at stop): either way stored by the time stop() returns.
    expect(ours(peers.tcpPort)).toMatchObject({ transport: { proto: 'TCP' } });
    const meter = collector.stats().meter!;
    // lo is shared with everything else on the machine: under load its ring may overflow, so drops are only counted here.
    expect(meter.interfaces).toEqual([
      { name: 'lo', captured: expect.any(Number), received_by_filter: expect.any(Number), dropped_by_kernel: expect.any(Number), dropped_by_interface: 0 },
    ]);
    expect(meter.interfaces![0].captured).toBe(meter.packets_read);
    expect(meter).toMatchObject({ files: 0, active_flows: 0 });
    expect(service.hellos[0].services).toMatchObject({ flowgen: { enabled: false }, meter: { source: 'live', interfaces: ['lo'], idle_timeout_secs: 1 } });
  }, 40_000);
});

describe('LiveCapture', () => {
  it('asks tcpdump for its counts while it runs (SIGUSR1), not only at exit', async () => {
    const peers = await listenOnLoopback('127.0.0.1');
    cleanups.push(() => peers.close());
    const sensor = { id: 'live-2', type: 'packet', name: 'test', hostname: 'h', interface: 'lo' };
    const meter = new CaptureMeter({ customerId: 'c1', sensor, tags: [], batchFlows: 100 }, { push: async () => undefined });
    let listening!: () => void;
    const started = new Promise<void>((resolve) => (listening = resolve));
    const live = new LiveCapture(['lo'], meter, { tickMs: 100, countsEveryMs: 300, onListening: () => listening() });
    const stop = new AbortController();
    const running = live.run(stop.signal);
    cleanups.push(() => (stop.abort(), running.catch(() => undefined)));
    await started;
    await peers.sendUdp([10, 20, 30]);
    const counts = await eventually(() => (live.stats()[0].captured >= 3 ? live.stats()[0] : undefined), 5_000, 'counts while running');
    expect(counts).toMatchObject({ name: 'lo', dropped_by_interface: 0 });
    stop.abort();
    await running;
    expect(live.stats()[0].captured).toBe(meter.stats().packets_read);
  });
});

describe('collector run --capture (process)', () => {
  it("Ctrl-C (SIGINT to the process group) stops tcpdump, flushes the open flows and exits 0 with tcpdump's counts", async () => {
    const service = await startFakeService({});
    cleanups.push(() => service.close());
    const peers = await listenOnLoopback('127.0.0.1');
    cleanups.push(() => peers.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'collector-live-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const cli = spawnCli(
      ['run', '--capture', 'lo', '--base-url', service.url, '--access-key', 'cid.secret', '--state-dir', stateDir, '--machine-id', 'live-proc'],
      cleanups,
      { group: true },
    );
    await eventually(() => cli.stderr().includes('"meter.listening"'), 15_000, 'tcpdump listening');
    await peers.sendUdp([10, 20]);
    // On a loaded machine tcpdump may not have been scheduled yet; packets sent as it stops are not captured.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // tcpdump is in a group of its own: the signal reaches only the collector, which stops it.
    cli.kill('SIGINT');
    expect(await cli.exited, cli.stderr()).toBe(0);

    const summary = cli.summary();
    expect(summary).toMatchObject({ machine_id: 'live-proc', interfaces: [{ name: 'lo', captured: summary.packets_read }], queued: 0, failed: 0 });
    expect(summary.sent).toBe(summary.flows_emitted);
    // The UDP flow was open (idle 30 s): the stop flushed it.
    const flows = [...service.stored.values()].flat() as Flow[];
    expect(flows.find((f) => f.dst.port === peers.udpPort)).toMatchObject({ stats: { volume: { bytes: { src: { count: 2 } } } } });
    expect(cli.events()).toEqual(expect.arrayContaining(['collector.signal', 'meter.done']));
  }, 40_000);
});

describe('tcpdump failures', () => {
  /** The CLI as a process with `--capture IFACE`; `as` prefixes the command (e.g. setpriv); the state dir goes under `TMPDIR`. */
  async function runCli(iface: string, options: { as?: string[]; env?: NodeJS.ProcessEnv } = {}) {
    const stateDir = mkdtempSync(join(options.env?.TMPDIR ?? tmpdir(), 'collector-live-'));
    chmodSync(stateDir, 0o777);
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    // Port 1 refuses connections: a contacted service would show in the message.
    const args = ['run', '--capture', iface, '--base-url', 'http://127.0.0.1:1', '--access-key', 'k.s', '--state-dir', join(stateDir, 'state')];
    const cli = spawnCli(args, cleanups, { prefix: options.as, env: options.env });
    return { code: await cli.exited, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  it('a missing interface: one sentence, exit 1, before contacting the service', async () => {
    const result = await runCli('nosuch0');
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'collector: cannot capture on nosuch0: no such interface (see `ip link`)\n' });
  }, 20_000);

  it('no permission (user nobody): one sentence, exit 1', async () => {
    // tsx caches its transforms in $TMPDIR, and the state dir is read: nobody needs a directory it
    // may write, outside the test run's private one.
    const tmp = mkdtempSync('/tmp/collector-nobody-');
    chmodSync(tmp, 0o777);
    cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));
    const result = await runCli('lo', { as: ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--inh-caps=-all'], env: { TMPDIR: tmp } });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'collector: cannot capture on lo: permission denied (run as root or give tcpdump CAP_NET_RAW and CAP_NET_ADMIN)\n',
    });
  }, 20_000);

  it('tcpdump not installed: one sentence, exit 1', async () => {
    const result = await runCli('lo', { env: { PATH: '/nonexistent' } });
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'collector: cannot capture on lo: tcpdump is not installed (apt-get install tcpdump)\n' });
  }, 20_000);

  it('tcpdump that ends unasked is reported with what it said', async () => {
    // `false` starts and exits 1 without a word: the start fails with a sentence, never hangs.
    await expect(TcpdumpProcess.start('lo', 'false')).rejects.toThrow(new CaptureInterfaceError('cannot capture on lo: tcpdump exited'));
  });
});
