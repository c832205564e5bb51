import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { DetectionRun, Investigation, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/database.js';
import { LockSpace, PeriodicJob, withAdvisoryLock } from '../../infra/jobs.js';
import type { Logger } from '../../infra/logger.js';
import { detectionRunDuration } from '../../infra/metrics.js';
import { type EventRecorder, noEvents } from '../events/events.service.js';
import type { InvestigationStore, InvestigationWrite } from '../investigations/investigations.store.js';
import { raiseFor } from '../investigations/triage.model.js';
import { type TriageStore, subjectKey } from '../investigations/triage.store.js';
import type { DetectionPostgresStore } from './detection-postgres.store.js';
import type { DetectionStore, TimeWindow } from './detection.store.js';
import { BEACON_THRESHOLDS, DETECTORS, detectorOf } from './detectors/index.js';
import type { Detector, Episode } from './episode.js';
import { loadHostContext } from './host-context.js';
import { buildAnalysis, iso } from './narrative.js';

export interface DetectionOptions {
  /** How often the schedule runs every tenant's detection; 0 turns the schedule off. */
  intervalMs: number;
  /** How far back a run looks (beaconing always looks back at least BEACON_THRESHOLDS.lookbackMs). */
  windowMs: number;
  /**
   * Whether runs of a tenant exclude each other across processes with an advisory lock (a
   * PostgreSQL server). Off for embedded PGlite: one process owns it, its connections share one
   * session (where advisory locks are re-entrant), and its pool has a single connection that a
   * held lock would take from everything else.
   */
  crossProcessLock?: boolean;
}

/** One investigation a run touched, as `detect run` prints it. */
export interface InvestigationChange {
  id: string;
  customer_id: string;
  detector: string;
  source: string | null;
  destination: string | null;
  status: string;
  disposition: string | null;
  confidence: number | null;
  severity: number;
  headline: string | null;
  first_activity_at: string;
  last_activity_at: string;
  /** False once the activity has been quiet for the detector's quiet period (closed). */
  active: boolean;
  /** The collectors whose flows show it. */
  node_ids: string[];
}

export interface TenantOutcome {
  opened: InvestigationChange[];
  updated: InvestigationChange[];
  closed: InvestigationChange[];
  /** Opened or updated, but the analysis failed (status `failed`). */
  failed: InvestigationChange[];
  /** Episodes left alone because their subject is suppressed (docs/triage.md): nothing opened or reopened. */
  suppressed: number;
}

export interface RunResult extends TenantOutcome {
  run_id: string;
  customer_id: string;
  trigger: 'schedule' | 'manual';
  tenants: string[];
  /** Tenants another process was already running (scheduled runs skip them). */
  skipped: string[];
  window: { start: string; end: string };
}

/** Episodes of one subject starting in the same bucket are the same investigation, whoever runs first. */
const FINGERPRINT_BUCKET_MS = 5 * 60_000;
/** Run history kept in detection_runs. */
const RUN_RETENTION_MS = 7 * 24 * 3_600_000;
const emptyOutcome = (): TenantOutcome => ({ opened: [], updated: [], closed: [], failed: [], suppressed: 0 });

export function fingerprint(customerId: string, e: Pick<Episode, 'detector' | 'source' | 'destination' | 'firstMs'>): string {
  const bucket = Math.floor(e.firstMs / FINGERPRINT_BUCKET_MS);
  return createHash('sha256').update([e.detector, customerId, e.source, e.destination, bucket].join('\u0000')).digest('hex').slice(0, 40);
}

export const subjectOf = (e: Pick<Episode, 'source' | 'destination'>) => `${e.source}|${e.destination}`;

/** This process, as `detection_runs.claimed_by` names it. */
export const processName = () => `${hostname()}:${process.pid}`;

/** Records a `detect run` request and tells the server processes (any may claim it); returns the run id. */
export async function requestRun(db: Pick<Database, 'notify'>, runs: DetectionPostgresStore, customerId: string, window: TimeWindow): Promise<string> {
  const run = await runs.request(customerId, window);
  await db.notify('detection_requested', run.id);
  return run.id;
}

const finished = (run: DetectionRun) => run.status === 'completed' || run.status === 'failed';

/**
 * Polls a run until `until` holds (default: finished) or `timeoutMs` passes; returns its last
 * state. Polls back off from 100 ms to 1 s; a failed poll is retried (up to five in a row).
 */
export async function awaitRun(
  runs: Pick<DetectionPostgresStore, 'get'>,
  runId: string,
  timeoutMs: number,
  until: (run: DetectionRun) => boolean = finished,
): Promise<DetectionRun> {
  const deadline = Date.now() + timeoutMs;
  let delayMs = 100;
  let failures = 0;
  for (;;) {
    try {
      const run = await runs.get(runId);
      failures = 0;
      if (until(run) || Date.now() >= deadline) return run;
    } catch (error) {
      if (++failures >= 5) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(1_000, delayMs * 1.5);
  }
}

/**
 * Detection (docs/detections.md): runs the detectors over a tenant's flows and opens, updates and
 * closes its investigations. Runs on a schedule in every server process — per tenant under a
 * PostgreSQL advisory lock, so only one process runs a tenant at a time, and skipped when another
 * process ran it less than half an interval ago — and on demand (`detect run`), through a request
 * row that one server process claims.
 */
export class DetectionService {
  private readonly job: PeriodicJob;
  /** Per-tenant exclusion inside this process (advisory locks are re-entrant within a session). */
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly me = processName();
  private stopped = false;

  constructor(
    /** Notifications of requests, and the connections the cross-process locks are held on. */
    private readonly db: Pick<Database, 'listen' | 'pool'>,
    private readonly runs: DetectionPostgresStore,
    /** The flows the detectors read. */
    private readonly store: DetectionStore,
    private readonly investigations: InvestigationStore,
    /** The suppressions an AUTHORIZED answer creates: subjects a run leaves alone. */
    private readonly suppressions: Pick<TriageStore, 'suppressedSubjects'>,
    private readonly logger: Logger,
    readonly options: DetectionOptions,
    private readonly events: EventRecorder = noEvents,
    private readonly detectors: readonly Detector[] = DETECTORS,
  ) {
    this.job = new PeriodicJob('detection', options.intervalMs, () => this.runSchedule(), logger);
  }

  /** Starts the schedule and answers `detect run` requests from other processes. */
  async start(): Promise<void> {
    await this.db.listen('detection_requested', (runId) => {
      if (this.stopped) return;
      this.handleRequest(runId).catch((error) => this.logger.error('detection.request_failed', { runId, error }));
    });
    this.job.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job.stop();
    await Promise.allSettled([...this.running.values()]);
  }

  /** The sliding window a run ending at `nowMs` reads. */
  windowAt(nowMs: number, windowMs = this.options.windowMs): TimeWindow {
    return { fromMs: nowMs - windowMs, toMs: nowMs };
  }

  // --- on demand -------------------------------------------------------------------------

  /** Claims and executes a requested run (a `detection_requested` notification). */
  async handleRequest(runId: string): Promise<void> {
    if (!(await this.runs.claim(runId, this.me))) return;
    await this.execute(runId);
  }

  /** Executes a claimed run: the customer and its children, each under its lock (waiting for it). */
  async execute(runId: string, nowMs = Date.now()): Promise<RunResult> {
    const run = await this.runs.get(runId);
    try {
      const tree = await this.runs.treeOf(run.customerId);
      const ids = [run.customerId, ...tree.filter((id) => id !== run.customerId)];
      const result = await this.runTenants(run, ids, 'manual', nowMs);
      await this.runs.finish(run.id, 'completed', result, null);
      return result;
    } catch (error) {
      await this.runs.finish(run.id, 'failed', null, (error as Error).message);
      await this.recordFailure(run.customerId, run.id, 'manual', error);
      throw error;
    }
  }

  /**
   * Runs detection now, in this process, for a tenant and its children (tests, benchmarks and the
   * CLI when no server answers). `window` defaults to the configured sliding window ending now.
   */
  async runNow(customerId: string, opts: { window?: TimeWindow; nowMs?: number } = {}): Promise<RunResult> {
    const nowMs = opts.nowMs ?? Date.now();
    const window = opts.window ?? this.windowAt(nowMs);
    const run = await this.runs.start(customerId, { trigger: 'manual', window, claimedBy: this.me });
    return this.execute(run.id, nowMs);
  }

  // --- schedule --------------------------------------------------------------------------

  /** One scheduled pass: every tenant with recent flows or active investigations. */
  async runSchedule(nowMs = Date.now()): Promise<void> {
    const window = this.windowAt(nowMs);
    const all = await this.runs.liveTenants();
    const lookback = { fromMs: Math.min(window.fromMs, nowMs - BEACON_THRESHOLDS.lookbackMs), toMs: nowMs };
    const withFlows = await this.store.tenantsWithFlows(all, lookback);
    const withActive = await this.investigations.tenantsWithActive(all);
    for (const customerId of new Set([...withFlows, ...withActive])) {
      const run = await this.runs.start(customerId, { trigger: 'schedule', window, claimedBy: this.me, tenantIds: [customerId] });
      try {
        const result = await this.runTenants(run, [customerId], 'schedule', nowMs);
        // Another process had the tenant: its run is the record, not this non-run.
        if (result.skipped.length) await this.runs.delete(run.id);
        else await this.runs.finish(run.id, 'completed', result, null);
      } catch (error) {
        this.logger.error('detection.tenant_failed', { customerId, error });
        await this.runs.finish(run.id, 'failed', null, (error as Error).message);
        await this.recordFailure(customerId, run.id, 'schedule', error);
      }
    }
    // Requests whose notification no process heard (all were busy or restarting).
    for (const id of await this.runs.unclaimedSince(new Date(nowMs - 10_000), 10)) await this.handleRequest(id);
    await this.runs.prune(new Date(nowMs - RUN_RETENTION_MS));
  }

  // --- one run ---------------------------------------------------------------------------

  /** Runs the tenants, timed (/metrics: detection_run_duration_seconds). */
  private async runTenants(run: DetectionRun, tenantIds: string[], trigger: 'schedule' | 'manual', nowMs = Date.now()): Promise<RunResult> {
    const end = detectionRunDuration.startTimer({ trigger });
    try {
      const result = await this.detectTenants(run, tenantIds, trigger, nowMs);
      // Every tenant was another run's: nothing was analysed.
      end({ outcome: result.skipped.length === tenantIds.length ? 'skipped' : 'completed' });
      return result;
    } catch (error) {
      end({ outcome: 'failed' });
      throw error;
    }
  }

  private async detectTenants(run: DetectionRun, tenantIds: string[], trigger: 'schedule' | 'manual', nowMs: number): Promise<RunResult> {
    const window = { fromMs: run.windowStart.getTime(), toMs: run.windowEnd.getTime() };
    const result: RunResult = {
      run_id: run.id,
      customer_id: run.customerId,
      trigger,
      tenants: tenantIds,
      skipped: [],
      window: { start: iso(window.fromMs), end: iso(window.toMs) },
      ...emptyOutcome(),
    };
    await this.runs.setTenants(run.id, tenantIds);
    for (const customerId of tenantIds) {
      const outcome = await this.exclusively(customerId, trigger, nowMs, () => this.detectTenant(customerId, window, nowMs));
      if (!outcome) {
        result.skipped.push(customerId);
        continue;
      }
      for (const key of ['opened', 'updated', 'closed', 'failed'] as const) result[key].push(...outcome[key]);
      result.suppressed += outcome.suppressed;
      await this.record(customerId, run.id, trigger, window, outcome);
    }
    this.logger.info('detection.run', {
      runId: run.id,
      customerId: run.customerId,
      trigger,
      tenants: tenantIds.length,
      opened: result.opened.length,
      updated: result.updated.length,
      closed: result.closed.length,
      failed: result.failed.length,
      suppressed: result.suppressed,
    });
    return result;
  }

  /**
   * Runs `fn` for a tenant with no other run of it anywhere: in this process (a map of running
   * tenants) and across processes (an advisory lock). A scheduled run gives up when the tenant is
   * busy or was run less than half an interval ago; a manual run waits its turn.
   */
  private async exclusively<T>(customerId: string, trigger: 'schedule' | 'manual', nowMs: number, fn: () => Promise<T>): Promise<T | undefined> {
    const waitMs = trigger === 'manual' ? 10 * 60_000 : 0;
    let busy = this.running.get(customerId);
    if (busy && trigger === 'schedule') return undefined;
    while (busy) {
      await busy.catch(() => undefined);
      busy = this.running.get(customerId);
    }
    const guarded = async () => {
      if (trigger === 'schedule' && (await this.ranRecently(customerId, nowMs))) return undefined;
      return fn();
    };
    const attempt =
      this.options.crossProcessLock === false
        ? guarded().then((value) => ({ acquired: true as const, value }))
        : withAdvisoryLock(this.db.pool, LockSpace.detection, customerId, guarded, { waitMs });
    this.running.set(customerId, attempt);
    try {
      const locked = await attempt;
      return locked.acquired ? locked.value : undefined;
    } finally {
      this.running.delete(customerId);
    }
  }

  /** Whether another process completed a scheduled run of the tenant less than half an interval ago. */
  private async ranRecently(customerId: string, nowMs: number): Promise<boolean> {
    return this.runs.completedScheduleSince(customerId, new Date(nowMs - this.options.intervalMs / 2), this.me);
  }

  /** Runs every detector over one tenant's window and reconciles the episodes with its investigations. */
  async detectTenant(customerId: string, window: TimeWindow, nowMs: number): Promise<TenantOutcome> {
    const outcome = emptyOutcome();
    const touched = new Set<string>();
    const suppressed = await this.suppressions.suppressedSubjects(customerId, new Date(nowMs));
    for (const detector of this.detectors) {
      for (const episode of await detector.detect(this.store, customerId, window)) {
        // A suppressed subject was answered AUTHORIZED: no investigation is opened, updated or reopened for it.
        if (suppressed.has(subjectKey(episode))) {
          outcome.suppressed++;
          continue;
        }
        const change = await this.reconcile(customerId, detector, episode, nowMs);
        if (!change) continue;
        touched.add(change.investigation.id);
        const view = changeView(change.investigation);
        if (change.investigation.status === 'failed') outcome.failed.push(view);
        else if (change.opened) outcome.opened.push(view);
        else {
          if (change.changed) outcome.updated.push(view);
          if (change.closed) outcome.closed.push(view);
        }
      }
    }
    for (const investigation of await this.investigations.active(customerId)) {
      if (touched.has(investigation.id)) continue;
      const detector = detectorOf(investigation.detector);
      const episode = investigation.evidence as unknown as Episode;
      const quiet = detector ? detector.quietMs(episode) : 15 * 60_000;
      if (nowMs - investigation.lastActivityAt.getTime() <= quiet) continue;
      if (await this.investigations.close(customerId, investigation.id, new Date(nowMs), null)) {
        outcome.closed.push(changeView({ ...investigation, closedAt: new Date(nowMs) }));
      }
    }
    return outcome;
  }

  /** Opens an investigation for a new episode, or merges the episode into the one it continues. */
  private async reconcile(
    customerId: string,
    detector: Detector,
    episode: Episode,
    nowMs: number,
  ): Promise<{ investigation: Investigation; opened: boolean; changed: boolean; closed: boolean } | undefined> {
    const quiet = detector.quietMs(episode);
    const subject = subjectOf(episode);
    const existing = await this.investigations.findOverlapping(customerId, detector.kind, subject, episode.firstMs - quiet, episode.lastMs + quiet);
    if (existing) {
      const stored = existing.evidence as unknown as Episode;
      const merged = mergeEpisodes(stored, episode);
      const active = nowMs - merged.lastMs <= quiet;
      const changed = !sameJson(merged, stored);
      const closed = !active && existing.closedAt === null;
      if (!changed && active === (existing.closedAt === null)) return undefined;
      return { investigation: await this.analyse(customerId, existing, detector, merged, nowMs), opened: false, changed, closed };
    }
    const assessment = detector.assess(episode);
    const opened = await this.investigations.open(customerId, fingerprint(customerId, episode), writeOf(episode, assessment.severity, null), new Date(nowMs));
    // Null: another run opened this very episode a moment ago (same fingerprint); it is that run's.
    if (!opened) return undefined;
    return { investigation: await this.analyse(customerId, opened, detector, episode, nowMs), opened: true, changed: true, closed: false };
  }

  /** Analyses an episode into its investigation: verdict, findings, provenance... or `failed`. */
  private async analyse(customerId: string, investigation: Investigation, detector: Detector, episode: Episode, nowMs: number): Promise<Investigation> {
    try {
      const assessment = detector.assess(episode);
      const host = await loadHostContext(this.runs, customerId, episode.host, episode.nodeIds);
      const story = detector.story(episode, assessment, host);
      const analysis = buildAnalysis(episode, assessment, host, story, investigation.detectedAt.getTime(), nowMs);
      const active = nowMs - episode.lastMs <= detector.quietMs(episode);
      const closedAt = active ? null : (investigation.closedAt ?? new Date(nowMs));
      const write = writeOf(episode, assessment.severity, { ...assessment, headline: story.headline, tags: story.tags });
      // The wall clock, not the run's time: the row was created (by the database's clock) after the run began.
      const completedAt = new Date();
      const severityRaise = await this.investigations.complete(
        customerId,
        investigation.id,
        write,
        // A confirmed (UNAUTHORIZED) investigation keeps the step its answer added (docs/triage.md).
        (answer) => raiseFor(assessment.severity, answer),
        analysis,
        closedAt,
        completedAt,
      );
      return {
        ...investigation,
        ...write,
        severity: write.severity + severityRaise,
        severityRaise,
        evidence: write.evidence as PrismaTypes.JsonValue,
        analysis: analysis as unknown as PrismaTypes.JsonValue,
        status: 'completed',
        closedAt,
        completedAt,
      };
    } catch (error) {
      this.logger.error('detection.analysis_failed', { customerId, investigationId: investigation.id, detector: detector.kind, error });
      const completedAt = new Date();
      await this.investigations.fail(customerId, investigation.id, completedAt);
      return { ...investigation, status: 'failed', disposition: null, confidence: null, completedAt };
    }
  }

  private async recordFailure(customerId: string, runId: string, trigger: string, error: unknown): Promise<void> {
    await this.events
      .record({
        customerId,
        topic: 'detections',
        kind: 'detection_run_failed',
        subject: runId,
        data: { trigger, error: String((error as Error)?.message ?? error).slice(0, 500) },
      })
      .catch((failure) => this.logger.warn('detection.events_failed', { customerId, runId, error: failure }));
  }

  /** Events (docs/events.md): the run, and each investigation it opened, updated or closed. */
  private async record(customerId: string, runId: string, trigger: string, window: TimeWindow, outcome: TenantOutcome): Promise<void> {
    const summary = (c: InvestigationChange) => ({
      detector: c.detector,
      source: c.source,
      destination: c.destination,
      disposition: c.disposition,
      confidence: c.confidence,
      severity: c.severity,
      headline: c.headline,
      node_ids: c.node_ids,
    });
    try {
      await this.events.record({
        customerId,
        topic: 'detections',
        kind: 'detection_run_completed',
        subject: runId,
        data: {
          trigger,
          window: { start: iso(window.fromMs), end: iso(window.toMs) },
          opened: outcome.opened.length,
          updated: outcome.updated.length,
          closed: outcome.closed.length,
          failed: outcome.failed.length,
          suppressed: outcome.suppressed,
        },
      });
      for (const c of [...outcome.opened, ...outcome.failed])
        await this.events.record({ customerId, topic: 'investigations', kind: 'investigation_opened', subject: c.id, data: summary(c) });
      for (const c of outcome.updated)
        await this.events.record({ customerId, topic: 'investigations', kind: 'investigation_updated', subject: c.id, data: summary(c) });
      for (const c of outcome.closed)
        await this.events.record({ customerId, topic: 'investigations', kind: 'investigation_closed', subject: c.id, data: summary(c) });
    } catch (error) {
      this.logger.warn('detection.events_failed', { customerId, runId, error });
    }
  }
}

/** The list fields and evidence an episode writes. Disposition and confidence only once analysed. */
function writeOf(
  e: Episode,
  severity: number,
  analysed: { disposition: InvestigationWrite['disposition']; confidence: number; headline: string; tags: string[] } | null,
): InvestigationWrite {
  return {
    detector: e.detector,
    subject: subjectOf(e),
    source: e.source,
    destination: e.destination,
    severity,
    disposition: analysed?.disposition ?? null,
    confidence: analysed?.confidence ?? null,
    headline: analysed?.headline ?? null,
    tags: analysed?.tags ?? [e.detector],
    relatedAlertsCount: e.alerts,
    nodeIds: e.nodeIds,
    evidence: e,
    firstActivityAt: new Date(e.firstMs),
    lastActivityAt: new Date(e.lastMs),
  };
}

/**
 * A later sighting of an episode. Windows overlap, so counts cannot be added: the sighting that
 * covers the longer stretch wins; a shorter one (a sliding window that no longer sees the start)
 * only extends the end and appends its newer activity.
 */
export function mergeEpisodes(stored: Episode, seen: Episode): Episode {
  const firstMs = Math.min(stored.firstMs, seen.firstMs);
  const lastMs = Math.max(stored.lastMs, seen.lastMs);
  if (seen.lastMs - seen.firstMs >= stored.lastMs - stored.firstMs) return { ...seen, firstMs, lastMs };
  return { ...stored, lastMs, activity: [...stored.activity, ...seen.activity.filter((a) => a.atMs > stored.lastMs)] };
}

/** Deep equality of JSON values, whatever the key order (jsonb does not keep it). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([x], [y]) => x.localeCompare(y))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function changeView(i: Investigation): InvestigationChange {
  return {
    id: i.id,
    customer_id: i.customerId,
    detector: i.detector,
    source: i.source,
    destination: i.destination,
    status: i.status,
    disposition: i.disposition,
    confidence: i.confidence,
    severity: i.severity,
    headline: i.headline,
    first_activity_at: i.firstActivityAt.toISOString(),
    last_activity_at: i.lastActivityAt.toISOString(),
    active: i.closedAt === null,
    node_ids: i.nodeIds,
  };
}
