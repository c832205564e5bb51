import type { Logger } from '../../infra/logger.js';
import { auditEntriesDropped, auditEntriesWritten } from '../../infra/metrics.js';
import type { AuditEntry } from './audit-entry.js';

export interface AuditWriterOptions {
  /** Entries waiting beyond which new ones are dropped (counted, logged once per episode). */
  capacity: number;
  /** Entries per INSERT; a queue this long is written at once instead of waiting for the timer. */
  batchSize: number;
  flushMs: number;
}

export const AUDIT_WRITER_DEFAULTS: AuditWriterOptions = { capacity: 10_000, batchSize: 500, flushMs: 1_000 };

/**
 * Keeps the audit log off the request path: a mutation's entries join a bounded in-memory queue,
 * written in batches on a timer, when a batch is full, and at shutdown. When the database falls
 * behind and the queue is full, entries are dropped rather than slowing or failing requests;
 * `audit_entries_dropped_total` counts them and one warning says so until the queue drains.
 */
export class AuditWriter {
  private queue: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private dropWarned = false;

  constructor(
    private readonly insert: (entries: readonly AuditEntry[]) => Promise<number>,
    private readonly logger: Logger,
    private readonly options: AuditWriterOptions = AUDIT_WRITER_DEFAULTS,
  ) {}

  /** Entries waiting to be written. */
  get pending(): number {
    return this.queue.length;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs).unref();
  }

  record(entries: readonly AuditEntry[]): void {
    const room = this.options.capacity - this.queue.length;
    if (entries.length > room) this.drop('queue_full', entries.length - Math.max(room, 0));
    this.queue.push(...entries.slice(0, Math.max(room, 0)));
    if (this.queue.length >= this.options.batchSize) void this.flush();
  }

  /** Writes everything queued (waiting for a write in progress first). Never rejects. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    this.writing = this.writeAll().finally(() => (this.writing = undefined));
    await this.writing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.batchSize);
      try {
        auditEntriesWritten.inc(await this.insert(batch));
      } catch (error) {
        this.drop('write_failed', batch.length);
        this.logger.error('audit.write_failed', { entries: batch.length, error });
      }
    }
    this.dropWarned = false;
  }

  private drop(reason: 'queue_full' | 'write_failed', count: number): void {
    auditEntriesDropped.inc({ reason }, count);
    if (reason === 'queue_full' && !this.dropWarned) {
      this.dropWarned = true;
      this.logger.warn('audit.queue_full', { capacity: this.options.capacity, message: 'audit entries are being dropped until the queue drains' });
    }
  }
}
