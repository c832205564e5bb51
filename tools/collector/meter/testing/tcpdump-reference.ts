// What tcpdump itself reads from a capture, as the reference metered flows are held to: each IPv4
// TCP/UDP packet's time, protocol, ports and IP length, per `tcpdump -r FILE -nn -tt -v`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One packet as `tcpdump -r FILE -nn -tt -v` prints it. */
export interface Seen {
  ms: number;
  proto: string;
  src: number;
  dst: number;
  ipLength: number;
}

export async function readWithTcpdump(file: string): Promise<Seen[]> {
  const { stdout } = await run('tcpdump', ['-r', file, '-nn', '-tt', '-v'], { timeout: 10_000 });
  const seen: Seen[] = [];
  // "1795781656.470832 IP (tos 0x0, ttl 64, …, proto UDP (17), length 128)\n    127.0.0.1.35817 > 127.0.0.1.45999: …"
  const packet = /^(\d+)\.(\d{6}) IP \(.*proto (\w+) \(\d+\), length (\d+)\)\n\s+[\d.]+\.(\d+) > [\d.]+\.(\d+):/gm;
  for (const m of stdout.matchAll(packet)) {
    seen.push({ ms: Number(m[1]) * 1000 + Math.floor(Number(m[2]) / 1000), proto: m[3], src: Number(m[5]), dst: Number(m[6]), ipLength: Number(m[4]) });
  }
  return seen;
}

/** What the flow of `proto` to server port `server` must show, per tcpdump: ports, first-packet time, packets and IP bytes each way. */
export function expectedFlow(seen: Seen[], proto: string, server: number) {
  const packets = seen.filter((p) => p.proto === proto && (p.src === server || p.dst === server));
  const client = packets[0].src === server ? packets[0].dst : packets[0].src;
  const way = (from: number) => {
    const sent = packets.filter((p) => p.src === from);
    return { count: sent.length, sum: sent.reduce((n, p) => n + p.ipLength, 0) };
  };
  return {
    '@timestamp': packets[0].ms,
    src: { port: client },
    dst: { port: server },
    transport: { proto },
    stats: { volume: { bytes: { src: way(client), dst: way(server) } } },
  };
}
