// Flow exports → ingest: `--ipfix-listen HOST:PORT` receives NetFlow v5/v9 and IPFIX datagrams
// (exports/listener.ts decodes them) and hands the records to the ingest queue in batches. UDP
// cannot be held back: while ingest is full, records wait in a bounded backlog, and what arrives
// beyond it is dropped and counted (`ingest_backlog`), like the exporter's own losses are counted
// as sequence gaps.

import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { writeExportBlock } from './exports/export-columns.js';
import type { FlowSink } from './flows.js';
import { type ExportDiagnostics, ExportListener } from './exports/listener.js';
import type { ExportRecord } from './exports/record.js';
import type { DropCounts } from './meter/packet.js';

/** Records held while ingest is full: about 50 MB of JSON at most, two and a half full ingest queues. */
export const DEFAULT_MAX_BACKLOG = 50_000;

export interface ExportIngestOptions {
  customerId: string;
  host: string;
  /** 0 picks a free port (see `port` once listening). */
  port: number;
  /** Records per sink push. */
  batchFlows: number;
  /** A batch not yet full goes out after this long. Default 1 s. */
  flushIntervalMs?: number;
  maxBacklog?: number;
}

export interface ExportIngestStats extends Omit<ExportDiagnostics, 'drops' | 'waitingSets'> {
  /** host:port as bound. */
  listen: string;
  waiting_sets: number;
  /** Records handed to ingest. */
  flows_emitted: number;
  /**
   * The decoder's drops by reason, `ingest_backlog`: records dropped while ingest was full, and
   * `socket_buffer`: datagrams the kernel dropped because the socket's receive buffer was full.
   */
  dropped: DropCounts;
}

/** Why flow exports cannot be received on the address, in one sentence. */
export class ExportListenError extends Error {
  override readonly name = 'ExportListenError';
}

/** `[::1]:4739` for IPv6 hosts, `host:port` otherwise. */
export const hostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

function explainBindFailure(host: string, port: number, error: NodeJS.ErrnoException): string {
  const reasons: Record<string, string> = {
    EADDRINUSE: 'the port is in use',
    EACCES: 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)',
    EADDRNOTAVAIL: 'no local interface has that address',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name does not resolve',
  };
  return `cannot listen for flow exports on ${hostPort(host, port)}: ${reasons[error.code ?? ''] ?? error.message}`;
}

/**
 * Datagrams the kernel dropped for UDP sockets bound to `port` in this network namespace: the last
 * column of /proc/net/udp (udp6 for IPv6). 0 where there is no such file (not Linux).
 */
export function kernelUdpDrops(port: number, ipv6: boolean): number {
  let table: string;
  try {
    table = readFileSync(ipv6 ? '/proc/net/udp6' : '/proc/net/udp', 'utf8');
  } catch {
    return 0;
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let drops = 0;
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 13 && fields[1].endsWith(`:${hexPort}`)) drops += Number(fields[fields.length - 1]) || 0;
  }
  return drops;
}

/** Binds a listener, or throws ExportListenError. */
async function bind(listener: ExportListener, host: string, port: number): Promise<number> {
  try {
    return await listener.listen(host, port);
  } catch (error) {
    throw new ExportListenError(explainBindFailure(host, port, error as NodeJS.ErrnoException));
  }
}

/** Throws ExportListenError unless HOST:PORT can be bound now (it is bound, then released). */
export async function checkExportListen(host: string, port: number): Promise<void> {
  const probe = new ExportListener({ customerId: 'probe' }, () => undefined);
  await bind(probe, host, port);
  await probe.close();
}

export class ExportIngest {
  private readonly listener: ExportListener;
  private backlog: ExportRecord[] = [];
  private backlogDropped = 0;
  private flowsEmitted = 0;
  private boundPort: number | undefined;
  /** The kernel's count as the socket closed (its /proc line goes with it). */
  private closedSocketDrops: number | undefined;
  /** Wakes the pump early once a batch is full. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly options: ExportIngestOptions,
    private readonly sink: FlowSink,
  ) {
    this.listener = new ExportListener({ customerId: options.customerId }, (record) => this.accept(record));
  }

  /** Binds HOST:PORT; returns the bound port. Throws ExportListenError. */
  async listen(): Promise<number> {
    this.boundPort = await bind(this.listener, this.options.host, this.options.port);
    return this.boundPort;
  }

  stats(): ExportIngestStats {
    const { drops, waitingSets, ...rest } = this.listener.diagnostics();
    const socketDrops = this.closedSocketDrops ?? this.socketDrops();
    return {
      listen: hostPort(this.options.host, this.boundPort ?? this.options.port),
      ...rest,
      waiting_sets: waitingSets,
      flows_emitted: this.flowsEmitted,
      dropped: {
        ...drops,
        ...(this.backlogDropped > 0 ? { ingest_backlog: this.backlogDropped } : {}),
        ...(socketDrops > 0 ? { socket_buffer: socketDrops } : {}),
      },
    };
  }

  /** Sends batches until the signal aborts; then stops listening and sends what is left. */
  async run(signal: AbortSignal): Promise<void> {
    const intervalMs = this.options.flushIntervalMs ?? 1_000;
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, intervalMs);
        signal.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
      await this.send(signal);
    }
    this.closedSocketDrops = this.socketDrops();
    await this.listener.close();
    await this.send(signal);
  }

  private socketDrops(): number {
    return this.boundPort === undefined ? 0 : kernelUdpDrops(this.boundPort, isIPv6(this.options.host));
  }

  private accept(record: ExportRecord): void {
    if (this.backlog.length >= (this.options.maxBacklog ?? DEFAULT_MAX_BACKLOG)) {
      this.backlogDropped++;
      return;
    }
    this.backlog.push(record);
    if (this.backlog.length >= this.options.batchFlows) this.wake?.();
  }

  /** Hands the backlog over in batches: as Native blocks when the sink sends those, else as records. */
  private async send(signal: AbortSignal): Promise<void> {
    while (this.backlog.length > 0) {
      const records = this.backlog.splice(0, this.options.batchFlows);
      this.flowsEmitted += records.length;
      const native = this.sink.pushNative;
      const block = native === undefined ? undefined : writeExportBlock(records);
      if (block !== undefined) await native!(block, records.length, signal);
      else await this.sink.push(records, signal);
    }
  }
}
