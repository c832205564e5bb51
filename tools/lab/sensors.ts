// The collector on the router: `collector run --capture br0` inside the router's namespace meters
// the office bridge live (tcpdump streamed into the meter) and ships flows to the server over the
// management link while the traffic plays; finishing it flushes every open flow.

import { join } from 'node:path';
import { COLLECTOR_NODE_FLAGS } from '../collector/node-flags.js';
import { type Cleanup, sleep, startDaemon, waitForOutput } from './proc.js';
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

/** The collector's stop: 30 s for queued flows plus the answers on the wire (docs/reference-collector.md). */
const STOP_GRACE_MS = 90_000;

/** Starts the collector capturing the office bridge in the router's namespace; resolves once tcpdump listens. */
export async function startPacketSensor(options: SensorOptions, cleanup: Cleanup): Promise<RunningSensor> {
  const collector = cleanup.daemon(
    startDaemon(
      `${options.name}-collector`,
      [process.execPath, ...COLLECTOR_NODE_FLAGS, '--import', 'tsx', 'tools/collector/cli.ts', 'run', '--capture', CAPTURE_IFACE, '--base-url', SERVER_URL, '--machine-id', options.machineId,
        '--hostname', options.name, '--state-dir', join(options.dir, `${options.name}-state`), '--log-level', 'info'],
      { ns: options.ns, cwd: REPO_ROOT, logFile: join(options.dir, `${options.name}-collector.log`), env: { PROPHET_ACCESS_KEY: options.accessKey } },
    ),
  );
  await waitForOutput(collector, /"event":"meter\.listening"/, 60_000);
  return {
    async finish() {
      // The last packets of the traffic reach the capture a moment after the tools exit.
      await sleep(1_000);
      await collector.stop(STOP_GRACE_MS, 'leader');
      const line = collector.output().split('\n').findLast((l) => l.startsWith('{"node_id"'));
      if (!line) throw new Error(`the collector printed no summary:\n${collector.output().slice(-3000)}`);
      return { name: options.name, summary: JSON.parse(line) };
    },
  };
}
