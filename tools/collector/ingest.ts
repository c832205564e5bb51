// collector-protocol.md 4: flows go to the service in batches. A batch keeps its batch_id across
// retries (the service stores a retried batch once), nothing is dropped because the service is
// slow or down, and the queue is bounded: when it is full, push() waits, which holds up whatever
// generates the flows.

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzipSync, gzip as gzipCallback } from 'node:zlib';
import { Backoff, type BackoffOptions, retryAfterMs, sleep } from './backoff.js';
import { CredentialRejected } from './auth.js';
import { type Fetch, errorText, joinUrl, request } from './http.js';
import type { Logger } from './logring.js';
import { NATIVE_CONTENT_TYPE, NATIVE_GZIP_LEVEL, decodeNativeBatch, encodeNativeBatch } from './native-batch.js';

export const INGEST_PATH = '/collector/ingest/1.0/flows';
/** Per-batch limits of the protocol (16 MiB on the wire; the service also takes 64 MiB of body gzipped into that). */
export const MAX_BATCH_FLOWS = 10_000;
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;
export const MAX_BATCH_UNZIPPED_BYTES = 64 * 1024 * 1024;
/** The service's limit on batch_id: 1–128 printable ASCII characters. */
const MAX_BATCH_ID = 128;

const gzip = promisify(gzipCallback);

export const DEFAULT_BATCH_FLOWS = 2_000;

/** How batch bodies are written: JSON, or a ClickHouse Native block (native-batch.ts) when the flows fit one. */
export const BATCH_FORMATS = ['json', 'native'] as const;
/**
 * What a collector sends unless told otherwise: Native, about two thirds of JSON's CPU per flow on
 * the service (docs/flowstore.md "Throughput") and less to write here; a service that refuses it
 * gets the batch again as JSON. The queue itself defaults to JSON, the format every service takes.
 */
export const DEFAULT_BATCH_FORMAT = 'native' satisfies (typeof BATCH_FORMATS)[number];
export type BatchFormat = (typeof BATCH_FORMATS)[number];
/** About 50 MB of serialized flows at ~2.5 KB each. */
export const DEFAULT_MAX_QUEUED_FLOWS = 20_000;

export interface Tokens {
  token(): Promise<string>;
  invalidate(): void;
}

export interface IngestOptions {
  baseUrl: string;
  tokens: Tokens;
  /** Batch ids are `<prefix>-<seq>`; the prefix must be unique per node and run (see batchIdPrefix()). */
  batchIdPrefix: string;
  /** Gzip batch bodies (Content-Encoding: gzip): about a tenth of the bytes, sent and queued. Default true. */
  gzip?: boolean;
  /**
   * 'native': a batch goes as one ClickHouse Native block, which the service inserts without
   * parsing JSON; a batch the format cannot express still goes as JSON. Default 'json'.
   */
  format?: BatchFormat;
  /** Sent as the batch's `node_id` when it returns one (legacy collectors; managed nodes are known by their credential). */
  nodeId?: () => string | undefined;
  logger: Logger;
  batchFlows?: number;
  maxQueuedFlows?: number;
  /** Batches in flight at once. Default 2. */
  concurrency?: number;
  requestTimeoutMs?: number;
  backoff?: BackoffOptions;
  fetch?: Fetch;
  /** The credential cannot ingest (revoked key, 403): nothing this queue can do will help. */
  onFatal?: (error: Error) => void;
}

export interface IngestStats {
  /** Flows not acknowledged yet (waiting or in flight). */
  queued: number;
  /**
   * Of `queued`, flows of batches whose latest attempt got no answer (connection lost, timed out):
   * the service may have stored them. Only a retry of the batch (same id, stored once) would tell.
   */
  unconfirmed: number;
  in_flight_batches: number;
  /** Flows the service accepted. */
  sent: number;
  /** Flows the service refused one by one (`rejected` of a 200), plus whole batches it refused. */
  failed: number;
  rejected: number;
  dropped: number;
  batches_sent: number;
  /** Attempts that failed and were retried. */
  retries: number;
}

interface Batch {
  id: string;
  /** The request body exactly as sent, every time: the same batch id always carries the same flows. */
  body: Buffer;
  /** Its request headers (encoding; a Native batch's type, id and node id), sent with the body. */
  headers: Record<string, string>;
  flows: number;
  /** Its latest attempt got no answer. */
  unanswered?: boolean;
}

/**
 * `<machine>-<run>`, printable ASCII and short enough that `-<seq>` stays within 128 characters;
 * a machine id that is not gets hashed.
 */
export function batchIdPrefix(machineId: string, runId: string): string {
  const machine = /^[\x21-\x7e]{1,64}$/.test(machineId) ? machineId : `m${createHash('sha256').update(machineId).digest('hex').slice(0, 24)}`;
  return `${machine}-${runId}`.slice(0, MAX_BATCH_ID - 16);
}

/** 'split': refused as too large; 'as-json': a Native batch the service refused. */
type Outcome = 'acked' | 'dropped' | 'split' | 'as-json' | 'aborted';

export class QueueClosed extends Error {}

export class IngestQueue {
  private readonly waiting: Batch[] = [];
  private queuedFlows = 0;
  private inFlight = 0;
  private seq = 0;
  private closed = false;
  /** Cuts the waits between attempts at close(); an attempt on the wire is never cut (see close()). */
  private readonly stopWaiting = new AbortController();
  private spaceWaiters: Array<() => void> = [];
  private workWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  private readonly senders: Promise<void>[] = [];
  private readonly batchFlows: number;
  readonly maxQueuedFlows: number;
  private readonly counters = { sent: 0, rejected: 0, dropped: 0, batches_sent: 0, retries: 0 };
  private readonly url: string;
  private readonly gzip: boolean;
  private readonly native: boolean;
  /**
   * A queue that sends Native batches also takes flows written as a block already (FlowSink): it
   * goes as one batch, or in halves read back from it when too large. Waits as push() does.
   */
  readonly pushNative?: (block: Buffer, rows: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: IngestOptions) {
    this.gzip = options.gzip ?? true;
    this.native = options.format === 'native';
    this.batchFlows = Math.max(1, Math.min(MAX_BATCH_FLOWS, options.batchFlows ?? DEFAULT_BATCH_FLOWS));
    this.maxQueuedFlows = Math.max(1, options.maxQueuedFlows ?? DEFAULT_MAX_QUEUED_FLOWS);
    this.url = joinUrl(options.baseUrl, INGEST_PATH);
    for (let i = 0; i < Math.max(1, options.concurrency ?? 2); i++) this.senders.push(this.sender());
    if (this.native) {
      this.pushNative = async (block, rows, signal) => this.enqueue(await this.batchesOf(block, rows, this.nextId(), () => decodeNativeBatch(block)), signal);
    }
  }

  stats(): IngestStats {
    return {
      queued: this.queuedFlows,
      unconfirmed: this.waiting.reduce((n, batch) => n + (batch.unanswered ? batch.flows : 0), 0),
      in_flight_batches: this.inFlight,
      failed: this.counters.rejected + this.counters.dropped,
      ...this.counters,
    };
  }

  /**
   * Queues flows in batches of at most batchFlows (and 16 MiB). Waits while the queue is full,
   * unless `signal` aborts (shutting down: the flows are queued over the cap, so stop() still
   * tries to send them and counts them if it cannot); throws QueueClosed once close() was called.
   */
  async push(flows: readonly unknown[], signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < flows.length; i += this.batchFlows) await this.enqueue(await this.serialize(flows.slice(i, i + this.batchFlows)), signal);
  }

  private async enqueue(batches: readonly Batch[], signal: AbortSignal | undefined): Promise<void> {
    for (const batch of batches) {
      await this.room(batch.flows, signal);
      this.waiting.push(batch);
      this.queuedFlows += batch.flows;
      this.workWaiters.shift()?.();
    }
  }

  /** True once every queued flow was acknowledged (or refused), false if timeoutMs passed first. */
  async drain(timeoutMs = Infinity): Promise<boolean> {
    if (this.queuedFlows === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const result = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return result;
  }

  /**
   * Stops sending: no batch is started or retried from now on, and flows still queued are reported
   * by stats().queued. Attempts already on the wire are waited for (each up to the request
   * timeout): cut off, the service would still store a batch it had read, and the flows would be
   * reported unsent although stored.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWaiting.abort();
    for (const wake of this.workWaiters.splice(0)) wake();
    for (const wake of this.spaceWaiters.splice(0)) wake();
    await Promise.all(this.senders);
  }

  private nextId(): string {
    return `${this.options.batchIdPrefix}-${++this.seq}`;
  }

  private async serialize(flows: readonly unknown[], id = this.nextId(), native = this.native): Promise<Batch[]> {
    return this.batchesOf(native ? encodeNativeBatch(flows) : undefined, flows.length, id, () => flows);
  }

  /**
   * The batch of `rows` flows: `block` when they are one (Native), else `flows()` as JSON. Halved,
   * each half in the same format, while the body passes the service's size limits.
   */
  private async batchesOf(block: Buffer | undefined, rows: number, id: string, flows: () => readonly unknown[]): Promise<Batch[]> {
    const nodeId = this.options.nodeId?.();
    const plain = block ?? Buffer.from(JSON.stringify({ batch_id: id, ...(nodeId ? { node_id: nodeId } : {}), flows: flows() }));
    const body = this.gzip ? await gzip(plain, block ? { level: NATIVE_GZIP_LEVEL } : {}) : plain;
    if ((body.length <= MAX_BATCH_BYTES && plain.length <= MAX_BATCH_UNZIPPED_BYTES) || rows === 1) {
      const headers: Record<string, string> = this.gzip ? { 'content-encoding': 'gzip' } : {};
      // A Native body has no room for the batch's id and node id: headers carry them.
      if (block) Object.assign(headers, { 'content-type': NATIVE_CONTENT_TYPE, 'x-batch-id': id }, nodeId ? { 'x-node-id': nodeId } : {});
      return [{ id, body, headers, flows: rows }];
    }
    const all = flows();
    const half = Math.ceil(all.length / 2);
    const native = block !== undefined;
    return [...(await this.serialize(all.slice(0, half), undefined, native)), ...(await this.serialize(all.slice(half), undefined, native))];
  }

  /**
   * A refused batch's flows under new ids (nothing of it was stored): halved in its own format
   * when it was too large, else as JSON.
   */
  private async reserialize(batch: Batch, outcome: 'split' | 'as-json'): Promise<Batch[]> {
    const flows = batchFlows(batch);
    if (outcome === 'as-json') return this.serialize(flows, `${batch.id}.json`, false);
    const half = Math.ceil(flows.length / 2);
    const native = isNative(batch);
    return [...(await this.serialize(flows.slice(0, half), `${batch.id}.1`, native)), ...(await this.serialize(flows.slice(half), `${batch.id}.2`, native))];
  }

  private async room(n: number, signal?: AbortSignal): Promise<void> {
    // An empty queue takes any batch, so a batch larger than the cap cannot wait forever.
    while (!this.closed && !signal?.aborted && this.queuedFlows > 0 && this.queuedFlows + n > this.maxQueuedFlows) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.spaceWaiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    if (this.closed) throw new QueueClosed('the ingest queue is closed');
  }

  private async sender(): Promise<void> {
    while (!this.closed) {
      const batch = this.waiting.shift();
      if (!batch) {
        await new Promise<void>((resolve) => this.workWaiters.push(resolve));
        continue;
      }
      this.inFlight++;
      let outcome: Outcome;
      try {
        outcome = await this.deliver(batch);
      } finally {
        this.inFlight--;
      }
      if (outcome === 'aborted') {
        this.waiting.unshift(batch); // still counted in queued: it was not sent
        return;
      }
      if (outcome === 'split' || outcome === 'as-json') {
        const parts = await this.reserialize(batch, outcome);
        this.waiting.unshift(...parts); // same flows, still counted in queued
        for (let i = 1; i < parts.length; i++) this.workWaiters.shift()?.();
        continue;
      }
      this.queuedFlows -= batch.flows;
      for (const wake of this.spaceWaiters.splice(0)) wake();
      if (this.queuedFlows === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** Sends one batch until the service acknowledges or refuses it, or the queue closes. */
  private async deliver(batch: Batch): Promise<Outcome> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000, ...this.options.backoff });
    const log = this.options.logger;
    const signal = this.stopWaiting.signal;
    let unauthorized = 0;
    const retry = async (event: string, waitMs: number, fields: Record<string, unknown>) => {
      this.counters.retries++;
      log.warn(event, { batch_id: batch.id, flows: batch.flows, retry_in_ms: waitMs, ...fields });
      await sleep(waitMs, signal);
    };
    while (!signal.aborted) {
      let token: string;
      try {
        token = await this.options.tokens.token();
      } catch (error) {
        if (error instanceof CredentialRejected) {
          this.options.onFatal?.(error);
          await sleep(backoff.maxMs, signal);
        } else await retry('ingest.token_failed', backoff.next(), { error });
        continue;
      }
      let res;
      try {
        res = await request(this.url, {
          raw: batch.body,
          headers: batch.headers,
          token,
          timeoutMs: this.options.requestTimeoutMs ?? 30_000,
          fetch: this.options.fetch,
        });
      } catch (error) {
        batch.unanswered = true;
        await retry('ingest.unreachable', backoff.next(), { error });
        continue;
      }
      batch.unanswered = false;
      if (res.status >= 200 && res.status < 300) {
        const body = (res.body ?? {}) as { accepted?: unknown; rejected?: unknown };
        const rejected = Array.isArray(body.rejected) ? body.rejected : [];
        const accepted = typeof body.accepted === 'number' ? body.accepted : batch.flows - rejected.length;
        this.counters.sent += accepted;
        this.counters.rejected += rejected.length;
        this.counters.batches_sent++;
        if (rejected.length) log.warn('ingest.records_rejected', { batch_id: batch.id, rejected: rejected.length, first: rejected.slice(0, 3) });
        else log.debug('ingest.batch_sent', { batch_id: batch.id, accepted });
        return 'acked';
      }
      if (res.status === 401) {
        // The token expired or was revoked under us: one immediate retry with a new one, then back off.
        this.options.tokens.invalidate();
        await retry('ingest.token_refused', ++unauthorized === 1 ? 0 : backoff.next(), { status: 401 });
        continue;
      }
      if (res.status === 413 && batch.flows > 1) {
        log.warn('ingest.batch_too_large', { batch_id: batch.id, flows: batch.flows, bytes: batch.body.length });
        return 'split';
      }
      if (res.status === 403) {
        // No node for this credential yet (ingest before the first hello), or one that is being
        // re-enrolled: keep the flows and try again slowly. A revoked key shows at the token endpoint.
        await retry('ingest.forbidden', backoff.maxMs, { status: 403, error: errorText(res) });
        continue;
      }
      if (res.status === 404 || res.status === 408 || res.status === 425 || res.status === 429 || res.status >= 500) {
        const hinted = retryAfterMs(res.headers.get('retry-after'));
        const step = backoff.next();
        await retry('ingest.retry', hinted !== undefined ? Math.max(hinted, 100) : step, { status: res.status, error: errorText(res) });
        continue;
      }
      if ((res.status === 400 || res.status === 415) && isNative(batch)) {
        // A service without Native batches, or a column whose type its path does not take (a
        // string where it keeps numbers): JSON carries the same flows, judged one by one.
        log.warn('ingest.native_refused', { batch_id: batch.id, flows: batch.flows, status: res.status, error: errorText(res) });
        return 'as-json';
      }
      // 400 and the like: this batch can never be accepted; keeping it would stop all others.
      this.counters.dropped += batch.flows;
      log.error('ingest.batch_refused', { batch_id: batch.id, flows: batch.flows, status: res.status, error: errorText(res) });
      return 'dropped';
    }
    return 'aborted';
  }
}

const isNative = (batch: Batch) => batch.headers['content-type'] === NATIVE_CONTENT_TYPE;

/** The flows a batch carries, read back from its body. */
function batchFlows(batch: Batch): unknown[] {
  const plain = batch.headers['content-encoding'] === 'gzip' ? gunzipSync(batch.body) : batch.body;
  if (isNative(batch)) return decodeNativeBatch(plain);
  return (JSON.parse(plain.toString('utf8')) as { flows: unknown[] }).flows;
}
