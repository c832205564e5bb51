import { ingestBatches, ingestFlows } from '../../infra/metrics.js';
import type { Logger } from '../../infra/logger.js';

/** What one node's collector sent during an interval. */
interface NodeActivity {
  batches: number;
  flows: number;
  rejected: number;
  /** Refused batches by the error code they were answered with. */
  refused: Record<string, number>;
}

/**
 * Ingest's outcomes, counted for /metrics and logged as one `ingest.activity` line per node per
 * interval: collectors send a batch every second or so, and a line per batch was nearly all of the
 * log (775 of 791 lines of a run). The per-request access line is at debug level (ingest.http.ts).
 *
 * Refused batches are logged under `node_id: null`: a refusal (no token, a body that does not
 * parse, a full queue) mostly comes before the batch's node is known.
 */
export class IngestActivity {
  private readonly nodes = new Map<string | null, NodeActivity>();
  private timer: NodeJS.Timeout | undefined;
  /** When the interval being counted began (its first batch). */
  private since = 0;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  accepted(nodeId: string, flows: number, rejected: number): void {
    ingestBatches.inc({ outcome: 'accepted', code: 'ok' });
    ingestFlows.inc({ outcome: 'accepted' }, flows);
    ingestFlows.inc({ outcome: 'rejected' }, rejected);
    const node = this.activityOf(nodeId);
    node.batches++;
    node.flows += flows;
    node.rejected += rejected;
  }

  refused(code: string): void {
    ingestBatches.inc({ outcome: 'refused', code });
    const node = this.activityOf(null);
    node.refused[code] = (node.refused[code] ?? 0) + 1;
  }

  /** Writes the interval's lines now (the timer does, and stop()); idle, the timer ends until the next batch. */
  flush(): void {
    if (this.nodes.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const seconds = Math.round((Date.now() - this.since) / 100) / 10;
    for (const [nodeId, { batches, flows, rejected, refused }] of this.nodes) {
      this.logger.info('ingest.activity', { node_id: nodeId, seconds, batches, flows, rejected, ...(Object.keys(refused).length ? { refused } : {}) });
    }
    this.nodes.clear();
  }

  stop(): void {
    this.flush();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private activityOf(nodeId: string | null): NodeActivity {
    // The timer must not keep a stopping process alive: stop() writes what is left.
    this.timer ??= setInterval(() => this.flush(), this.intervalMs).unref();
    if (this.nodes.size === 0) this.since = Date.now();
    let node = this.nodes.get(nodeId);
    if (!node) this.nodes.set(nodeId, (node = { batches: 0, flows: 0, rejected: 0, refused: {} }));
    return node;
  }
}
