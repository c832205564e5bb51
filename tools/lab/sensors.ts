// The collector on the router: what it captures on the office bridge reaches the server as flows.
// Today it captures with tcpdump into a file and meters that file with `collector run --pcap` once
// the traffic is over; this one function is what changes when the collector captures live.

import { join } from 'node:path';
import { type Cleanup, runOk, sleep, startDaemon, waitForOutput } from './proc.js';
import { SERVER_URL } from './server.js';
import { REPO_ROOT } from './services.js';
import { CAPTURE_IFACE } from './topology.js';

export interface SensorSummary {
  name: string;
  /** The collector's summary line (sent, failed, packets_read, ...). */
  summary: Record<string, unknown>;
}

export interface RunningSensor {
  /** Ends the capture and waits until every flow of it is stored. */
  finish(): Promise<SensorSummary>;
}

export interface SensorOptions {
  name: string;
  machineId: string;
  accessKey: string;
  ns: string;
  dir: string;
}

/** Payload inspectors read DNS names, TLS SNI and HTTP hosts from the first bytes of a packet. */
const SNAP_LENGTH = 1024;

/** Starts capturing the office bridge in the router's namespace. */
export async function startPacketSensor(options: SensorOptions, cleanup: Cleanup): Promise<RunningSensor> {
  const file = join(options.dir, `${options.name}.pcap`);
  const tcpdump = cleanup.daemon(
    startDaemon(`${options.name}-tcpdump`, ['tcpdump', '-i', CAPTURE_IFACE, '-n', '-s', String(SNAP_LENGTH), '--immediate-mode', '-U', '-w', file, 'ip'], { ns: options.ns, logFile: join(options.dir, `${options.name}-tcpdump.log`) }),
  );
  await waitForOutput(tcpdump, /listening on/, 10_000);
  return {
    async finish() {
      // The last packets of the traffic reach the capture a moment after the tools exit.
      await sleep(1_000);
      await tcpdump.stop();
      const out = await runOk(
        [process.execPath, '--import', 'tsx', 'tools/collector/cli.ts', 'run', '--pcap', file, '--base-url', SERVER_URL, '--machine-id', options.machineId,
          '--hostname', options.name, '--state-dir', join(options.dir, `${options.name}-state`), '--log-level', 'warn'],
        { ns: options.ns, cwd: REPO_ROOT, timeoutMs: 180_000, env: { PROPHET_ACCESS_KEY: options.accessKey } },
      );
      return { name: options.name, summary: JSON.parse(out.trim().split('\n').at(-1)!) };
    },
  };
}
