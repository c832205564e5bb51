import type { Session } from '../../auth/session.js';
import { DomainError, type ErrorCode, badRequest, missingFields } from '../../errors.js';
import { type FlowEngine, FlowEngineError, type IngestOutcome } from '../../flowstore/index.js';
import { currentTimeWindow, dedupTokenFor, ingestOutcome } from '../../flowstore/ingest.js';
import { FlowIngestBusyError, type FlowInsertQueue } from '../../flowstore/insert-queue.js';
import type { Logger } from '../../infra/logger.js';
import type { IngestNodeStore } from './ingest-nodes.store.js';
import type { IngestWorkers } from './ingest-workers.js';
import type { BatchEncoding, BatchEnvelope } from './ingest-workers.protocol.js';
import type { IngestActivity } from './ingest.activity.js';
import { MAX_FLOWS_PER_BATCH, batchTooLarge } from './ingest-limits.js';

const MAX_BATCH_ID = 128;
/** ingest_seen_at is written at most this often per node. */
const INGEST_SEEN_WRITE_MS = 15_000;
export const RETRY_AFTER_SECONDS = 5;

/**
 * Telemetry ingest (docs/collector-protocol.md section 4): flows from a node's collector, stamped
 * with the node's tenant server-side, stored once per batch id, acknowledged only once stored. A
 * batch's body is parsed, checked and encoded in an ingest worker (ingest-workers.ts); this thread
 * decides who may send it and for which node, and queues it for the insert.
 */
export class IngestService {
  private readonly ingestSeenWritten = new Map<string, number>();

  constructor(
    private readonly nodes: IngestNodeStore,
    private readonly flows: FlowEngine,
    private readonly queue: FlowInsertQueue,
    private readonly workers: IngestWorkers,
    private readonly logger: Logger,
    /** Every batch's outcome, counted and logged per node per interval (ingest.http.ts records them). */
    readonly activity: IngestActivity,
  ) {}

  /** Flows accepted and not yet stored (/metrics: ingest_queue_flows). */
  get queueDepth(): number {
    return this.queue.depth;
  }

  /** Refuses a batch before its body is read when ingest is already as far behind as it may get. */
  assertRoom(): void {
    try {
      this.queue.assertRoom();
    } catch (error) {
      throw asDomainError(error);
    }
  }

  /** Ingests a batch's body as sent. */
  async ingest(session: Session, body: Buffer, encoding: BatchEncoding): Promise<IngestOutcome & { batchId: string; nodeId: string }> {
    const parsed = await this.workers.parse(body, encoding);
    try {
      const { batchId, nodeId } = this.checkEnvelope(session, parsed.envelope);
      const node = await this.nodeOf(session, nodeId);
      const stamp = { customerId: node.customerId, nodeId: node.id, batchId, ingestTimeMs: Date.now() };
      let outcome: IngestOutcome;
      try {
        const { rejected, batch } = await parsed.prepare(stamp, await currentTimeWindow(this.flows), dedupTokenFor(stamp));
        const kept = batch.slices.reduce((n, slice) => n + slice.indexes.length, 0);
        outcome = ingestOutcome(kept, rejected, await this.queue.submit(batch));
      } catch (error) {
        // Why the store failed is for the operator; the collector is only told to retry.
        if (error instanceof FlowEngineError) this.logger.warn('ingest.store_failed', { error, node_id: node.id, batch_id: batchId });
        throw asDomainError(error);
      }
      await this.markIngest(node);
      return { ...outcome, batchId, nodeId: node.id };
    } finally {
      parsed.release();
    }
  }

  /** Stops the ingest workers (the server's shutdown). */
  close(): Promise<void> {
    return this.workers.close();
  }

  private checkEnvelope(session: Session, envelope: BatchEnvelope): { batchId: string; nodeId: string | undefined } {
    session.assert('collector.ingest');
    const absent = [typeof envelope.batch_id !== 'string' && 'batch_id', envelope.flows === 'absent' && 'flows'].filter((f): f is string => Boolean(f));
    if (absent.length) throw missingFields(absent);
    const batchId = (envelope.batch_id as string).trim();
    if (!batchId || batchId.length > MAX_BATCH_ID || !/^[\x21-\x7e]+$/.test(batchId)) {
      throw badRequest('invalid_request', `batch_id must be 1-${MAX_BATCH_ID} printable ASCII characters`);
    }
    if (typeof envelope.flows !== 'number') throw badRequest('invalid_request', 'flows must be an array of flow records');
    if (envelope.flows > MAX_FLOWS_PER_BATCH) throw batchTooLarge();
    if (envelope.node_id === false) throw badRequest('invalid_request', 'node_id must be a string');
    return { batchId, nodeId: envelope.node_id };
  }

  /**
   * The node the batch belongs to: the one enrolled with this credential, or (legacy collectors
   * sharing one ingest client) a named node of the caller's own tenant.
   */
  private async nodeOf(session: Session, nodeId: string | undefined) {
    const node = nodeId ? await this.nodes.find(session.customerId, nodeId) : await this.nodes.ofClient(session.customerId, session.claims.clientId);
    if (!node || (node.kind === 'managed' && node.clientId !== session.claims.clientId)) {
      throw new DomainError(403, 'node_not_registered', 'This credential has no node to ingest for; send hello on the control channel first');
    }
    return node;
  }

  private async markIngest(node: { customerId: string; id: string }): Promise<void> {
    const last = this.ingestSeenWritten.get(node.id) ?? 0;
    if (Date.now() - last < INGEST_SEEN_WRITE_MS) return;
    this.ingestSeenWritten.set(node.id, Date.now());
    if (this.ingestSeenWritten.size > 100_000) this.ingestSeenWritten.clear();
    await this.nodes.markSeen(node.customerId, node.id, new Date());
  }
}

/** A 503 the collector retries after Retry-After seconds; anything else as it is. */
function asDomainError(error: unknown): unknown {
  const retryLater = (code: ErrorCode, message: string, seconds: number) =>
    new DomainError(503, code, message, { body: { retry_after: seconds }, headers: { 'retry-after': String(seconds) } });
  if (error instanceof FlowIngestBusyError) return retryLater('ingest_busy', error.message, error.retryAfterSeconds);
  if (error instanceof FlowEngineError) {
    return retryLater('store_unavailable', 'The flow store is unavailable; retry the same batch later', RETRY_AFTER_SECONDS);
  }
  return error;
}
