// The lab's sensors, each a collector enrolled as its own node:
// - packet sensors: `collector run --capture IFACE` meters an interface live (tcpdump streamed into
//   the meter) and ships flows while the traffic plays. One captures the office bridge in the
//   router's namespace; one runs inside an attacking workstation's namespace on its eth0, where
//   the collector's host context names the process behind each of the workstation's sockets
//   (/proc/net is the reading process's namespace, /proc/<pid>/fd the machine's);
// - the export sensor: softflowd meters the office bridge and exports IPFIX (RFC 5103 biflows) to
//   `collector run --ipfix-listen` on the router's loopback.
// Finishing a sensor flushes every flow it holds and returns the collector's summary.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { COLLECTOR_NODE_FLAGS } from '../collector/node-flags.js';
import { type Cleanup, type Daemon, sleep, startDaemon, waitForOutput } from './proc.js';
import { SERVER_URL } from './server.js';
import { REPO_ROOT } from './services.js';
import { CAPTURE_IFACE } from './topology.js';

export interface SensorSummary {
  name: string;
  /** The collector's summary line (sent, failed, packets_read, exports, ...). */
  summary: Record<string, unknown>;
  /** For the export sensor: what softflowd's capture counted (tcpdump's `dropped by kernel`). */
  capture?: { captured: number; droppedByKernel: number };
}

export interface RunningSensor {
  /** Ends the sensor and waits until every flow of it is stored. */
  finish(): Promise<SensorSummary>;
}

export interface SensorOptions {
  name: string;
  machineId: string;
  accessKey: string;
  ns: string;
  dir: string;
  /** The interface a packet sensor captures (default: the office bridge). */
  iface?: string;
}

/** The collector's stop: 30 s for queued flows plus the answers on the wire (docs/reference-collector.md). */
const STOP_GRACE_MS = 90_000;
/** Where softflowd exports, on the router's loopback (the namespace is the run's own). */
const IPFIX_LISTEN = '127.0.0.1:4739';
/**
 * softflowd's snap length: it reads headers only and counts bytes from the IP length, so the pipe
 * carries 128 bytes a packet rather than the exfil's every byte.
 */
const SOFTFLOWD_SNAPLEN = 128;
/** tcpdump's capture buffer for softflowd, KiB (as the packet sensor's: bursts of the bulk transfers). */
const SOFTFLOWD_BUFFER_KIB = 65_536;
/** softflowd exports everything once its input ends; a few thousand flows take well under a second. */
const SOFTFLOWD_EXPORT_MS = 30_000;

function startCollector(options: SensorOptions, source: string[], ready: RegExp, cleanup: Cleanup): Promise<Daemon> {
  const collector = cleanup.daemon(
    startDaemon(
      `${options.name}-collector`,
      [
        process.execPath,
        ...COLLECTOR_NODE_FLAGS,
        '--import',
        'tsx',
        'tools/collector/cli.ts',
        'run',
        ...source,
        '--base-url',
        SERVER_URL,
        '--machine-id',
        options.machineId,
        '--hostname',
        options.name,
        '--state-dir',
        join(options.dir, `${options.name}-state`),
        '--log-level',
        'info',
      ],
      { ns: options.ns, cwd: REPO_ROOT, logFile: join(options.dir, `${options.name}-collector.log`), env: { PROPHET_ACCESS_KEY: options.accessKey } },
    ),
  );
  return waitForOutput(collector, ready, 60_000).then(() => collector);
}

/** Stops the collector (SIGTERM: it sends what it holds) and reads its summary line. */
async function stopCollector(collector: Daemon): Promise<Record<string, unknown>> {
  await collector.stop(STOP_GRACE_MS, 'leader');
  const line = collector
    .output()
    .split('\n')
    .findLast((l) => l.startsWith('{"node_id"'));
  if (!line) throw new Error(`${collector.name} printed no summary:\n${collector.output().slice(-3000)}`);
  return JSON.parse(line);
}

/** Starts a collector capturing an interface in its namespace; resolves once tcpdump listens. */
export async function startPacketSensor(options: SensorOptions, cleanup: Cleanup): Promise<RunningSensor> {
  const collector = await startCollector(options, ['--capture', options.iface ?? CAPTURE_IFACE], /"event":"meter\.listening"/, cleanup);
  return {
    async finish() {
      // The last packets of the traffic reach the capture a moment after the tools exit.
      await sleep(1_000);
      return { name: options.name, summary: await stopCollector(collector) };
    },
  };
}

/**
 * softflowd metering the office bridge, exporting IPFIX to a collector listening on the router's
 * loopback. softflowd 1.1.0 cannot meter a live interface here (docs/lab.md "The export sensor"):
 * it opens it with a zero timeout, which libpcap ≥ 1.9 turns into TPACKET_V3 blocks that are
 * handed over only when full (256 KiB), so a quiet link's packets never reach it; and in the
 * foreground (`-d`) it installs no SIGTERM handler, so stopping it exports nothing. So tcpdump
 * captures the bridge into a FIFO and softflowd reads that (`-r`): every packet is metered, and
 * when the capture ends softflowd exports every flow it holds and exits.
 */
export async function startExportSensor(options: SensorOptions, cleanup: Cleanup): Promise<RunningSensor> {
  const collector = await startCollector(options, ['--ipfix-listen', IPFIX_LISTEN], /"event":"exports\.listening"/, cleanup);
  const fifo = join(options.dir, 'softflowd.pcap');
  execFileSync('mkfifo', [fifo]);
  const [host, port] = IPFIX_LISTEN.split(':');
  const softflowd = cleanup.daemon(
    startDaemon(
      'softflowd',
      ['softflowd', '-d', '-c', 'none', '-p', join(options.dir, 'softflowd.pid'), '-r', fifo, '-v', '10', '-b', '-n', `${host}:${port}`],
      {
        ns: options.ns,
        logFile: join(options.dir, 'softflowd.log'),
      },
    ),
  );
  const tcpdump = cleanup.daemon(
    startDaemon(
      'softflowd-tcpdump',
      ['tcpdump', '-i', CAPTURE_IFACE, '-n', '-U', '-s', String(SOFTFLOWD_SNAPLEN), '-B', String(SOFTFLOWD_BUFFER_KIB), '-w', fifo],
      {
        ns: options.ns,
        logFile: join(options.dir, 'softflowd-tcpdump.log'),
      },
    ),
  );
  await waitForOutput(tcpdump, /listening on/, 30_000);
  return {
    async finish() {
      await sleep(1_000);
      // tcpdump's SIGTERM ends the FIFO; softflowd then exports every flow and exits.
      await tcpdump.stop(10_000, 'leader');
      const ended = await Promise.race([softflowd.exited.then(() => true), sleep(SOFTFLOWD_EXPORT_MS).then(() => false)]);
      if (!ended) throw new Error(`softflowd did not finish its export within ${SOFTFLOWD_EXPORT_MS / 1000} s:\n${softflowd.output().slice(-2000)}`);
      // The last datagrams reach the collector's socket.
      await sleep(1_000);
      return { name: options.name, summary: await stopCollector(collector), capture: tcpdumpCounts(tcpdump.output()) };
    },
  };
}

/** tcpdump's closing counts ("N packets captured", "N packets dropped by kernel"). */
export function tcpdumpCounts(output: string): { captured: number; droppedByKernel: number } {
  const count = (what: string) => Number(new RegExp(`(\\d+) packets? ${what}`).exec(output)?.[1] ?? NaN);
  return { captured: count('captured'), droppedByKernel: count('dropped by kernel') };
}
