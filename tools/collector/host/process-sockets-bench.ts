// What host context costs and what it catches, to choose the sampling period:
// `npx tsx tools/collector/host/process-sockets-bench.ts [curls per cell]`.
// 1. CPU per sample on a quiet host (no new socket) and per search of every process's fds.
// 2. For each period: the sampler's CPU over 5 s with no traffic of its own (other work on the
//    machine still starts processes); then for each server delay, curls to a local HTTP server that answers after the
//    delay; a curl counts as caught when the record of its connection (built from its real
//    5-tuple and times) gets src.process curl.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FlowTable } from '../meter/flow-table.js';
import { TcpConversation } from '../meter/hand-packets.js';
import { TcpFlag } from '../meter/packet.js';
import { emptyOwnerSearchCounts, findSocketOwners } from './proc-owners.js';
import { ProcessSockets } from './process-sockets.js';
import { UserNames } from './user-names.js';

const CURLS = Number(process.argv[2] ?? 20);
const PERIODS_MS = [5, 10, 20, 50, 100];
const DELAYS_MS = [0, 5, 20, 50];
const IDLE_MS = 5000;

function cpuMsPer(times: number, work: () => void): number {
  const before = process.cpuUsage();
  for (let i = 0; i < times; i++) work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / times;
}

/** A curl's own end and its wall-clock span. */
function curl(url: string): Promise<{ ip: string; port: number; startMs: number; endMs: number }> {
  const startMs = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-s', '-o', '/dev/null', '--max-time', '5', '-w', '%{local_ip} %{local_port}', url], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', () => {
      const [ip, port] = out.trim().split(' ');
      resolve({ ip, port: Number(port), startMs, endMs: Date.now() });
    });
  });
}

function recordOf(c: { ip: string; port: number; startMs: number; endMs: number }, serverPort: number) {
  const table = new FlowTable({ customerId: 'bench', sensor: { id: 'b', type: 'packet', name: 'b', hostname: 'b', interface: 'lo' }, tags: [] });
  const tcp = new TcpConversation({ src: c.ip, dst: '127.0.0.1', srcPort: c.port, dstPort: serverPort });
  for (const p of [
    ...tcp.handshake(c.startMs * 1000, 100),
    tcp.segment(c.endMs * 1000 - 200, false, TcpFlag.PSH | TcpFlag.ACK),
    ...tcp.close(c.endMs * 1000 - 100, 10),
  ])
    table.add(p);
  return table.flush()[0];
}

async function main(): Promise<void> {
  const sampler = new ProcessSockets();
  sampler.sample();
  const quiet = cpuMsPer(2000, () => sampler.sample());
  const users = new UserNames();
  const counts = emptyOwnerSearchCounts();
  const search = cpuMsPer(50, () => findSocketOwners('/proc', new Map([['1', 0]]), Infinity, users, counts));
  console.log(`quiet sample: ${quiet.toFixed(3)} ms CPU; search of every process (${counts.pids_scanned / 50} pids): ${search.toFixed(2)} ms CPU`);

  let delayMs = 0;
  const server = createServer((_req, res) => setTimeout(() => res.end('ok'), delayMs));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  console.log(`period ms | idle: CPU % of a core, table reads/s | caught at server delay ${DELAYS_MS.map((d) => `${d} ms`).join(' | ')}`);
  for (const periodMs of PERIODS_MS) {
    const s = new ProcessSockets({ periodMs });
    s.start();
    // Idle: only what else runs on the machine starts processes; the process's CPU is the sampler's.
    const before = process.cpuUsage();
    const wallStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const cpu = process.cpuUsage(before);
    const idleShare = ((cpu.user + cpu.system) / 1000 / (performance.now() - wallStart)) * 100;
    const idleReads = (s.stats().samples / IDLE_MS) * 1000;
    const cells: string[] = [];
    for (const d of DELAYS_MS) {
      delayMs = d;
      let caught = 0;
      for (let i = 0; i < CURLS; i++) {
        const c = await curl(`http://127.0.0.1:${port}/`);
        const record = recordOf(c, port);
        s.attachProcess(record);
        if (record.src.process?.name === 'curl') caught++;
      }
      cells.push(`${caught}/${CURLS}`);
    }
    s.stop();
    console.log(`${periodMs} | ${idleShare.toFixed(1)}, ${idleReads.toFixed(1)} | ${cells.join(' | ')}`);
  }
  server.close();
}

void main();
