// The sockets seen on this host with their owners, looked up by a flow's ends. A socket is kept
// while the kernel lists it and for `retainMs` after it goes, since a flow's record leaves the
// meter after its connection closed (at once for a finished TCP connection, after the idle
// timeout for UDP). The index never holds more than `maxSockets` sockets: past that, the longest
// gone are forgotten first, and a new socket with no room is not remembered (both counted).

import type { ProcessInfo } from '../flowgen/types.js';
import type { SocketRow, SocketTransport } from './proc-net.js';

interface SocketEntry {
  row: SocketRow;
  process: ProcessInfo;
  firstSeenMs: number;
  lastSeenMs: number;
  /** Its key in `connected` or `bound`. */
  key: string;
}

export interface SocketIndexCounts {
  /** Gone sockets forgotten early to make room. */
  evicted: number;
  /** New sockets not remembered: the index was full of sockets still open. */
  not_remembered: number;
}

/** One end of a flow, as a record's `src`/`dst` gives it. */
export interface FlowEnd {
  ip: string;
  port?: number;
}

const WILDCARDS_V4 = ['0.0.0.0', '::'];
const WILDCARDS_V6 = ['::'];

const connectedKey = (t: string, localIp: string, localPort: number, remoteIp: string, remotePort: number) =>
  `${t}|${localIp}|${localPort}|${remoteIp}|${remotePort}`;
const boundKey = (t: string, ip: string, port: number) => `${t}|${ip}|${port}`;
const keyOf = (r: SocketRow) =>
  r.unconnected ? boundKey(r.transport, r.localIp, r.localPort) : connectedKey(r.transport, r.localIp, r.localPort, r.remoteIp, r.remotePort);

export class SocketIndex {
  private readonly open = new Map<string, SocketEntry>();
  /** Closed sockets by inode, in the order they went: the oldest expires or is evicted first. */
  private readonly gone = new Map<string, SocketEntry>();
  private readonly connected = new Map<string, SocketEntry>();
  private readonly bound = new Map<string, SocketEntry>();
  readonly counts: SocketIndexCounts = { evicted: 0, not_remembered: 0 };

  constructor(
    private readonly maxSockets: number,
    private readonly retainMs: number,
  ) {}

  get size(): number {
    return this.open.size + this.gone.size;
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Whether the inode is an open socket this index knows the owner of. */
  has(inode: string): boolean {
    return this.open.has(inode);
  }

  /** Marks a known socket as still open at `nowMs`; a socket that connected since is re-keyed. */
  touch(row: SocketRow, nowMs: number): void {
    const entry = this.open.get(row.inode);
    if (entry === undefined) return;
    entry.lastSeenMs = nowMs;
    const key = keyOf(row);
    if (key === entry.key) return;
    this.unlink(entry);
    entry.row = row;
    entry.key = key;
    this.link(entry);
  }

  add(row: SocketRow, process: ProcessInfo, firstSeenMs: number, nowMs: number): void {
    // An inode number is reused once its socket is gone.
    const old = this.gone.get(row.inode);
    if (old !== undefined) this.forget(old, this.gone);
    if (this.size >= this.maxSockets && !this.evictOldestGone()) {
      this.counts.not_remembered++;
      return;
    }
    const entry: SocketEntry = { row, process, firstSeenMs, lastSeenMs: nowMs, key: keyOf(row) };
    this.open.set(row.inode, entry);
    this.link(entry);
  }

  /** Moves sockets the last sample did not list to `gone`, and forgets those gone longer than retainMs. */
  sweep(listed: ReadonlySet<string>, nowMs: number): void {
    for (const [inode, entry] of this.open) {
      if (listed.has(inode)) continue;
      this.open.delete(inode);
      this.gone.set(inode, entry);
    }
    for (const entry of this.gone.values()) {
      if (nowMs - entry.lastSeenMs <= this.retainMs) break;
      this.forget(entry, this.gone);
    }
  }

  /**
   * The owner of the socket at `local` talking to `remote`, alive (within `slackMs`) while the flow
   * was: its own connected socket, else a listener or unconnected socket on the local port (bound
   * to the address, or to any address when `isHostAddress` says the address is this host's).
   */
  ownerOf(
    transport: SocketTransport,
    local: FlowEnd,
    remote: FlowEnd,
    flowStartMs: number,
    flowEndMs: number,
    slackMs: number,
    isHostAddress: (ip: string) => boolean,
  ): ProcessInfo | undefined {
    if (local.port === undefined) return undefined;
    const during = (e: SocketEntry | undefined) => e !== undefined && flowStartMs <= e.lastSeenMs + slackMs && flowEndMs >= e.firstSeenMs - slackMs;
    const exact = this.connected.get(connectedKey(transport, local.ip, local.port, remote.ip, remote.port ?? 0));
    if (during(exact)) return exact!.process;
    const specific = this.bound.get(boundKey(transport, local.ip, local.port));
    if (during(specific)) return specific!.process;
    if (!isHostAddress(local.ip)) return undefined;
    for (const wildcard of local.ip.includes(':') ? WILDCARDS_V6 : WILDCARDS_V4) {
      const any = this.bound.get(boundKey(transport, wildcard, local.port));
      if (during(any)) return any!.process;
    }
    return undefined;
  }

  private evictOldestGone(): boolean {
    const oldest = this.gone.values().next();
    if (oldest.done) return false;
    this.forget(oldest.value, this.gone);
    this.counts.evicted++;
    return true;
  }

  private forget(entry: SocketEntry, from: Map<string, SocketEntry>): void {
    from.delete(entry.row.inode);
    this.unlink(entry);
  }

  /** The newest socket on a key wins: a port reused by a later connection names its new owner. */
  private link(entry: SocketEntry): void {
    (entry.row.unconnected ? this.bound : this.connected).set(entry.key, entry);
  }

  private unlink(entry: SocketEntry): void {
    const map = entry.row.unconnected ? this.bound : this.connected;
    if (map.get(entry.key) === entry) map.delete(entry.key);
  }
}
