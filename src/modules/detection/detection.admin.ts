import { parseArgs } from 'node:util';
import { usageError } from '../../admin/usage.js';
import type { Config } from '../../config.js';
import { DomainError, notFound } from '../../errors.js';
import type { Database } from '../../infra/database.js';
import { openFlowEngine } from '../../infra/flow-engine.js';
import { createLogger } from '../../infra/logger.js';
import { createDetectionService } from '../../services.js';
import { DetectionPostgresStore } from './detection-postgres.store.js';
import { type RunResult, awaitRun, processName, requestRun } from './runner.js';

export const detectUsage = `  detect run --customer CUSTOMER_ID [--window-minutes N]
      detection now over the last N minutes (1-10080, default DETECTION_WINDOW_MINUTES);
      after backfilling H hours of flows, N = 60 x H reads all of them`;

/** How long a running server gets to claim the request before the CLI runs it itself. */
const CLAIM_WAIT_MS = 3_000;
const RUN_WAIT_MS = 15 * 60_000;

/**
 * `detect run`: detection now, for a tenant and its children; prints what it opened, updated and
 * closed. The run is requested through PostgreSQL so that a running server executes it (with the
 * embedded chDB only the server may open the flow store); when no server claims it, the CLI opens
 * the flow store and runs it itself.
 */
export async function detectRunCommand(args: string[], db: Database, config: Config): Promise<RunResult> {
  const { values } = parseArgs({ args, options: { customer: { type: 'string' }, 'window-minutes': { type: 'string' } } });
  const customerId = values.customer?.trim();
  if (!customerId) throw usageError('--customer is required', detectUsage);
  const minutes = values['window-minutes'] === undefined ? config.detectionWindowMinutes : Number(values['window-minutes']);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 10_080) throw usageError('--window-minutes must be an integer from 1 to 10080', detectUsage);
  const runs = new DetectionPostgresStore(db.prisma);
  if (!(await runs.isLive(customerId))) throw notFound('not_found', `Customer ${customerId} was not found`);
  const nowMs = Date.now();
  const runId = await requestRun(db, runs, customerId, { fromMs: nowMs - minutes * 60_000, toMs: nowMs });
  const seen = await awaitRun(runs, runId, CLAIM_WAIT_MS, (r) => r.status !== 'requested');
  if (seen.status === 'requested' && (await runs.claim(runId, processName()))) await runHere(runId, db, runs, config);
  const run = await awaitRun(runs, runId, RUN_WAIT_MS);
  if (run.status === 'failed') throw new DomainError(500, 'detection_failed', `Detection run ${runId} failed: ${run.error ?? 'unknown error'}`);
  if (run.status !== 'completed') throw new DomainError(504, 'detection_timeout', `Detection run ${runId} has not finished (status ${run.status})`);
  // jsonb does not keep key order: print the fields in the order a reader expects.
  const r = run.result as unknown as RunResult;
  return {
    run_id: r.run_id,
    customer_id: r.customer_id,
    trigger: r.trigger,
    tenants: r.tenants,
    window: r.window,
    opened: r.opened,
    updated: r.updated,
    closed: r.closed,
    failed: r.failed,
    // A run executed by a server process older than suppressions has none.
    suppressed: r.suppressed ?? 0,
    skipped: r.skipped,
  };
}

async function runHere(runId: string, db: Database, runs: DetectionPostgresStore, config: Config): Promise<void> {
  const logger = createLogger('warn');
  let flows;
  try {
    flows = await openFlowEngine(config, logger);
  } catch (error) {
    // Most likely a server holds the embedded flow store: hand the run back for it to claim.
    await runs.unclaim(runId);
    logger.warn('detection.flow_store_unavailable', { error });
    return;
  }
  try {
    const service = createDetectionService(db, flows, logger, {
      intervalMs: 0,
      windowMs: config.detectionWindowMinutes * 60_000,
      crossProcessLock: config.databaseUrl !== undefined,
    });
    await service.execute(runId).catch(() => undefined);
  } finally {
    await flows.close();
  }
}
