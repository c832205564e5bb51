// Live interfaces → the packet meter: one tcpdump per interface streams pcap into its own
// CaptureReader, and every interface's frames go through one CaptureMeter (one flow table), as
// several files do. Packets bring their own times; when none come, a timer moves the table's
// clock on with the wall clock so idle flows still leave. Reading waits while ingest is full: the
// pipe then fills, tcpdump blocks, and what the kernel drops meanwhile is in tcpdump's counts.

import { sleep } from '../backoff.js';
import { CaptureReader } from './capture.js';
import type { CaptureMeter } from './meter-capture.js';
import { CaptureInterfaceError, LIBPCAP_BLOCK_MS, type TcpdumpCounts, TcpdumpProcess } from './tcpdump-process.js';

export interface LiveCaptureOptions {
  /** How often the wall clock is looked at when no packet comes. Default 1 s. */
  tickMs?: number;
  /**
   * How far behind the wall clock the table's clock is moved, so that an idle flow does not leave
   * before its last packets came through libpcap's blocks, tcpdump and the pipe. Default 2 s.
   */
  lagMs?: number;
  /** How long packets in flight get, once stopping, before tcpdump is stopped. Default: libpcap's block timeout + 300 ms. */
  settleMs?: number;
  /** How often tcpdump is asked for its counts while it runs. Default 10 s. */
  countsEveryMs?: number;
  /** The tcpdump binary. Default `tcpdump` from PATH. */
  command?: string;
  /** Called once every interface's tcpdump listens: packets from then on are metered. */
  onListening?: () => void;
}

export interface InterfaceStats extends TcpdumpCounts {
  name: string;
}

export class LiveCapture {
  private readonly processes: TcpdumpProcess[] = [];
  private lastChunkMs = Date.now();
  /** Readers waiting for ingest: their packets are late, not absent, so the wall clock must not expire flows meanwhile. */
  private readersSending = 0;

  constructor(
    private readonly interfaces: readonly string[],
    private readonly meter: CaptureMeter,
    private readonly options: LiveCaptureOptions = {},
  ) {}

  /** tcpdump's counts per interface, as last printed (at most countsEveryMs old while running). */
  stats(): InterfaceStats[] {
    return this.interfaces.map((name, i) => ({
      name,
      ...(this.processes[i]?.counts() ?? { captured: 0, received_by_filter: 0, dropped_by_kernel: 0, dropped_by_interface: 0 }),
    }));
  }

  /**
   * Captures until the signal aborts, then stops tcpdump, meters what it still wrote and hands every
   * open flow over. Throws CaptureInterfaceError when an interface cannot be captured on or its
   * tcpdump ends on its own (the flows metered so far are handed over first).
   */
  async run(signal: AbortSignal): Promise<void> {
    for (const iface of this.interfaces) {
      try {
        this.processes.push(await TcpdumpProcess.start(iface, this.options.command));
      } catch (error) {
        await this.stopAll();
        throw error;
      }
    }
    this.options.onListening?.();
    const ended = new AbortController();
    const stop = () => ended.abort();
    // Asked to stop: packets the kernel already holds are let through before tcpdump goes.
    const settleThenStop = () => void sleep(this.options.settleMs ?? LIBPCAP_BLOCK_MS + 300).then(stop);
    ended.signal.addEventListener('abort', () => void this.stopAll(), { once: true });
    if (signal.aborted) settleThenStop();
    else signal.addEventListener('abort', settleThenStop, { once: true });
    let failure: string | undefined;
    try {
      const readers = this.processes.map(async (tcpdump) => {
        const problem = await this.read(tcpdump, signal);
        // One interface failing ends the run: a meter silently missing an interface would mislead.
        failure ??= problem;
        stop();
      });
      await Promise.all([...readers, this.tick(ended.signal, signal)]);
    } finally {
      signal.removeEventListener('abort', settleThenStop);
      await this.stopAll();
    }
    await this.meter.finish(signal);
    if (failure !== undefined) throw new CaptureInterfaceError(failure);
  }

  /** Meters one tcpdump's stream until it ends; returns why it ended, unless it was stopped. */
  private async read(tcpdump: TcpdumpProcess, signal: AbortSignal): Promise<string | undefined> {
    const reader = new CaptureReader(this.meter.captureDrops);
    try {
      for await (const chunk of tcpdump.stdout) {
        this.lastChunkMs = Date.now();
        this.meter.meterChunk(reader, chunk as Buffer);
        if (reader.stoppedReason !== undefined) return `cannot capture on ${tcpdump.iface}: tcpdump's output could not be read (${reader.stoppedReason})`;
        this.readersSending++;
        try {
          await this.meter.sendWhenFull(signal);
        } finally {
          this.readersSending--;
        }
      }
    } catch (error) {
      return `cannot capture on ${tcpdump.iface}: ${(error as Error).message}`;
    }
    await tcpdump.exited;
    reader.end();
    return tcpdump.failure();
  }

  /** Every tick sends what left the table; while packets are scarce, first moves the table on with the wall clock. */
  private async tick(ended: AbortSignal, signal: AbortSignal): Promise<void> {
    const tickMs = this.options.tickMs ?? 1_000;
    const lagMs = this.options.lagMs ?? 2_000;
    const countsEvery = Math.max(1, Math.round((this.options.countsEveryMs ?? 10_000) / tickMs));
    for (let ticks = 1; !ended.aborted; ticks++) {
      await sleep(tickMs, ended);
      if (ended.aborted) return;
      if (ticks % countsEvery === 0) this.processes.forEach((tcpdump) => tcpdump.requestCounts());
      if (this.readersSending > 0) continue;
      if (Date.now() - this.lastChunkMs >= tickMs) this.meter.expire((Date.now() - lagMs) * 1000);
      // Records wait for a full batch only as long as a tick: a trickle of flows still goes out.
      await this.meter.send(signal);
    }
  }

  private async stopAll(): Promise<void> {
    await Promise.all(this.processes.map((tcpdump) => tcpdump.stop()));
  }
}
