/**
 * Every Prometheus metric the service exports, in one catalogue (docs/operations.md lists them):
 * the code that counts imports its metric from here, and `/metrics` renders `registry`.
 *
 * The registry is the process's, as Prometheus scrapes a process. What belongs to one app
 * (queue depth, pools, channels) is sampled at scrape time from the apps that `watch` it: one in
 * production, several in a test process, whose values add up.
 */
import { isMainThread } from 'node:worker_threads';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
// Process CPU, memory, GC, handles and the event-loop lag (nodejs_eventloop_lag_*): the main
// thread's; the chDB thread (flowstore/chdb-thread.ts) imports this module too, unscraped.
if (isMainThread) collectDefaultMetrics({ register: registry });

const registers = [registry];

/** Labels whose values come from outside (a path, an operation name) are capped to this many values each. */
export const MAX_LABEL_VALUES = 200;
/** The value a capped label takes once it has seen MAX_LABEL_VALUES others. */
export const OTHER_LABEL = 'other';

/** A label's value as given while fewer than `max` distinct values were seen, else OTHER_LABEL: series stay bounded. */
export function boundedLabel(max = MAX_LABEL_VALUES): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route template and status, and how long they took to answer',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

export const graphqlOperations = new Counter({
  name: 'graphql_operations_total',
  help: 'GraphQL operations by name, type (query, mutation, subscription), transport (graphql, ws, rest) and outcome (ok, error, invalid)',
  labelNames: ['operation', 'type', 'transport', 'outcome'] as const,
  registers,
});

export const ingestBatches = new Counter({
  name: 'ingest_batches_total',
  help: 'Collector flow batches by outcome (accepted, refused) and, when refused, the error code answered',
  labelNames: ['outcome', 'code'] as const,
  registers,
});

export const ingestFlows = new Counter({
  name: 'ingest_flows_total',
  help: 'Flows of accepted batches: stored (accepted) or refused one by one for their data (rejected)',
  labelNames: ['outcome'] as const,
  registers,
});

export const clickhouseStatementDuration = new Histogram({
  name: 'clickhouse_statement_duration_seconds',
  help: 'ClickHouse statements by name (their /* name */ comment) and outcome (ok, error, timeout, aborted)',
  labelNames: ['statement', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers,
});

export const detectionRunDuration = new Histogram({
  name: 'detection_run_duration_seconds',
  help: 'Detection runs by trigger (schedule, manual) and outcome (completed, skipped, failed), and how long they took',
  labelNames: ['trigger', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  registers,
});

export const automationDeliveries = new Counter({
  name: 'automation_deliveries_total',
  help: 'Automation action attempts by action and the status they left the run in (succeeded, retrying, failed, cancelled)',
  labelNames: ['action', 'status'] as const,
  registers,
});

export const auditEntriesWritten = new Counter({
  name: 'audit_entries_written_total',
  help: 'Audit log entries written to PostgreSQL (docs/audit.md)',
  registers,
});

export const auditEntriesDropped = new Counter({
  name: 'audit_entries_dropped_total',
  help: 'Audit log entries lost, by reason: queue_full (the writer fell behind) or write_failed (the batch insert failed)',
  labelNames: ['reason'] as const,
  registers,
});

type Sample<L extends string> = (set: (labels: Partial<Record<L, string>>, value: number) => void) => void;

/** A gauge read at scrape time from every source watching it; `watch` returns the unwatch. */
function sampledGauge<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  const sources = new Set<Sample<L>>();
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const sample of sources) sample((labels, value) => this.inc(labels, value));
    },
  });
  return {
    watch(sample: Sample<L>): () => void {
      sources.add(sample);
      return () => void sources.delete(sample);
    },
  };
}

export const ingestQueueFlows = sampledGauge('ingest_queue_flows', 'Flows accepted for storage and not yet stored (the insert queue depth)', []);

export const postgresPoolConnections = sampledGauge('postgres_pool_connections', 'PostgreSQL pool connections by pool (prisma, raw) and state (active, idle)', [
  'pool',
  'state',
] as const);

export const postgresPoolWaiting = sampledGauge('postgres_pool_waiting', 'Statements waiting for a PostgreSQL pool connection, by pool', ['pool'] as const);

export const auditQueueEntries = sampledGauge('audit_queue_entries', 'Audit log entries waiting to be written (the audit writer queue depth)', []);

export const collectorConnections = sampledGauge('collector_control_connections', 'Collector control channels held by this process', []);
