/**
 * The ingest workers: threads that decompress, parse, check and encode collectors' batches
 * (ingest.worker.ts), so that a batch's work (a 10,000-record batch is 15 MB of JSON and about half
 * a second of CPU) never holds up the API thread. Started with the first batch, so the admin CLI
 * never starts one; a batch's work stays on the worker that parsed it.
 */
import type { Worker } from 'node:worker_threads';
import { DomainError } from '../../errors.js';
import type { Rejection, TimeWindow } from '../../flowstore/ingest-convert.js';
import type { RowStamp } from '../../flowstore/ingest-rows.js';
import type { PreparedBatch } from '../../flowstore/insert-queue.js';
import { transferable } from '../../infra/transferable.js';
import { sourceWorker } from '../../infra/source-worker.js';
import type { BatchEncoding, BatchEnvelope, IngestCall, IngestReply, ReplyBody } from './ingest-workers.protocol.js';

type Ok = ReplyBody & { ok: true };
type CallOf<Op> = Op extends IngestCall ? (Op extends { call: number } ? Omit<Op, 'call'> : never) : never;

/** One worker thread and the calls waiting for its replies. */
class IngestThread {
  readonly worker: Worker;
  /** Batches parsed here and not yet released. */
  jobs = 0;
  stopped = false;
  private readonly pending = new Map<number, { resolve(reply: Ok): void; reject(error: Error): void }>();
  private nextCall = 0;

  constructor(onStop: () => void) {
    this.worker = sourceWorker('./ingest.worker', import.meta.url);
    this.worker.on('message', (reply: IngestReply) => this.settle(reply));
    this.worker.on('error', () => {
      // 'exit' follows: the thread is ended there.
    });
    this.worker.on('exit', () => {
      this.stopped = true;
      for (const call of this.pending.values()) call.reject(new Error('an ingest worker stopped'));
      this.pending.clear();
      onStop();
    });
  }

  call(body: CallOf<IngestCall>, transfer: ArrayBuffer[] = []): Promise<Ok> {
    if (this.stopped) return Promise.reject(new Error('an ingest worker stopped'));
    const call = ++this.nextCall;
    return new Promise<Ok>((resolve, reject) => {
      this.pending.set(call, { resolve, reject });
      this.worker.postMessage({ ...body, call } as IngestCall, transfer);
    });
  }

  send(body: Extract<IngestCall, { op: 'release' }>): void {
    if (!this.stopped) this.worker.postMessage(body);
  }

  private settle(reply: IngestReply): void {
    const call = this.pending.get(reply.call);
    if (!call) return;
    this.pending.delete(reply.call);
    if (reply.ok) call.resolve(reply);
    else if (reply.refusal) call.reject(new DomainError(reply.refusal.status, reply.refusal.code, reply.refusal.message));
    else call.reject(new Error(`ingest worker: ${reply.error}`));
  }
}

export class IngestWorkers {
  private readonly threads = new Set<IngestThread>();
  private nextJob = 0;

  constructor(private readonly size: number) {}

  /** Decompresses (gzip) and parses a batch's body; refuses a body that is not a batch with a DomainError. */
  async parse(body: Buffer, encoding: BatchEncoding): Promise<ParsedBatch> {
    const thread = this.leastBusy();
    const job = ++this.nextJob;
    thread.jobs++;
    try {
      const { envelope } = await thread.call({ op: 'parse', job, body, encoding }, transferable(body));
      return new ParsedBatch(thread, job, envelope!);
    } catch (error) {
      thread.jobs--;
      throw error;
    }
  }

  async close(): Promise<void> {
    const threads = [...this.threads];
    this.threads.clear();
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private leastBusy(): IngestThread {
    if (this.threads.size < this.size) {
      const thread: IngestThread = new IngestThread(() => this.threads.delete(thread));
      this.threads.add(thread);
      return thread;
    }
    return [...this.threads].reduce((a, b) => (b.jobs < a.jobs ? b : a));
  }
}

/** A batch's body parsed in a worker, held there until released. */
export class ParsedBatch {
  private released = false;

  constructor(
    private readonly thread: IngestThread,
    private readonly job: number,
    readonly envelope: BatchEnvelope,
  ) {}

  /** Checks the records and encodes the valid ones, a block per UTC day, ready for the insert queue. */
  async prepare(stamp: RowStamp, window: TimeWindow, token: string): Promise<{ rejected: Rejection[]; batch: PreparedBatch }> {
    const { converted } = await this.thread.call({ op: 'convert', job: this.job, stamp, window });
    const slices = converted!.slices.map((slice) => ({ ...slice, block: bytes(slice.block) }));
    const encode = async (indexes: readonly number[]) => bytes((await this.thread.call({ op: 'encode', job: this.job, indexes })).block!);
    return { rejected: converted!.rejected, batch: { customerId: stamp.customerId, nodeId: stamp.nodeId, batchId: stamp.batchId, token, slices, encode } };
  }

  /** Lets the worker forget the batch; safe to call more than once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.thread.jobs--;
    this.thread.send({ op: 'release', job: this.job });
  }
}

const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
