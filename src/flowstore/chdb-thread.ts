/**
 * FlowEngine over chDB running on a worker thread of its own: the server's engine (infra/flow-engine.ts).
 *
 * Why a thread: chDB hands every result to JavaScript by copying it into a new buffer inside the
 * completion callback, on the thread that asked. On the main thread a 25,000-record page (~60 MB)
 * meant ~60 MB of fresh pages faulted in and copied while nothing else could run: token requests
 * waited 100–200 ms behind it (measured; tools/bench/HISTORY.md). Here that copy happens on the worker and
 * the bytes cross over in memory the threads share (big results, lent until given back:
 * chdb-thread.slabs.ts) or by transfer; the main thread only parses or forwards them.
 *
 * The worker (chdb-thread.worker.ts) runs a ChdbEngine, so SQL, settings, limits and typed errors
 * are that engine's; this side carries calls and the caller's aborts across, and rebuilds the
 * typed errors (chdb-thread.protocol.ts).
 */
import type { Worker } from 'node:worker_threads';
import { claimDirectory } from '../infra/directory-owner.js';
import { sourceWorker } from '../infra/source-worker.js';
import { giveBack, lend } from '../infra/lent-bytes.js';
import {
  type FlowEngine,
  type InsertOptions,
  type LinesFormat,
  type QueryOptions,
  type RowSeparation,
  linesOutput,
  observeStatement,
  parseEachRow,
} from './engine.js';
import { jsonEachRowBytes } from './chdb-engine.js';
import { FlowEngineError, FlowQueryAbortedError } from './errors.js';
import { type Call, type CallBody, type Reply, type Started, errorFromWire, wireOptions } from './chdb-thread.protocol.js';
import { transferable } from '../infra/transferable.js';
import type { SlabResult } from './chdb-thread.slabs.js';
import { requireQueryName, type Params } from './sql.js';

interface Pending {
  resolve(reply: Reply & { ok: true }): void;
  reject(error: Error): void;
}

export class ChdbThreadEngine implements FlowEngine {
  readonly kind = 'chdb' as const;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Set once the engine is closed or its thread is gone; every later call fails with it. */
  private ended: Error | undefined;

  /** Settles once the worker has opened the database (or failed to). */
  private readonly started: Promise<void>;
  /** Gives up the claim on the data directory (directory-owner.ts), once closed. */
  private release = () => {};
  /** A slab result nobody gave back is freed once its memory's every view is collected. */
  private readonly uncollected = new FinalizationRegistry<{ slab: number; use: number }>((held) => this.free(held));

  private constructor(private readonly worker: Worker) {
    let opened!: (started: Started) => void;
    this.started = new Promise<Started>((resolve) => (opened = resolve)).then((started) => {
      if (!started.ready) throw errorFromWire(started.error);
    });
    worker.on('message', (message: Reply | Started) => ('ready' in message ? opened(message) : this.settle(message)));
    worker.on('error', (err) => this.end(new FlowEngineError(`the chDB thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => {
      this.end(new FlowEngineError(`the chDB thread exited (code ${code})`));
      opened({ ready: false, error: { name: 'FlowEngineError', message: `the chDB thread exited (code ${code}) before it opened its database` } });
    });
  }

  /**
   * Starts the thread and opens (or creates) the database in `dataDir` there. One data directory
   * per process, and one process per directory: a directory another live process has open is
   * refused before chDB is asked (directory-owner.ts).
   */
  static async open(dataDir: string): Promise<ChdbThreadEngine> {
    const release = claimDirectory(dataDir, 'embedded ClickHouse');
    const engine = new ChdbThreadEngine(sourceWorker('./chdb-thread.worker', import.meta.url, { workerData: { dataDir } }));
    engine.release = release;
    try {
      await engine.started;
    } catch (error) {
      release();
      throw error;
    }
    return engine;
  }

  async query<T>(sql: string, params: Params, opts: QueryOptions = {}): Promise<T[]> {
    const bytes = await this.select(sql, params, opts, 'JSONEachRow');
    const text = bytes.toString('utf8');
    giveBack(bytes);
    return parseEachRow<T>(text);
  }

  /** Big results come in a slab, lent (infra/lent-bytes.ts): give them back once written or copied. */
  queryLines(sql: string, params: Params, opts: QueryOptions = {}, rows?: RowSeparation): Promise<Buffer> {
    const lines = linesOutput(opts, rows);
    return this.select(sql, params, lines.opts, lines.format);
  }

  async command(sql: string, params: Params = {}, opts: QueryOptions = {}): Promise<void> {
    await this.call({ op: 'command', sql, params, opts: wireOptions(opts) }, requireQueryName(sql), opts.signal);
  }

  async insertJsonEachRow(table: string, rows: readonly Record<string, unknown>[] | string, opts: InsertOptions = {}): Promise<void> {
    const values = jsonEachRowBytes(rows);
    if (values.byteLength === 0) return;
    const { signal: _signal, ...rest } = opts;
    await this.call({ op: 'insert', table, values, opts: rest }, `flowstore:insert.${table}`, opts.signal, transferable(values));
  }

  async insertNative(table: string, columns: readonly string[], blocks: readonly Buffer[], opts: InsertOptions = {}): Promise<void> {
    const { signal: _signal, ...rest } = opts;
    await this.call({ op: 'insertNative', table, columns, blocks, opts: rest }, `flowstore:insert.${table}`, opts.signal, blocks.flatMap(transferable));
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.call({ op: 'ping' }, 'flowstore:ping')).alive === true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.ended) return;
    await this.call({ op: 'close' }, 'flowstore:close');
    this.end(new FlowEngineError('the flow engine is closed'));
    await this.worker.terminate();
    this.release();
  }

  private async select(sql: string, params: Params, opts: QueryOptions, format: 'JSONEachRow' | LinesFormat): Promise<Buffer> {
    const reply = await this.call({ op: 'select', sql, params, opts: wireOptions(opts), format }, requireQueryName(sql), opts.signal);
    if (reply.slab) return this.borrow(reply.slab);
    const bytes = reply.bytes!;
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * A view of a slab result, lent until given back. Each reply brings its own SharedArrayBuffer
   * object for the slab, which every view of the result holds (`buffer`): once all are collected,
   * so is it, and the registry frees the placement if nobody gave it back.
   */
  private borrow(result: SlabResult): Buffer {
    const placement = { slab: result.slab, use: result.use };
    const unregister = {};
    this.uncollected.register(result.memory, placement, unregister);
    const bytes = Buffer.from(result.memory, 0, result.length);
    lend(bytes, () => {
      this.uncollected.unregister(unregister);
      this.free(placement);
    });
    return bytes;
  }

  private free({ slab, use }: { slab: number; use: number }): void {
    if (!this.ended) this.worker.postMessage({ op: 'free', slab, use } satisfies Call);
  }

  private call(body: CallBody, queryName: string, signal?: AbortSignal, transfer: ArrayBuffer[] = []): Promise<Reply & { ok: true }> {
    if (this.ended) return Promise.reject(this.ended);
    if (signal?.aborted) return Promise.reject(new FlowQueryAbortedError(queryName, signal.reason));
    const id = this.nextId++;
    const onAbort = () => this.worker.postMessage({ id, op: 'abort' } satisfies Call);
    signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    let failure: unknown;
    return new Promise<Reply & { ok: true }>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...body, id } as Call, transfer);
    })
      .catch((error: unknown) => {
        failure = error;
        throw error;
      })
      .finally(() => {
        signal?.removeEventListener('abort', onAbort);
        observeStatement(queryName, started, failure);
      });
  }

  private settle(reply: Reply): void {
    const call = this.pending.get(reply.id);
    if (!call) return;
    this.pending.delete(reply.id);
    if (reply.ok) call.resolve(reply);
    else call.reject(errorFromWire(reply.error));
  }

  private end(error: Error): void {
    this.ended ??= error;
    for (const call of this.pending.values()) call.reject(this.ended);
    this.pending.clear();
  }
}
