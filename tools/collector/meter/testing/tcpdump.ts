// Real captures for the meter's tests: Debian's tcpdump on a loopback interface while the test
// makes traffic to 127.0.0.1 and ::1 only. Every capture is bounded in time and its files removed.
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TcpdumpOptions {
  iface: string;
  filter: string;
  /** Extra tcpdump arguments, e.g. ['-y', 'LINUX_SLL'] or ['--time-stamp-precision', 'nano']. */
  args?: string[];
  /** Prefix for the command, e.g. ['ip', 'netns', 'exec', NAME]. */
  wrapper?: string[];
}

/** A running tcpdump writing to a temporary file; stop() ends it and returns the file's bytes. */
export interface RunningCapture {
  stop(): Promise<FinishedCapture>;
}

export interface FinishedCapture {
  bytes: Uint8Array;
  /** What tcpdump says the kernel dropped: on a loaded machine the "any" device's ring sometimes overflows. */
  droppedByKernel: number;
}

/**
 * tcpdump's kernel buffer, KiB. With the default 2 MiB and snap length (kept: loopback segments
 * reach 64 KiB), a stopped tcpdump sent 30 datagrams kept 16; with this, all 30. A tcpdump the
 * loaded machine does not run for a moment must not lose a burst.
 */
const CAPTURE_BUFFER_KIB = 65_536;

export async function startTcpdump(options: TcpdumpOptions): Promise<RunningCapture> {
  const dir = mkdtempSync(join(tmpdir(), 'meter-capture-'));
  const file = join(dir, 'capture.pcap');
  const command = [
    ...(options.wrapper ?? []),
    'tcpdump',
    '-i',
    options.iface,
    '--immediate-mode',
    '-U',
    '-B',
    String(CAPTURE_BUFFER_KIB),
    '-n',
    '-w',
    file,
    ...(options.args ?? []),
    options.filter,
  ];
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  // tcpdump says "listening on" once its socket is open: traffic sent before that would be missed.
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (text: Buffer) => {
      stderr += text.toString();
      if (stderr.includes('listening on')) resolve();
    });
    child.once('exit', () => reject(new Error(`tcpdump ${command.join(' ')} exited: ${stderr}`)));
  }).catch((error: unknown) => {
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    async stop() {
      // Immediate mode and -U write every packet as it comes (TPACKET_V3 would otherwise hold a block
      // up to a second); a short pause lets the last ones through the kernel.
      await new Promise((resolve) => setTimeout(resolve, 300));
      child.kill('SIGINT');
      await exited;
      clearTimeout(killer);
      try {
        const dropped = /(\d+) packets? dropped by kernel/.exec(stderr);
        return { bytes: new Uint8Array(readFileSync(file)), droppedByKernel: Number(dropped?.[1] ?? 0) };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export async function ping(host: string, size: number, count: number, wrapper: string[] = []): Promise<void> {
  const command = [...wrapper, 'ping', ...(host.includes(':') ? ['-6'] : []), '-c', String(count), '-i', '0.2', '-s', String(size), '-W', '2', host];
  await run(command[0], command.slice(1), { timeout: 10_000 });
}

/** A TCP server and a UDP socket listening on `host`, ready before the capture starts so its filter can name their ports. */
export interface LoopbackPeers {
  host: string;
  tcpPort: number;
  udpPort: number;
  /** A client sends `request`, the server answers `response`, both close (FIN each way). */
  exchangeTcp(request: string, response: string): Promise<void>;
  /** Datagrams of the given sizes to the UDP socket, waiting until each has arrived. */
  sendUdp(sizes: number[]): Promise<void>;
  close(): Promise<void>;
}

export async function listenOnLoopback(host: '127.0.0.1' | '::1'): Promise<LoopbackPeers> {
  let response = '';
  const server = createServer((socket) => {
    socket.once('data', () => socket.end(response));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const udp = createSocket(host === '::1' ? 'udp6' : 'udp4');
  await new Promise<void>((resolve) => udp.bind(0, host, resolve));
  const tcpPort = (server.address() as AddressInfo).port;
  const udpPort = udp.address().port;
  return {
    host,
    tcpPort,
    udpPort,
    async exchangeTcp(request, answer) {
      response = answer;
      await new Promise<void>((resolve, reject) => {
        const client = connect(tcpPort, host, () => client.write(request));
        client.on('data', () => undefined);
        client.once('end', () => client.end());
        client.once('close', () => resolve());
        client.once('error', reject);
      });
    },
    async sendUdp(sizes) {
      const sender = createSocket(host === '::1' ? 'udp6' : 'udp4');
      for (const size of sizes) {
        const arrived = new Promise((resolve) => udp.once('message', resolve));
        sender.send(Buffer.alloc(size, 0x61), udpPort, host);
        await arrived;
      }
      sender.close();
    },
    async close() {
      udp.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
