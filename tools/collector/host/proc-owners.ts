// Which process owns a socket inode: each process's file descriptors are links under
// /proc/<pid>/fd, a socket's reading `socket:[inode]`. Reading them all is the expensive part of
// host context, so a search looks only for the inodes it was given, newest processes first (a
// short-lived client is one of the last started), stops as soon as every inode is found, and
// gives up at a deadline. Processes come and go during the search: a vanished pid or fd, or a
// directory this user may not read, is counted and skipped, never thrown.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ProcessInfo } from '../flowgen/types.js';
import type { UserNames } from './user-names.js';

export interface OwnerSearchCounts {
  /** Processes whose descriptors were read. */
  pids_scanned: number;
  /** A process that ended between the listing and reading it. */
  pid_gone: number;
  /** A process whose descriptors this user may not read (the collector runs unprivileged). */
  fd_unreadable: number;
  /** Searches stopped at their deadline before every inode was found. */
  deadline_reached: number;
}

export const emptyOwnerSearchCounts = (): OwnerSearchCounts => ({ pids_scanned: 0, pid_gone: 0, fd_unreadable: 0, deadline_reached: 0 });

/** What a search that reached its deadline had read: the next one reads the rest, new processes first. */
export interface SearchResume {
  scanned: Set<number>;
}

export interface OwnerSearch {
  /** Owner of each inode found. */
  owners: Map<string, ProcessInfo>;
  /** Set when the deadline stopped the search. */
  resume?: SearchResume;
}

const PID = /^\d+$/;
const SOCKET_LINK = /^socket:\[(\d+)\]$/;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Process ids, newest (highest) first: pids grow until they wrap, so new processes sort first. */
export function pidsNewestFirst(proc: string): number[] {
  return readdirSync(proc)
    .filter((name) => PID.test(name))
    .map(Number)
    .sort((a, b) => b - a);
}

/** Name, parent and program of a process, or undefined when it has ended. */
export function readProcess(proc: string, pid: number, uid: number, users: UserNames): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${proc}/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid ...`: comm may itself hold spaces and parentheses, so cut at the last ')'.
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const ppid = Number(stat.slice(close + 2).split(' ')[1]);
  const info: ProcessInfo = { name: stat.slice(open + 1, close), pid };
  if (Number.isInteger(ppid)) info.ppid = ppid;
  try {
    info.executable = readlinkSync(`${proc}/${pid}/exe`);
  } catch {
    // Kernel threads have no program; another user's process hides it from an unprivileged reader.
  }
  const name = users.nameOf(uid);
  info.user = name === undefined ? { id: uid } : { id: uid, name };
  return info;
}

/** The inodes of a process's sockets (of every kind: unix and netlink ones too), or undefined when it cannot be read. */
export function socketInodesOf(proc: string, pid: number, counts: OwnerSearchCounts): string[] | undefined {
  let fds: string[];
  try {
    fds = readdirSync(`${proc}/${pid}/fd`);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') counts.pid_gone++;
    else counts.fd_unreadable++;
    return undefined;
  }
  counts.pids_scanned++;
  const inodes: string[] = [];
  for (const fd of fds) {
    let link: string;
    try {
      link = readlinkSync(`${proc}/${pid}/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    const inode = SOCKET_LINK.exec(link)?.[1];
    if (inode !== undefined) inodes.push(inode);
  }
  return inodes;
}

/**
 * Finds the owners of `wanted` (inode → the socket's uid), reading processes newest first until
 * every inode is found or `deadlineMs` (a Date.now() value) passes (one process is always read). Given the `resume` of a search
 * the deadline stopped, it reads only the processes that one did not.
 */
export function findSocketOwners(
  proc: string,
  wanted: ReadonlyMap<string, number>,
  deadlineMs: number,
  users: UserNames,
  counts: OwnerSearchCounts,
  resume?: SearchResume,
): OwnerSearch {
  const owners = new Map<string, ProcessInfo>();
  let pids: number[];
  try {
    pids = pidsNewestFirst(proc);
  } catch {
    return { owners, resume: resume ?? { scanned: new Set() } };
  }
  const scanned = resume?.scanned ?? new Set<number>();
  let read = 0;
  for (const pid of pids) {
    if (owners.size === wanted.size) break;
    if (scanned.has(pid)) continue;
    // At least one process per search, so that a search always gets further than the last.
    if (read++ > 0 && Date.now() > deadlineMs) {
      counts.deadline_reached++;
      return { owners, resume: { scanned } };
    }
    scanned.add(pid);
    const inodes = socketInodesOf(proc, pid, counts);
    if (inodes === undefined) continue;
    let info: ProcessInfo | undefined;
    for (const inode of inodes) {
      const uid = wanted.get(inode);
      if (uid === undefined || owners.has(inode)) continue;
      info ??= readProcess(proc, pid, uid, users);
      if (info === undefined) {
        counts.pid_gone++;
        break;
      }
      owners.set(inode, info);
    }
  }
  return { owners };
}
