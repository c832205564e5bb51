// Test kit: real NetFlow/IPFIX datagrams from Debian's softflowd. tcpdump
// records loopback TCP, UDP and ICMP traffic this process makes on chosen
// ports; softflowd meters that capture and exports to a dgram socket here.
// Loopback only, in a temporary directory, bounded in time.

import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCaptureFile } from '../meter/capture.js';
import { decodeFrame } from '../meter/decode.js';

export interface LoopbackTraffic {
  /** 127.0.0.1 by default; ::1 for IPv6 flows. */
  host?: '127.0.0.1' | '::1';
  tcpPort: number;
  udpPort: number;
  /** A UDP port nobody listens on: its datagram draws an ICMP port unreachable. */
  closedPort: number;
  tcpBytesEachWay: number;
  udpPayloads: number[];
  /** Extra one-datagram UDP flows (one socket each), so exports span several datagrams. */
  udpFlows: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One TCP echo exchange, UDP datagrams, one to a closed port, then many one-datagram UDP flows. */
async function makeTraffic(t: LoopbackTraffic): Promise<void> {
  const host = t.host ?? '127.0.0.1';
  const udpType = host === '::1' ? 'udp6' : 'udp4';
  const server = net.createServer((c) => {
    c.on('data', (d) => c.write(d));
    c.on('end', () => c.end());
  });
  await new Promise<void>((r) => server.listen(t.tcpPort, host, r));
  await new Promise<void>((resolve, reject) => {
    const c = net.connect(t.tcpPort, host, () => c.end(Buffer.alloc(t.tcpBytesEachWay, 1)));
    c.on('data', () => undefined);
    c.on('close', () => resolve());
    c.on('error', reject);
  });
  await new Promise<void>((r) => server.close(() => r()));
  const receiver = dgram.createSocket(udpType);
  await new Promise<void>((r) => receiver.bind(t.udpPort, host, r));
  const sender = dgram.createSocket(udpType);
  for (const size of t.udpPayloads) await new Promise<void>((r) => sender.send(Buffer.alloc(size), t.udpPort, host, () => r()));
  await new Promise<void>((r) => sender.send(Buffer.alloc(10), t.closedPort, host, () => r()));
  for (let i = 0; i < t.udpFlows; i++) {
    const one = dgram.createSocket(udpType);
    await new Promise<void>((r) => one.send(Buffer.alloc(20 + i), t.udpPort, host, () => r()));
    one.close();
  }
  await sleep(100);
  sender.close();
  receiver.close();
}

/**
 * The test traffic's largest packet fits (its TCP segments carry at most a few KiB). With the
 * default 256 KiB snap length and 2 MiB buffer, a stopped tcpdump sent 30 datagrams kept 16: a
 * tcpdump that the loaded machine did not run for a moment lost the rest of a burst.
 */
const CAPTURE_SNAPLEN = 16_384;
/** tcpdump's kernel buffer, KiB: about a thousand packets of the snap length. */
const CAPTURE_BUFFER_KIB = 16_384;
/** How long tcpdump may take to write the traffic it was sent. */
const CAPTURE_WAIT_MS = 20_000;

/** UDP datagrams to `port` in the capture `file` so far (a record still being written is not counted). */
async function datagramsTo(file: string, port: number): Promise<number> {
  let count = 0;
  for await (const frames of readCaptureFile(file)) {
    for (const frame of frames) {
      const packet = decodeFrame(frame, {});
      if (packet?.protocol === 17 && packet.dstPort === port) count++;
    }
  }
  return count;
}

/** Waits until `file` holds `datagrams` UDP datagrams to `port`, at most `timeoutMs`. */
async function untilWritten(file: string, port: number, datagrams: number, timeoutMs: number): Promise<void> {
  let written = 0;
  for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(50)) {
    written = await datagramsTo(file, port);
    if (written >= datagrams) return;
  }
  throw new Error(`tcpdump wrote ${written} of the ${datagrams} datagrams to port ${port} within ${timeoutMs / 1000} s`);
}

/** A pcap of the traffic, made by tcpdump on lo with a filter for the chosen ports. */
export async function captureLoopback(dir: string, t: LoopbackTraffic): Promise<string> {
  const file = join(dir, 'capture.pcap');
  // ICMP only when it quotes a datagram to our closed port (the quoted UDP destination port,
  // after an IPv4 header without options or IPv6's fixed one): other tests' ICMP adds no flows.
  const icmp = `(icmp and icmp[30:2] = ${t.closedPort}) or (icmp6 and ip6[90:2] = ${t.closedPort})`;
  const filter = `host ${t.host ?? '127.0.0.1'} and (port ${t.tcpPort} or port ${t.udpPort} or port ${t.closedPort} or ${icmp})`;
  const args = ['-i', 'lo', '-Z', 'root', '--immediate-mode', '-U', '-s', String(CAPTURE_SNAPLEN), '-B', String(CAPTURE_BUFFER_KIB), '-w', file, filter];
  const tcpdump = spawn('tcpdump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('tcpdump did not start')), 5000);
    tcpdump.stderr.on('data', (d: Buffer) => {
      if (d.toString().includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    tcpdump.on('exit', () => reject(new Error('tcpdump exited')));
  });
  await makeTraffic(t);
  // tcpdump stopped by SIGINT writes no packet it has not yet read: on a loaded machine it ran
  // seconds behind, and a capture lost the last 30 datagrams. Stop it once the last one is written.
  await untilWritten(file, t.udpPort, t.udpPayloads.length + t.udpFlows, CAPTURE_WAIT_MS);
  const exited = new Promise((r) => tcpdump.on('exit', r));
  tcpdump.kill('SIGINT');
  await exited;
  return file;
}

/**
 * Runs softflowd over `pcap`, exporting to 127.0.0.1:`port` (inside a network
 * namespace when `prefix` is `ip netns exec NS`); returns its -D output. `-c none`: with a control socket softflowd 1.1.0 blocks in
 * accept() before reading the file.
 */
export async function runSoftflowd(pcap: string, port: number, version: '5' | '9' | '10', extraArgs: string[] = [], prefix: string[] = []): Promise<string> {
  const args = [
    ...prefix,
    'softflowd',
    '-D',
    '-r',
    pcap,
    '-n',
    `127.0.0.1:${port}`,
    '-v',
    version,
    '-c',
    'none',
    '-p',
    join(pcap, '..', 'softflowd.pid'),
    ...extraArgs,
  ];
  const child = spawn(args[0], args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  let verbose = '';
  child.stdout.on('data', (d: Buffer) => (verbose += d.toString()));
  child.stderr.on('data', (d: Buffer) => (verbose += d.toString()));
  const status = await new Promise<number | null>((r) => child.on('close', r));
  await sleep(200); // the last datagrams reach the receiving socket
  if (status !== 0) throw new Error(`softflowd failed (${status}): ${verbose}`);
  return verbose;
}

/** softflowd's export of `pcap` as datagrams, in arrival order, with its -D output. */
export async function softflowdExport(
  pcap: string,
  version: '5' | '9' | '10',
  extraArgs: string[] = [],
): Promise<{ datagrams: Buffer[]; port: number; verbose: string }> {
  const socket = dgram.createSocket('udp4');
  const datagrams: Buffer[] = [];
  socket.on('message', (m) => datagrams.push(m));
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const port = socket.address().port;
  try {
    return { datagrams, port, verbose: await runSoftflowd(pcap, port, version, extraArgs) };
  } finally {
    socket.close();
  }
}

export function withTempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'exports-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
