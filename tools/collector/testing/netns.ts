// Test kit: two network namespaces joined by a veth pair, for live capture and exporters on a
// real interface without touching the host's network. Names carry the test process's pid, the
// veth ends exist only inside the namespaces, and remove() deletes both namespaces (with them the
// veth and every socket in them). Needs root (`ip netns`).

import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PEER = fileURLToPath(new URL('./netns-peer.ts', import.meta.url));
let pairs = 0;

export interface NamespaceEnd {
  /** The namespace's name. */
  ns: string;
  /** Its veth end. */
  iface: string;
  address: string;
  /** The command prefix that runs a command inside the namespace. */
  exec: string[];
}

export interface NamespacePair {
  a: NamespaceEnd;
  b: NamespaceEnd;
  remove(): Promise<void>;
}

/** Creates namespaces `<prefix><pid>a`/`b`, a veth between them (10.77.0.1/24 in a, .2 in b), both loopbacks up. */
export async function createNamespacePair(prefix: string): Promise<NamespacePair> {
  const base = `${prefix}${process.pid}${String.fromCharCode(97 + (pairs++ % 26))}`;
  const end = (side: 'a' | 'b', address: string): NamespaceEnd => ({
    ns: `${base}${side}`,
    iface: `veth${side}`,
    address,
    exec: ['ip', 'netns', 'exec', `${base}${side}`],
  });
  const a = end('a', '10.77.0.1');
  const b = end('b', '10.77.0.2');
  const remove = async () => {
    for (const ns of [a.ns, b.ns]) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
  };
  try {
    for (const ns of [a.ns, b.ns]) await run('ip', ['netns', 'add', ns]);
    await run('ip', ['link', 'add', a.iface, 'netns', a.ns, 'type', 'veth', 'peer', 'name', b.iface, 'netns', b.ns]);
    for (const side of [a, b]) {
      await run(side.exec[0], [...side.exec.slice(1), 'ip', 'addr', 'add', `${side.address}/24`, 'dev', side.iface]);
      await run(side.exec[0], [...side.exec.slice(1), 'ip', 'link', 'set', side.iface, 'up']);
      await run(side.exec[0], [...side.exec.slice(1), 'ip', 'link', 'set', 'lo', 'up']);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { a, b, remove };
}

/** Pipes two sockets into each other; an error on either ends both. */
export function splice(inbound: Socket, outbound: Socket): void {
  inbound.pipe(outbound).pipe(inbound);
  inbound.on('error', () => outbound.destroy());
  outbound.on('error', () => inbound.destroy());
}

/** A `netns-peer.ts` process inside a namespace; `line()` reads what it prints, one JSON line at a time. */
export interface Peer {
  line(): Promise<unknown>;
  exited: Promise<number | null>;
  kill(): void;
}

export function startPeer(end: NamespaceEnd, args: string[]): Peer {
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(
    end.exec[0],
    [...end.exec.slice(1), process.execPath, '--import', 'tsx', PEER, ...args],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    stdout += d;
    for (let at = stdout.indexOf('\n'); at >= 0; at = stdout.indexOf('\n')) {
      const line = stdout.slice(0, at);
      stdout = stdout.slice(at + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  void exited.then(() => clearTimeout(killer));
  return {
    line: () =>
      new Promise((resolve, reject) => {
        const parse = (line: string) => resolve(JSON.parse(line));
        if (lines.length > 0) return parse(lines.shift()!);
        waiting.push(parse);
        void exited.then((code) => reject(new Error(`peer ${args.join(' ')} exited ${code}: ${stderr}`)));
      }),
    exited,
    kill: () => child.kill('SIGTERM'),
  };
}

/**
 * Lets a namespace reach a loopback port of this process's namespace: a unix socket here pipes to
 * 127.0.0.1:`port`, and a peer inside the namespace listens on its own 127.0.0.1 and pipes to the
 * socket (a path in the file system is reachable from any network namespace). Resolves with the
 * port to use inside the namespace.
 */
export async function bridgeLoopback(end: NamespaceEnd, port: number, socketPath: string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((inbound) => splice(inbound, connect(port, '127.0.0.1')));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const peer = startPeer(end, ['bridge', socketPath]);
  const { port: inside } = (await peer.line()) as { port: number };
  return {
    port: inside,
    async close() {
      peer.kill();
      await peer.exited;
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
