// The kernel's socket tables (/proc/net/tcp, tcp6, udp, udp6) as rows: who talks to whom on this
// host, and the inode that ties each socket to the file descriptor of the process owning it.
// Addresses come out as flow records write them (dotted quad, RFC 5952), so a row and a record
// compare as text.

import { endianness } from 'node:os';
import { formatIPv6 } from '../meter/address.js';

export type SocketTransport = 'TCP' | 'UDP';

export interface SocketRow {
  transport: SocketTransport;
  localIp: string;
  localPort: number;
  remoteIp: string;
  remotePort: number;
  /** A TCP listener, or a UDP socket with no connected peer: it matches by its local end only. */
  unconnected: boolean;
  /** The socket's owner (the creating process's fs uid). */
  uid: number;
  /** The socket inode, as `/proc/<pid>/fd/*` links name it (`socket:[inode]`). */
  inode: string;
}

export const SOCKET_TABLES: readonly { file: string; transport: SocketTransport }[] = [
  { file: 'tcp', transport: 'TCP' },
  { file: 'tcp6', transport: 'TCP' },
  { file: 'udp', transport: 'UDP' },
  { file: 'udp6', transport: 'UDP' },
];

const TCP_LISTEN = '0A';
// The kernel prints each 32-bit word of an address as a native integer: on a little-endian host
// the bytes of each word come out reversed.
const LITTLE_ENDIAN = endianness() === 'LE';
const ADDRESS = /^([0-9A-F]{8}|[0-9A-F]{32}):([0-9A-F]{4})$/;
const DECIMAL = /^\d+$/;

/** `::ffff:a.b.c.d` (a v4 peer of a v6 socket) as the a.b.c.d a captured IPv4 packet shows. */
export function plainIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

function wordBytes(hex: string, out: Uint8Array): void {
  for (let word = 0; word < hex.length / 8; word++) {
    for (let i = 0; i < 4; i++) {
      const at = word * 8 + (LITTLE_ENDIAN ? (3 - i) * 2 : i * 2);
      out[word * 4 + i] = parseInt(hex.slice(at, at + 2), 16);
    }
  }
}

function parseAddress(field: string): { ip: string; port: number } | undefined {
  const m = ADDRESS.exec(field);
  if (!m) return undefined;
  const bytes = new Uint8Array(m[1].length / 2);
  wordBytes(m[1], bytes);
  const ip = bytes.length === 4 ? bytes.join('.') : plainIp(formatIPv6(bytes, 0));
  return { ip, port: parseInt(m[2], 16) };
}

/**
 * The rows of one table's text, at most `maxRows`; a line that does not read as a socket (the
 * header aside) counts in `bad`. Sockets no process holds any more (inode 0: TIME_WAIT, a
 * connection waiting to be accepted) are skipped: they have no owner to find. Never throws.
 */
export function parseSocketTable(text: string, transport: SocketTransport, maxRows: number, bad: { lines: number; overLimit: number }): SocketRow[] {
  const rows: SocketRow[] = [];
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ...
    const f = line.trim().split(/\s+/);
    if (f[9] === '0') continue;
    if (rows.length >= maxRows) {
      bad.overLimit++;
      continue;
    }
    const local = f.length >= 10 ? parseAddress(f[1]) : undefined;
    const remote = local ? parseAddress(f[2]) : undefined;
    if (!local || !remote || !DECIMAL.test(f[7]) || !DECIMAL.test(f[9])) {
      bad.lines++;
      continue;
    }
    rows.push({
      transport,
      localIp: local.ip,
      localPort: local.port,
      remoteIp: remote.ip,
      remotePort: remote.port,
      unconnected: transport === 'TCP' ? f[3] === TCP_LISTEN : remote.port === 0,
      uid: Number(f[7]),
      inode: f[9],
    });
  }
  return rows;
}
