// Test helpers that make real protocol bytes on loopback: free ports, child processes with a
// deadline, and TCP/UDP relays that record what each side sends while passing it on.

import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { PacketHeaders } from '../../packet.js';

const LOOPBACK = '127.0.0.1';

/** A port free on loopback for both TCP and UDP at the time of asking. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const udp = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, LOOPBACK, () => resolve(true));
    });
    udp.close();
    if (udpFree) return port;
  }
  throw new Error('no loopback port free for both TCP and UDP after 20 attempts');
}

/** Runs a tool with an empty stdin to its end (or its deadline); its exit status is the caller's to judge. */
export function runTool(file: string, args: string[], timeoutMs = 10_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running tool and waits until `ready` matches its output (stdout or stderr). */
export async function startTool(file: string, args: string[], ready: RegExp, timeoutMs = 10_000): Promise<ChildProcess> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} not ready after ${timeoutMs} ms: ${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (ready.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${code}): ${seen}`));
    });
  });
  child.removeAllListeners('exit');
  return child;
}

export async function stopTool(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** What a relay saw: each connection's (or datagram exchange's) bytes from either side, in order. */
export interface Recording {
  port: number;
  fromClient: Buffer[];
  fromServer: Buffer[];
  close(): Promise<void>;
}

/** A TCP relay on a free loopback port to `targetPort`, recording both directions' bytes. */
export async function tcpRelay(targetPort: number): Promise<Recording> {
  const fromClient: Buffer[] = [];
  const fromServer: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = createConnection(targetPort, LOOPBACK);
    client.on('data', (chunk) => {
      fromClient.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      fromServer.push(chunk);
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    fromClient,
    fromServer,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A UDP relay for one client at a time to `targetPort`, recording queries and replies. */
export async function udpRelay(targetPort: number): Promise<Recording> {
  const fromClient: Buffer[] = [];
  const fromServer: Buffer[] = [];
  const front = createSocket('udp4');
  const back = createSocket('udp4');
  let client: { address: string; port: number } | undefined;
  front.on('message', (message, from) => {
    client = from;
    fromClient.push(message);
    back.send(message, targetPort, LOOPBACK);
  });
  back.on('message', (message) => {
    fromServer.push(message);
    if (client) front.send(message, client.port, client.address);
  });
  await new Promise<void>((resolve) => back.bind(0, LOOPBACK, resolve));
  await new Promise<void>((resolve) => front.bind(0, LOOPBACK, resolve));
  return {
    port: front.address().port,
    fromClient,
    fromServer,
    close: async () => {
      front.close();
      back.close();
    },
  };
}

/** A packet's headers as the decoder would fill them, carrying `payload` between the given ports. */
export function packetWith(payload: Uint8Array, ports: { protocol: 6 | 17; srcPort: number; dstPort: number }): PacketHeaders {
  return new PacketHeaders().setFrom({
    tsMicros: 0,
    wireLength: payload.length + 54,
    ipVersion: 4,
    src: '127.0.0.1',
    dst: '127.0.0.1',
    protocol: ports.protocol,
    ttl: 64,
    ipLength: payload.length + 40,
    fragment: 'none',
    srcPort: ports.srcPort,
    dstPort: ports.dstPort,
    payload,
    payloadLength: payload.length,
  });
}
