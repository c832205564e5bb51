// Host context for the packet meter: which process on this host owns each end of a flow.
//
// The kernel's socket tables are the only place a socket's addresses meet its inode, and reading
// them costs the kernel a walk of its whole connection hash (4 ms per table on a machine with
// 262,144 buckets, whatever the number of sockets). So the tables are read on two occasions:
// - every `tablePeriodMs`, a full sample: sockets not seen before send it looking for their
//   owners under /proc/<pid>/fd, newest processes first (proc-owners.ts);
// - on a tick (every `periodMs`, costing a listing of /proc), when a process started in the last
//   `youngMs` holds a socket not yet known: a short-lived client such as curl is caught while its
//   connection is open, without reading the tables every few milliseconds.
// A finished flow record then gets `src.process` when its source is a socket of this host,
// `dst.process` when its destination is (a server's accepted socket, or its listener).
// Everything is bounded: sockets remembered, rows read, processes watched, time spent searching.

import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { FlowRecord, ProcessInfo } from '../flowgen/types.js';
import { parseSocketTable, plainIp, SOCKET_TABLES, type SocketRow, type SocketTransport } from './proc-net.js';
import {
  emptyOwnerSearchCounts,
  findSocketOwners,
  pidsNewestFirst,
  readProcess,
  socketInodesOf,
  type OwnerSearchCounts,
  type SearchResume,
} from './proc-owners.js';
import { SocketIndex, type FlowEnd, type SocketIndexCounts } from './socket-index.js';
import { UserNames } from './user-names.js';

export interface ProcessSocketsOptions {
  /** Time between ticks: a new process's socket that lives shorter than this may be missed (docs/meter.md). */
  periodMs: number;
  /** Time between full samples of the socket tables (which catch new sockets of older processes). */
  tablePeriodMs: number;
  /** How long after it starts a process is watched on every tick. */
  youngMs: number;
  /** Young processes watched at once (the newest). */
  maxYoung: number;
  /** How long a closed socket is still matched to the flow records leaving the meter after it. */
  retainMs: number;
  /** Sockets remembered (open and recently closed), and rows read per sample. */
  maxSockets: number;
  /** Time one sample may spend searching /proc/<pid>/fd for owners; the rest waits for the next. */
  searchBudgetMs: number;
  /** Where procfs is mounted (a container may mount the host's elsewhere). */
  proc: string;
  passwd: string;
}

export const DEFAULT_PROCESS_SOCKETS: ProcessSocketsOptions = {
  periodMs: 10,
  tablePeriodMs: 1000,
  youngMs: 1000,
  maxYoung: 64,
  retainMs: 120_000,
  maxSockets: 65_536,
  searchBudgetMs: 20,
  proc: '/proc',
  passwd: '/etc/passwd',
};

export interface ProcessSocketsStats extends OwnerSearchCounts, SocketIndexCounts {
  ticks: number;
  /** Wall time of all ticks, samples included (ms): divided by `ticks`, the cost of one. */
  tick_ms_total: number;
  /** Reads of the socket tables: full samples and those a young process's new socket asked for. */
  samples: number;
  /** Socket tables that could not be read (a kernel without IPv6 has no tcp6/udp6). */
  tables_unreadable: string[];
  /** Lines of a socket table that did not read as a socket. */
  bad_lines: number;
  /** Rows past `maxSockets` in one sample, not read. */
  rows_over_limit: number;
  /** Processes started since the last tick that did not fit in `maxYoung`. */
  young_over_limit: number;
  /** Young processes no longer watched: their sockets sent 4 table reads that found none of them. */
  young_given_up: number;
  /** Sockets remembered now, and of them still open. */
  sockets: number;
  sockets_open: number;
  /** A search cut at its deadline has processes left to read (the next samples read them). */
  search_pending: boolean;
  /** Open sockets whose owner no search could find (another user's, when unprivileged; or no process holds them). */
  sockets_unowned: number;
  /** Open sockets still being searched for: a search over every process begun after they appeared has not ended. */
  sockets_searching: number;
  records: number;
  src_attributed: number;
  dst_attributed: number;
}

/** Open sockets not (yet) in the index: when first listed, and from which search on a miss means nobody holds them. */
interface Pending {
  firstSeenMs: number;
  settlesWithCycle: number;
}

/**
 * A process watched on every tick: since when, how often each of its sockets sent a tick to the
 * tables, and how many of those reads found none of them.
 */
interface Young {
  sinceMs: number;
  tries: Map<string, number>;
  misses: number;
}

/** A young process's socket missing from the tables this often is not a TCP/UDP one (unix, netlink): left alone. */
const TRIES_PER_SOCKET = 2;
/**
 * A young process whose sockets sent this many table reads for nothing is no longer watched, so
 * the reads young processes cause stay bounded by how fast processes start (a program opening
 * unix sockets one after another would otherwise cost a read every tick).
 */
const MISSES_PER_PROCESS = 4;
const HOST_ADDRESSES_TTL_MS = 10_000;

export class ProcessSockets {
  private readonly options: ProcessSocketsOptions;
  private readonly index: SocketIndex;
  private readonly pending = new Map<string, Pending>();
  private readonly users: UserNames;
  private readonly search = emptyOwnerSearchCounts();
  private readonly counts = {
    ticks: 0,
    tick_ms_total: 0,
    samples: 0,
    bad_lines: 0,
    rows_over_limit: 0,
    young_over_limit: 0,
    young_given_up: 0,
    records: 0,
    src_attributed: 0,
    dst_attributed: 0,
  };
  private readonly unreadable = new Set<string>();
  private readonly young = new Map<number, Young>();
  private pids = new Set<number>();
  private lastSampleMs = -Infinity;
  private hostAddresses = new Set<string>();
  private hostAddressesAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  /** Set while a search cut by its deadline has processes left to read. */
  private resume: SearchResume | undefined;
  /** Searches over every process, counted when each begins (a cut one ends in a later sample). */
  private cycle = 0;

  constructor(options: Partial<ProcessSocketsOptions> = {}) {
    this.options = { ...DEFAULT_PROCESS_SOCKETS, ...options };
    for (const key of ['periodMs', 'tablePeriodMs', 'youngMs', 'maxYoung', 'retainMs', 'maxSockets', 'searchBudgetMs'] as const) {
      const value = this.options[key];
      if (!Number.isFinite(value) || value <= 0) throw new RangeError(`process sockets: ${key} must be a positive number, got ${value}`);
    }
    this.index = new SocketIndex(this.options.maxSockets, this.options.retainMs);
    this.users = new UserNames(this.options.passwd);
  }

  /** Samples now, then ticks every periodMs until stop(); the timer does not keep the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    // Processes already running are the full samples' business, not young.
    this.pids = new Set(this.listPids());
    this.sample();
    this.timer = setInterval(() => this.tick(), this.options.periodMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  stats(): ProcessSocketsStats {
    let unowned = 0;
    for (const p of this.pending.values()) if (this.settled(p)) unowned++;
    const searching = this.pending.size - unowned;
    return {
      ...this.counts,
      ...this.search,
      ...this.index.counts,
      tables_unreadable: [...this.unreadable],
      sockets: this.index.size,
      sockets_open: this.index.openCount,
      sockets_unowned: unowned,
      sockets_searching: searching,
      search_pending: this.resume !== undefined,
    };
  }

  /**
   * A look at the young processes' sockets, reading the tables when one holds a socket not yet
   * placed; and a full sample when one is due. Only a full sample searches for owners: a tick
   * that reads the tables for a young process stays as short as the read.
   */
  tick(): void {
    const started = performance.now();
    const claimed = this.youngSockets(Date.now());
    const due = Date.now() - this.lastSampleMs >= this.options.tablePeriodMs;
    if (due || claimed.size > 0) this.sample(claimed, due);
    this.countMisses(claimed);
    this.counts.ticks++;
    this.counts.tick_ms_total += performance.now() - started;
  }

  /**
   * One read of the socket tables. Sockets in `claimed` (inode → the young process holding it)
   * get that owner; other sockets new since the last full sample are searched for when `full`.
   */
  sample(claimed: ReadonlyMap<string, number> = new Map(), full = true): void {
    const now = Date.now();
    if (full) this.lastSampleMs = now;
    this.counts.samples++;
    const listed = new Set<string>();
    const fresh: SocketRow[] = [];
    const wanted = new Map<string, number>();
    for (const row of this.readTables()) {
      if (listed.has(row.inode)) continue;
      listed.add(row.inode);
      if (this.index.has(row.inode)) {
        this.index.touch(row, now);
        continue;
      }
      let pending = this.pending.get(row.inode);
      if (pending === undefined) {
        // The next search to start from the newest process is the first that can say nobody holds it.
        pending = { firstSeenMs: now, settlesWithCycle: this.cycle + 1 };
        this.pending.set(row.inode, pending);
      }
      const pid = claimed.get(row.inode);
      const owner = pid === undefined ? undefined : readProcess(this.options.proc, pid, row.uid, this.users);
      if (owner !== undefined) {
        this.pending.delete(row.inode);
        this.index.add(row, owner, now, now);
      } else if (!this.settled(pending)) {
        fresh.push(row);
        wanted.set(row.inode, row.uid);
      }
    }
    this.index.sweep(listed, now);
    for (const inode of this.pending.keys()) if (!listed.has(inode)) this.pending.delete(inode);
    if (full && wanted.size > 0) this.resolve(fresh, wanted, now);
  }

  /**
   * Sets `src.process` and `dst.process` (when the record has none) for the ends of the flow that
   * are sockets of this host, alive while the flow was. Call it for every finished record.
   */
  attachProcess(record: FlowRecord): void {
    const proto = record.transport.proto;
    const owners = this.ownersOf(
      proto === 'TCP' ? 'TCP' : proto === 'UDP' ? 'UDP' : undefined,
      record.src,
      record.dst,
      record['@timestamp'],
      record.meta['@ingest_time'],
    );
    if (owners.src !== undefined) record.src.process = owners.src;
    if (owners.dst !== undefined) record.dst.process = owners.dst;
  }

  /**
   * The processes of this host whose sockets are the flow's ends (TCP and UDP), alive while the
   * flow was (`startMs` to `endMs`); an end that names its process already is left alone. Asked
   * once for every finished flow: attachProcess for a record, the meter for a Native row.
   */
  ownersOf(transport: SocketTransport | undefined, src: OwnedEnd, dst: OwnedEnd, startMs: number, endMs: number): FlowEndOwners {
    this.counts.records++;
    if (transport === undefined) return NO_OWNERS;
    const untilMs = Math.max(startMs, endMs);
    // A socket may have opened up to a sample before the one that listed it, and closed up to one after.
    const slackMs = this.options.tablePeriodMs + this.options.searchBudgetMs;
    const owner = (end: OwnedEnd, other: OwnedEnd) =>
      end.process === undefined ? this.index.ownerOf(transport, end, other, startMs, untilMs, slackMs, this.isHost) : undefined;
    const srcOwner = owner(src, dst);
    const dstOwner = owner(dst, src);
    if (srcOwner === undefined && dstOwner === undefined) return NO_OWNERS;
    if (srcOwner !== undefined) this.counts.src_attributed++;
    if (dstOwner !== undefined) this.counts.dst_attributed++;
    return { src: srcOwner && copyProcess(srcOwner), dst: dstOwner && copyProcess(dstOwner) };
  }

  private readonly isHost = (ip: string): boolean => this.isHostAddress(ip);

  /** Whether a search over every process, begun after the socket was first listed, has ended without finding its owner. */
  private settled(p: Pending): boolean {
    return p.settlesWithCycle < this.cycle || (p.settlesWithCycle === this.cycle && this.resume === undefined);
  }

  private listPids(): number[] {
    try {
      return pidsNewestFirst(this.options.proc);
    } catch {
      return [];
    }
  }

  /** Sockets of processes started in the last youngMs that no sample has placed yet: inode → pid. */
  private youngSockets(now: number): Map<string, number> {
    const pids = this.listPids();
    for (const pid of pids) {
      if (this.pids.has(pid)) continue;
      // Newest first: the first maxYoung are the ones kept.
      if (this.young.size >= this.options.maxYoung) this.counts.young_over_limit++;
      else this.young.set(pid, { sinceMs: now, tries: new Map(), misses: 0 });
    }
    this.pids = new Set(pids);
    const claimed = new Map<string, number>();
    for (const [pid, young] of this.young) {
      if (!this.pids.has(pid) || now - young.sinceMs > this.options.youngMs) {
        this.young.delete(pid);
        continue;
      }
      for (const inode of socketInodesOf(this.options.proc, pid, this.search) ?? []) {
        const tries = young.tries.get(inode) ?? 0;
        if (tries >= TRIES_PER_SOCKET || this.index.has(inode)) continue;
        young.tries.set(inode, tries + 1);
        claimed.set(inode, pid);
      }
    }
    return claimed;
  }

  private countMisses(claimed: ReadonlyMap<string, number>): void {
    const placed = new Set<number>();
    for (const [inode, pid] of claimed) if (this.index.has(inode)) placed.add(pid);
    for (const pid of new Set(claimed.values())) {
      const young = this.young.get(pid);
      if (young === undefined || placed.has(pid) || ++young.misses < MISSES_PER_PROCESS) continue;
      this.young.delete(pid);
      this.counts.young_given_up++;
    }
  }

  private resolve(fresh: SocketRow[], wanted: Map<string, number>, now: number): void {
    if (this.resume === undefined) this.cycle++;
    const { owners, resume } = findSocketOwners(this.options.proc, wanted, Date.now() + this.options.searchBudgetMs, this.users, this.search, this.resume);
    this.resume = resume;
    for (const row of fresh) {
      const owner = owners.get(row.inode);
      if (owner === undefined) continue;
      const pending = this.pending.get(row.inode)!;
      this.pending.delete(row.inode);
      this.index.add(row, owner, pending.firstSeenMs, now);
    }
  }

  private readTables(): SocketRow[] {
    const rows: SocketRow[] = [];
    const bad = { lines: 0, overLimit: 0 };
    for (const { file, transport } of SOCKET_TABLES) {
      let text: string;
      try {
        text = readFileSync(`${this.options.proc}/net/${file}`, 'latin1');
      } catch {
        this.unreadable.add(file);
        continue;
      }
      for (const row of parseSocketTable(text, transport, this.options.maxSockets - rows.length, bad)) rows.push(row);
    }
    this.counts.bad_lines += bad.lines;
    this.counts.rows_over_limit += bad.overLimit;
    return rows;
  }

  /** The host's own addresses, so a wildcard listener matches only flows to this host. */
  private isHostAddress(ip: string): boolean {
    const now = Date.now();
    if (now - this.hostAddressesAt > HOST_ADDRESSES_TTL_MS) {
      this.hostAddressesAt = now;
      this.hostAddresses = new Set(
        Object.values(networkInterfaces())
          .flatMap((list) => list ?? [])
          .map((a) => plainIp(a.address.split('%')[0])),
      );
    }
    return this.hostAddresses.has(ip);
  }
}

/** A flow's end, and the process a record already names for it. */
type OwnedEnd = FlowEnd & { process?: ProcessInfo };

/** What ownersOf found: the owning process of each end, where this host holds it. */
export interface FlowEndOwners {
  src?: ProcessInfo;
  dst?: ProcessInfo;
}

const NO_OWNERS: FlowEndOwners = Object.freeze({});

/** Each record gets its own copy: records are changed downstream (the sink, tests). */
function copyProcess(p: ProcessInfo): ProcessInfo {
  return p.user === undefined ? { ...p } : { ...p, user: { ...p.user } };
}
