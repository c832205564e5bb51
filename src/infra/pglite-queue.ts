import type { PGlite } from '@electric-sql/pglite';

interface Pending {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: Error) => void;
  startup: boolean;
}

const SYNC = 0x53; // 'S': ends an extended-query cycle (Parse/Bind/Describe/Execute…)
const QUERY = 0x51; // 'Q': a simple query is a whole cycle
const TERMINATE = 0x58; // 'X'

/**
 * The order in which the PostgreSQL messages of many socket connections reach PGlite's single
 * backend. pglite-socket's own queue interleaves connections message by message, so one client's
 * Parse can land between another's Parse and Bind ("portal does not exist", or worse, a Bind to
 * the wrong statement). Here a connection that has started a cycle keeps the backend until the
 * cycle ends (Sync or a simple Query), and for as long as it holds an open transaction.
 */
export class CycleQueue {
  private readonly queue: Pending[] = [];
  private readonly started = new Set<number>();
  /** Connections whose statements `activity` leaves out (their startup named `quietApplication`). */
  private readonly quiet = new Set<number>();
  private owner: number | null = null;
  private processing = false;
  /** Messages run for every connection but the quiet ones, since start. */
  activity = 0;

  constructor(
    private readonly db: PGlite,
    private readonly quietApplication?: string,
  ) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    // A connection's first message is its startup packet: a cycle of its own.
    const startup = !this.started.has(handlerId);
    this.started.add(handlerId);
    if (startup && this.quietApplication !== undefined && applicationName(message) === this.quietApplication) this.quiet.add(handlerId);
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject, startup });
      void this.process();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].handlerId === handlerId) this.queue.splice(i, 1)[0].reject(new Error('connection closed'));
    }
    this.started.delete(handlerId);
    this.quiet.delete(handlerId);
  }

  /** A connection that went away mid-cycle or mid-transaction must not keep the backend. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    void this.process();
  }

  private next(): Pending | undefined {
    const index = this.owner === null ? 0 : this.queue.findIndex((p) => p.handlerId === this.owner);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async process(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        let bytes = 0;
        // Counted before it runs: a poll that starts after this count sees what the message committed.
        if (!this.quiet.has(item.handlerId)) this.activity++;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item!.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                item!.onData(data);
              },
            }),
          );
        } catch (error) {
          this.owner = this.db.isInTransaction() ? item.handlerId : null;
          item.reject(error as Error);
          continue;
        }
        const type = item.message[0];
        const cycleEnds = item.startup || type === SYNC || type === QUERY || type === TERMINATE;
        this.owner = cycleEnds && !this.db.isInTransaction() ? null : item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }
}

/** `application_name` of a startup packet (length, protocol version, then name/value pairs). */
function applicationName(startup: Uint8Array): string | undefined {
  const text = Buffer.from(startup.buffer, startup.byteOffset, startup.byteLength).toString('utf8', 8).split('\0');
  for (let i = 0; i + 1 < text.length; i += 2) if (text[i] === 'application_name') return text[i + 1];
  return undefined;
}
