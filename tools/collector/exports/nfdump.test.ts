// A second, independent reader of the same exports: Debian's nfcapd receives
// softflowd's export and nfdump prints it; our decoder must read the same
// flows (protocol, ports, packets, bytes) from the same softflowd run.

import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExportDecoder } from './decode.js';
import { captureLoopback, runSoftflowd, withTempDir } from '../testing/softflowd.js';

let temp: ReturnType<typeof withTempDir>;
let pcap: string;

/** Attempts at nfcapd's reading of an export, on a machine loaded enough that its socket drops datagrams. */
const ATTEMPTS = 3;
/** More TCP and UDP flows than this in the capture, or the comparison says little. */
const ENOUGH_FLOWS = 20;

/** The TCP and UDP flows softflowd says it exported (the EXPIRED lines of its -D output). */
function exportedFlows(verbose: string): number {
  return verbose.split('\n').filter((l) => l.startsWith('EXPIRED:') && / proto:(6|17) /.test(l)).length;
}

beforeAll(async () => {
  temp = withTempDir();
  pcap = await captureLoopback(temp.dir, {
    tcpPort: 47301,
    udpPort: 47302,
    closedPort: 47303,
    tcpBytesEachWay: 700,
    udpPayloads: [50, 60, 70],
    udpFlows: 30,
  });
}, 60_000);

afterAll(() => temp?.remove());

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const port = socket.address().port;
  await new Promise<void>((r) => socket.close(() => r()));
  return port;
}

/** Waits until a UDP socket is bound to 127.0.0.1:`port` (Linux: /proc/net/udp), at most `timeoutMs`. */
async function waitUntilUdpBound(port: number, timeoutMs: number): Promise<void> {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    if (readFileSync('/proc/net/udp', 'utf8').includes(` ${local} `)) return;
  }
  throw new Error(`nfcapd did not listen on UDP ${port} within ${timeoutMs / 1000} s`);
}

/**
 * "proto sport>dport bytes/packets" of each TCP/UDP flow nfdump reads from nfcapd's files. nfcapd
 * is given the export again (a bounded number of times) when it read fewer flows than softflowd
 * sent: on a loaded machine its socket can drop datagrams.
 */
async function nfdumpFlows(version: '5' | '9' | '10'): Promise<string[]> {
  let flows: string[] = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const read = await nfcapdRead(version, join(temp.dir, `nfcapd-v${version}-${attempt}`));
    flows = read.flows;
    if (flows.length >= read.sent) break;
  }
  return flows;
}

async function nfcapdRead(version: '5' | '9' | '10', dir: string): Promise<{ flows: string[]; sent: number }> {
  mkdirSync(dir);
  const port = await freeUdpPort();
  const nfcapd = spawn('nfcapd', ['-p', String(port), '-b', '127.0.0.1', '-w', dir, '-t', '60'], { stdio: ['ignore', 'ignore', 'ignore'] });
  // softflowd must not export before nfcapd listens: the datagrams sent before are lost, and on a
  // loaded machine nfcapd took more than the 3 s once allowed (13 of 38 flows read).
  await waitUntilUdpBound(port, 15_000);
  let sent = 0;
  try {
    sent = exportedFlows(await runSoftflowd(pcap, port, version));
  } finally {
    const exited = new Promise((r) => nfcapd.on('exit', r));
    nfcapd.kill('SIGTERM'); // nfcapd writes its file on the way out
    await exited;
  }
  const csv = spawnSync('nfdump', ['-R', dir, '-q', '-o', 'fmt:%pr %sp %dp %byt %pkt', '-N'], { encoding: 'utf8', timeout: 10_000 });
  const flows = csv.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[0] === '6' || f[0] === '17') // -N: protocols and counts as plain numbers
    .map(([pr, sp, dp, byt, pkt]) => `${pr} ${sp}>${dp} ${byt}/${pkt}`)
    .sort();
  return { flows, sent };
}

it.each(['5', '9', '10'] as const)('reads the TCP and UDP flows nfdump reads from softflowd -v %s', async (version) => {
  const expected = await nfdumpFlows(version);
  const socket = dgram.createSocket('udp4');
  const decoder = new ExportDecoder({ customerId: 'c1' });
  const records: string[] = [];
  socket.on('message', (m, from) => {
    for (const r of decoder.decode(m, from.address, from.port)) {
      if (r.transport.proto_num === 6 || r.transport.proto_num === 17)
        records.push(`${r.transport.proto_num} ${r.src.port}>${r.dst.port} ${r.stats.volume.bytes.src.sum}/${r.stats.volume.packets.src}`);
    }
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  try {
    await runSoftflowd(pcap, socket.address().port, version);
  } finally {
    socket.close();
  }
  expect(expected.length).toBeGreaterThan(ENOUGH_FLOWS);
  expect(records.sort()).toEqual(expected);
  expect(decoder.drops).toEqual({});
});
