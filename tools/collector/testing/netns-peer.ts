// Run inside a test namespace by netns.ts (`ip netns exec NS node --import tsx netns-peer.ts MODE …`);
// prints one JSON line when ready or done.
//   serve HOST                  a TCP server answering 2,000 bytes to any request and a UDP server
//                               answering each datagram with one twice its size; prints {tcp, udp}
//   client HOST TCP UDP         sends 700 bytes over TCP and reads the answer to the end, then UDP
//                               datagrams of 40 and 90 bytes, each answered; prints {tcp, udp}, the
//                               client ports
//   bridge SOCKET               listens on 127.0.0.1 and pipes each connection to the unix SOCKET;
//                               prints {port}
//   relay PORT DROP             forwards UDP datagrams to 127.0.0.1:PORT from a socket of its own,
//                               except the DROP-th (1-based): a lost export datagram; prints
//                               {port, from}: where to send, and the port the datagrams come from
// Every mode ends by itself within 120 s at most.

import { createSocket } from 'node:dgram';
import { connect, createServer, type AddressInfo } from 'node:net';
import { splice } from './netns.js';

const [mode, ...args] = process.argv.slice(2);
setTimeout(() => process.exit(3), 120_000).unref();
const print = (value: unknown) => process.stdout.write(JSON.stringify(value) + '\n');

async function serve(host: string): Promise<void> {
  const tcp = createServer((socket) => {
    socket.once('data', () => socket.end('r'.repeat(2000)));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tcp.listen(0, host, resolve));
  const udp = createSocket('udp4');
  udp.on('message', (message, from) => udp.send(Buffer.alloc(message.length * 2, 0x62), from.port, from.address));
  await new Promise<void>((resolve) => udp.bind(0, host, resolve));
  print({ tcp: (tcp.address() as AddressInfo).port, udp: udp.address().port });
  await new Promise((resolve) => process.stdin.on('close', resolve).resume());
  process.exit(0);
}

async function client(host: string, tcpPort: number, udpPort: number): Promise<void> {
  const tcp = await new Promise<number>((resolve, reject) => {
    const socket = connect(tcpPort, host, () => socket.write('q'.repeat(700)));
    socket.on('data', () => undefined);
    socket.once('end', () => socket.end());
    socket.once('close', () => resolve(local));
    socket.once('error', reject);
    let local = 0;
    socket.once('connect', () => (local = socket.localPort!));
  });
  const sender = createSocket('udp4');
  await new Promise<void>((resolve) => sender.bind(0, resolve));
  for (const size of [40, 90]) {
    const answered = new Promise((resolve) => sender.once('message', resolve));
    sender.send(Buffer.alloc(size, 0x61), udpPort, host);
    await answered;
  }
  print({ tcp, udp: sender.address().port });
  sender.close();
}

async function bridge(socketPath: string): Promise<void> {
  const server = createServer((inbound) => splice(inbound, connect(socketPath)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  print({ port: (server.address() as AddressInfo).port });
}

async function relay(target: number, drop: number): Promise<void> {
  const inbound = createSocket('udp4');
  const outbound = createSocket('udp4');
  await new Promise<void>((resolve) => inbound.bind(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => outbound.bind(0, '127.0.0.1', resolve));
  let received = 0;
  inbound.on('message', (datagram) => {
    if (++received !== drop) outbound.send(datagram, target, '127.0.0.1');
  });
  print({ port: inbound.address().port, from: outbound.address().port });
}

const modes: Record<string, () => Promise<void>> = {
  serve: () => serve(args[0]),
  client: () => client(args[0], Number(args[1]), Number(args[2])),
  bridge: () => bridge(args[0]),
  relay: () => relay(Number(args[0]), Number(args[1])),
};
if (!(mode in modes)) {
  process.stderr.write(`netns-peer: unknown mode ${mode}\n`);
  process.exit(2);
}
modes[mode]().catch((error: Error) => {
  process.stderr.write(`netns-peer: ${error.stack}\n`);
  process.exit(1);
});
