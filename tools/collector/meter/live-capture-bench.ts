// How fast `--capture` meters: a UDP flood across a veth between two test namespaces, captured by
// LiveCapture (tcpdump → reader → decoder → flow table, records to a sink that keeps nothing) inside
// the sending namespace. Prints what was sent, what tcpdump captured and the kernel dropped, and the
// meter's CPU time. Needs root (`ip netns`); the namespaces are removed at the end.
//   npx tsx tools/collector/meter/live-capture-bench.ts [--seconds 6] [--flows 1000]

import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createNamespacePair, type NamespaceEnd } from '../testing/netns.js';
import { LiveCapture } from './live-capture.js';
import { CaptureMeter } from './meter-capture.js';

const SELF = fileURLToPath(import.meta.url);
const DATAGRAM_BYTES = 200;

/** Inside the namespace: meters `iface` for `seconds` after saying READY, then prints the counts as JSON. */
async function meter(iface: string, seconds: number): Promise<void> {
  let flows = 0;
  const sensor = { id: 'bench', type: 'packet', name: 'bench', hostname: 'bench', interface: iface };
  const meter = new CaptureMeter({ customerId: 'bench', sensor, tags: [], batchFlows: 2000 }, { push: async (records) => void (flows += records.length) });
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const live = new LiveCapture([iface], meter, { onListening: () => listening() });
  const stop = new AbortController();
  const cpu = process.cpuUsage();
  const running = live.run(stop.signal);
  await ready;
  process.stdout.write('READY\n');
  setTimeout(() => stop.abort(), seconds * 1000);
  await running;
  const used = process.cpuUsage(cpu);
  const stats = meter.stats();
  process.stdout.write(
    JSON.stringify({
      cpu_s: (used.user + used.system) / 1e6,
      packets_read: stats.packets_read,
      packets_decoded: stats.packets_decoded,
      flow_records: flows,
      tcpdump: live.stats()[0],
    }) + '\n',
  );
}

/** Inside the namespace: UDP datagrams to `host` as fast as the sockets take them, round-robin over `flows` source ports. */
async function flood(host: string, seconds: number, flows: number): Promise<void> {
  const sockets = Array.from({ length: flows }, () => dgram.createSocket('udp4'));
  const payload = Buffer.alloc(DATAGRAM_BYTES, 7);
  const end = Date.now() + seconds * 1000;
  let sent = 0;
  while (Date.now() < end) {
    await Promise.all(Array.from({ length: 500 }, () => new Promise<void>((resolve) => sockets[sent++ % flows].send(payload, 9999, host, () => resolve()))));
  }
  sockets.forEach((socket) => socket.close());
  process.stdout.write(JSON.stringify({ sent }) + '\n');
}

/** Runs this file in `mode` inside `end`'s namespace; resolves with its stdout lines as they come. */
function inside(end: NamespaceEnd, args: string[], onLine: (line: string) => void): Promise<void> {
  const child = spawn(end.exec[0], [...end.exec.slice(1), process.execPath, '--import', 'tsx', SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      onLine(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
    }
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve, reject) =>
    child.once('close', (code) => (clearTimeout(killer), code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}`)))),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string' }, flows: { type: 'string' }, meter: { type: 'string' }, flood: { type: 'string' } } });
  const seconds = Number(values.seconds ?? 6);
  const flows = Number(values.flows ?? 1000);
  if (values.meter) return meter(values.meter, seconds);
  if (values.flood) return flood(values.flood, seconds, flows);
  const pair = await createNamespacePair('hbench');
  try {
    let ready!: () => void;
    const listening = new Promise<void>((resolve) => (ready = resolve));
    const results: unknown[] = [];
    // The meter runs a few seconds longer than the flood, so it reads what tcpdump still holds.
    const metering = inside(pair.a, ['--meter', pair.a.iface, '--seconds', String(seconds + 3)], (line) =>
      line === 'READY' ? ready() : results.push(JSON.parse(line)),
    );
    await listening;
    await inside(pair.a, ['--flood', pair.b.address, '--seconds', String(seconds), '--flows', String(flows)], (line) => results.push(JSON.parse(line)));
    await metering;
    const [sent, counts] = results as [{ sent: number }, { cpu_s: number; packets_read: number }];
    const perCpuSecond = Math.round(counts.packets_read / counts.cpu_s);
    console.log(
      JSON.stringify({
        seconds,
        source_ports: flows,
        datagram_bytes: DATAGRAM_BYTES,
        offered_pps: Math.round(sent.sent / seconds),
        ...sent,
        ...counts,
        packets_per_cpu_second: perCpuSecond,
      }),
    );
  } finally {
    await pair.remove();
  }
}

main().catch((error: Error) => {
  console.error(error.stack);
  process.exitCode = 1;
});
