// Inspections per second on one core, on a real ClientHello (curl) and a real DNS response
// (dnsmasq, answering dig), both captured on loopback first.
//   npx tsx tools/collector/meter/app/bench.ts

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PacketHeaders } from '../packet.js';
import { inspect } from './index.js';
import { freePort, packetWith, runTool, startTool, stopTool, tcpRelay, udpRelay } from './testing/loopback.js';

async function clientHello(): Promise<Buffer> {
  const server = createServer((socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relay = await tcpRelay((server.address() as AddressInfo).port);
  await runTool('curl', [
    '-sk',
    '--max-time',
    '5',
    '--http2',
    '--resolve',
    `bench.example.test:${relay.port}:127.0.0.1`,
    `https://bench.example.test:${relay.port}/`,
  ]);
  await relay.close();
  server.close();
  return Buffer.concat(relay.fromClient);
}

async function dnsResponse(): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'meter-bench-'));
  const port = await freePort();
  const dnsmasq = await startTool(
    'dnsmasq',
    [
      '--no-daemon',
      `--port=${port}`,
      '--listen-address=127.0.0.1',
      '--bind-interfaces',
      '--no-resolv',
      '--no-hosts',
      '--conf-file=/dev/null',
      `--pid-file=${join(dir, 'pid')}`,
      '--log-facility=-',
      '--host-record=www.example.test,192.0.2.10,2001:db8::10',
      '--cname=alias.example.test,www.example.test',
    ],
    /started/,
  );
  try {
    const relay = await udpRelay(port);
    await runTool('dig', ['@127.0.0.1', '-p', String(relay.port), 'alias.example.test', 'A', '+tries=1', '+time=3']);
    await relay.close();
    return relay.fromServer[0];
  } finally {
    await stopTool(dnsmasq);
    rmSync(dir, { recursive: true, force: true });
  }
}

function rate(label: string, packet: PacketHeaders, fromInitiator: boolean): void {
  const hints = inspect(packet, fromInitiator).hints;
  if (hints === undefined) throw new Error(`${label}: nothing recognised`);
  for (let i = 0; i < 20_000; i++) inspect(packet, fromInitiator); // warm up
  const start = process.hrtime.bigint();
  let count = 0;
  while (process.hrtime.bigint() - start < 1_000_000_000n) {
    for (let i = 0; i < 1000; i++) inspect(packet, fromInitiator);
    count += 1000;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`${label}: ${Math.round(count / seconds).toLocaleString('en')} inspections/s (${packet.capturedPayload} bytes) ${JSON.stringify(hints)}`);
}

const hello = await clientHello();
const response = await dnsResponse();
rate('TLS ClientHello', packetWith(hello, { protocol: 6, srcPort: 40000, dstPort: 443 }), true);
rate('DNS response', packetWith(response, { protocol: 17, srcPort: 53, dstPort: 40000 }), false);
