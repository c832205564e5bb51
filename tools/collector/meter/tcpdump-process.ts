// Live capture through Debian's tcpdump: `tcpdump -i IFACE -w - -U -s SNAPLEN -n` writes pcap to
// its stdout, which the meter reads with the same CaptureReader as a file. Not --immediate-mode:
// waking per packet made the kernel drop half of a 60k packets/s flood that block delivery (up to
// LIBPCAP_BLOCK_MS late) took without a loss; the stop waits for that delay. A native libpcap binding
// would need building an npm addon against libpcap-dev, which this project cannot install; tcpdump
// is libpcap's own front end, drops privileges itself and reports the kernel's drop counts.
// tcpdump's failures (no such interface, no permission, not installed) become one sentence.

import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/** tcpdump's libpcap timeout: TPACKET_V3 hands a block of packets over when it fills or after this long. */
export const LIBPCAP_BLOCK_MS = 1_000;
/** Big enough for any IPv4 packet and any GRO-merged segment up to 64 KiB; the payload inspectors read far less. */
export const LIVE_SNAPLEN = 65_535;
/**
 * The kernel's capture buffer, KiB (tcpdump -B; libpcap's default is 2 MiB): it holds the packets
 * that arrive while the meter, busy or starved of CPU, has not read the last ones. At the default
 * the lab's router dropped 2.3% of a 40,000-packet run on a loaded machine, once a whole beacon
 * check-in.
 */
export const CAPTURE_BUFFER_KIB = 32 * 1024;
/** tcpdump opens the device within milliseconds; a slow machine gets ample room. */
const START_TIMEOUT_MS = 10_000;
/** What stderr is kept for the messages: tcpdump says little, but a broken one must not grow memory. */
const MAX_STDERR_CHARS = 16 * 1024;

/** Why an interface cannot be captured on, in one sentence a person can act on. */
export class CaptureInterfaceError extends Error {
  override readonly name = 'CaptureInterfaceError';
}

/** The counts tcpdump prints at exit (and on SIGUSR1); what the kernel dropped is traffic the meter never saw. */
export interface TcpdumpCounts {
  captured: number;
  received_by_filter: number;
  dropped_by_kernel: number;
  dropped_by_interface: number;
}

/** The last counts tcpdump printed, from its stderr; zero for a count it did not print. */
export function parseTcpdumpCounts(stderr: string): TcpdumpCounts | undefined {
  const last = (pattern: RegExp) => {
    const all = [...stderr.matchAll(pattern)];
    return all.length === 0 ? undefined : Number(all[all.length - 1][1]);
  };
  const captured = last(/(\d+) packets? captured/g);
  if (captured === undefined) return undefined;
  return {
    captured,
    received_by_filter: last(/(\d+) packets? received by filter/g) ?? 0,
    dropped_by_kernel: last(/(\d+) packets? dropped by kernel/g) ?? 0,
    dropped_by_interface: last(/(\d+) packets? dropped by interface/g) ?? 0,
  };
}

/** One sentence for why tcpdump could not capture on `iface`, from what it said or how it failed to start. */
export function explainTcpdumpFailure(iface: string, stderr: string, spawnError?: NodeJS.ErrnoException): string {
  if (spawnError?.code === 'ENOENT') return `cannot capture on ${iface}: tcpdump is not installed (apt-get install tcpdump)`;
  if (spawnError) return `cannot capture on ${iface}: tcpdump did not start (${spawnError.message})`;
  if (/No such device|doesn't exist|no suitable device/i.test(stderr)) return `cannot capture on ${iface}: no such interface (see \`ip link\`)`;
  if (/permission|Operation not permitted/i.test(stderr)) {
    return `cannot capture on ${iface}: permission denied (run as root or give tcpdump CAP_NET_RAW and CAP_NET_ADMIN)`;
  }
  const said = stderr
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.startsWith('tcpdump:'));
  return `cannot capture on ${iface}: ${said ?? (stderr.trim().split('\n')[0] || 'tcpdump exited')}`;
}

/** A tcpdump capturing on one interface, its pcap stream on `stdout`. */
export class TcpdumpProcess {
  private stderr = '';
  private stopping = false;
  /** How tcpdump ended: null while it runs. */
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<void>;

  private constructor(
    readonly iface: string,
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
  ) {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      this.stderr = (this.stderr + text).slice(-MAX_STDERR_CHARS);
    });
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
    });
  }

  /** Starts tcpdump and waits until it listens; throws CaptureInterfaceError when it cannot. */
  static async start(iface: string, command = 'tcpdump'): Promise<TcpdumpProcess> {
    // Its own process group: a Ctrl-C at the terminal goes to the collector, which stops tcpdump
    // itself after the packets in flight; tcpdump ending first would look like a failure.
    const child = spawn(command, ['-i', iface, '-w', '-', '-U', '-s', String(LIVE_SNAPLEN), '-B', String(CAPTURE_BUFFER_KIB), '-n'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const capture = new TcpdumpProcess(iface, child);
    const failure = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(
        () => resolve(`cannot capture on ${iface}: tcpdump did not start listening within ${START_TIMEOUT_MS / 1000} s`),
        START_TIMEOUT_MS,
      );
      const settle = (result: string | undefined) => {
        clearTimeout(timer);
        resolve(result);
      };
      // tcpdump says "listening on IFACE" once the device is open: from then on it captures.
      child.stderr.on('data', () => {
        if (capture.stderr.includes('listening on')) settle(undefined);
      });
      child.once('error', (error) => settle(explainTcpdumpFailure(iface, capture.stderr, error)));
      void capture.exited.then(() => settle(explainTcpdumpFailure(iface, capture.stderr)));
    });
    if (failure !== undefined) {
      await capture.stop();
      throw new CaptureInterfaceError(failure);
    }
    return capture;
  }

  get stdout(): Readable {
    return this.child.stdout;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The counts tcpdump last printed: at exit, or after `requestCounts()`. */
  counts(): TcpdumpCounts | undefined {
    return parseTcpdumpCounts(this.stderr);
  }

  /** Asks tcpdump to print its counts now (SIGUSR1 on Linux); they arrive on stderr shortly after. */
  requestCounts(): void {
    if (this.exit === null && !this.stopping) this.child.kill('SIGUSR1');
  }

  /** Why tcpdump ended on its own, or undefined when it was stopped or still runs. */
  failure(): string | undefined {
    if (this.exit === null || this.stopping) return undefined;
    return explainTcpdumpFailure(this.iface, this.stderr);
  }

  /** Stops tcpdump (SIGTERM to its pid: it then writes what it buffered and prints its counts) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.exit === null && this.child.pid !== undefined) {
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await this.exited;
      clearTimeout(killer);
    }
  }
}

/** Throws CaptureInterfaceError unless tcpdump can capture on `iface` now (it is started, then stopped). */
export async function checkCaptureInterface(iface: string, command?: string): Promise<void> {
  const probe = await TcpdumpProcess.start(iface, command);
  await probe.stop();
}
