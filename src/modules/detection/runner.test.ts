import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { openDatabase } from '../../infra/database.js';
import { LockSpace, PeriodicJob, withAdvisoryLock } from '../../infra/jobs.js';
import { createLogger } from '../../infra/logger.js';
import { type FlowSpec, cadence, insertFlows } from './detection.fixtures.js';
import { beaconDetector } from './detectors/beacon.js';
import { createDetectionService } from '../../services.js';
import { raiseFor } from '../investigations/triage.model.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOW = Math.floor(Date.now() / MINUTE) * MINUTE;
const silent = createLogger('silent');

/** Check-ins every minute from `fromMs` to `toMs`. */
const beacon = (fromMs: number, toMs: number, src = '10.20.1.50'): FlowSpec[] =>
  cadence(fromMs, Math.floor((toMs - fromMs) / MINUTE), MINUTE, 0.02).map((at) => ({
    at,
    src,
    dst: '45.148.10.83',
    port: 443,
    org: 'Stark Industries Solutions Ltd',
    process: 'rundll32.exe',
  }));

describe('detection runs', () => {
  let t: TestApp;
  const window = (nowMs: number) => ({ fromMs: nowMs - 3 * HOUR, toMs: nowMs });

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
  });
  afterAll(() => t.stop());

  it('opens, updates and closes an investigation as the activity goes on and stops', async () => {
    const { id: customerId } = await seedTenant(t.app);
    const detection = t.app.services.detection;
    await insertFlows(t.app.flows, customerId, beacon(NOW - 3 * HOUR, NOW - 2 * HOUR));

    let now = NOW - 2 * HOUR + MINUTE;
    const first = await detection.detectTenant(customerId, window(now), now);
    expect(first.opened).toHaveLength(1);
    expect(first.opened[0]).toMatchObject({ detector: 'beacon', source: '10.20.1.50', active: true, status: 'completed' });
    const id = first.opened[0].id;
    // Completed after it was created, whatever time the run reads the data at.
    const row = await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } });
    expect(row.completedAt!.getTime()).toBeGreaterThanOrEqual(row.createdAt.getTime());

    // The same data again: nothing to do.
    expect(await detection.detectTenant(customerId, window(now), now)).toEqual({ opened: [], updated: [], closed: [], failed: [], suppressed: 0 });

    // More check-ins: the same investigation, extended.
    await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - 90 * MINUTE));
    now = NOW - 90 * MINUTE + MINUTE;
    const second = await detection.detectTenant(customerId, window(now), now);
    expect(second.opened).toEqual([]);
    expect(second.updated).toEqual([expect.objectContaining({ id, active: true })]);
    expect(Date.parse(second.updated[0].last_activity_at)).toBeGreaterThan(Date.parse(first.opened[0].last_activity_at));

    // Quiet for longer than the quiet period: closed, and it stays closed.
    now = NOW - 30 * MINUTE;
    const third = await detection.detectTenant(customerId, window(now), now);
    expect(third).toMatchObject({ opened: [], updated: [], closed: [expect.objectContaining({ id, active: false })] });
    expect(await detection.detectTenant(customerId, window(now + MINUTE), now + MINUTE)).toEqual({
      opened: [],
      updated: [],
      closed: [],
      failed: [],
      suppressed: 0,
    });
    // Long after, with the activity out of every window, still one investigation.
    expect(await detection.detectTenant(customerId, window(NOW + 5 * HOUR), NOW + 5 * HOUR)).toEqual({
      opened: [],
      updated: [],
      closed: [],
      failed: [],
      suppressed: 0,
    });
    expect(await t.app.db.prisma.investigation.count({ where: { customerId } })).toBe(1);
  });

  it('leaves a subject answered AUTHORIZED alone: re-runs open, update and reopen nothing, and count it', async () => {
    const { id: customerId } = await seedTenant(t.app);
    const caller = await seedCaller(t.app, customerId);
    const detection = t.app.services.detection;
    await insertFlows(t.app.flows, customerId, beacon(NOW - 3 * HOUR, NOW - 2 * HOUR, '10.20.1.60'));
    const first = await detection.detectTenant(customerId, window(NOW - 2 * HOUR + MINUTE), NOW - 2 * HOUR + MINUTE);
    expect(first.opened).toHaveLength(1);
    const id = first.opened[0].id;
    const answered = await graphql(
      t.url,
      'mutation ($id: String!) { answerInvestigation(id: $id, answer: AUTHORIZED, note: "our monitoring agent") { triage { status } } }',
      { id },
      caller.token,
    );
    expect(answered.data.answerInvestigation.triage.status).toBe('RESOLVED');
    const before = await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } });

    // The check-ins go on: the first test's run updates (and keeps open) its investigation with these.
    await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - 90 * MINUTE, '10.20.1.60'));
    const later = NOW - 90 * MINUTE + MINUTE;
    const rerun = await detection.runNow(customerId, { window: window(later), nowMs: later });
    expect(rerun).toMatchObject({ opened: [], updated: [], failed: [] });
    expect(rerun.suppressed).toBeGreaterThanOrEqual(1);
    const after = await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } });
    expect(after).toMatchObject({ lastActivityAt: before.lastActivityAt, evidence: before.evidence, triageStatus: 'resolved', resolution: 'authorized' });
    expect(await t.app.db.prisma.investigation.count({ where: { customerId } })).toBe(1);
    const runEvent = await t.app.db.prisma.event.findFirstOrThrow({ where: { customerId, kind: 'detection_run_completed', subject: rerun.run_id } });
    expect(runEvent.data).toMatchObject({ opened: 0, updated: 0, suppressed: rerun.suppressed });

    // Revoked, the subject is detected again.
    const [suppression] = await t.app.db.prisma.suppression.findMany({ where: { customerId } });
    await graphql(t.url, 'mutation ($id: String!) { revokeSuppression(id: $id) { id } }', { id: suppression!.id }, caller.token);
    const revoked = await detection.runNow(customerId, { window: window(later), nowMs: later });
    expect(revoked).toMatchObject({ opened: [], updated: [expect.objectContaining({ id, active: true })], suppressed: 0 });
  });

  it('keeps the severity step of an UNAUTHORIZED answer when it re-analyses the investigation', async () => {
    const { id: customerId } = await seedTenant(t.app);
    const caller = await seedCaller(t.app, customerId);
    const detection = t.app.services.detection;
    await insertFlows(t.app.flows, customerId, beacon(NOW - 3 * HOUR, NOW - 2 * HOUR, '10.20.1.61'));
    const first = await detection.detectTenant(customerId, window(NOW - 2 * HOUR + MINUTE), NOW - 2 * HOUR + MINUTE);
    const { id, severity } = first.opened[0];
    const answered = await graphql(
      t.url,
      'mutation ($id: String!) { answerInvestigation(id: $id, answer: UNAUTHORIZED) { severity triage { severityRaise } } }',
      { id },
      caller.token,
    );
    const step = answered.data.answerInvestigation.triage.severityRaise;
    expect(step).toBeGreaterThan(0);
    expect(answered.data.answerInvestigation.severity).toBe(severity + step);

    await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - 90 * MINUTE, '10.20.1.61'));
    const later = NOW - 90 * MINUTE + MINUTE;
    const second = await detection.detectTenant(customerId, window(later), later);
    expect(second.updated).toEqual([expect.objectContaining({ id })]);
    const row = await t.app.db.prisma.investigation.findUniqueOrThrow({ where: { id } });
    expect(row.severityRaise).toBeGreaterThan(0);
    expect(row.severity).toBe(second.updated[0].severity);
    expect(row).toMatchObject({ answer: 'unauthorized', triageStatus: 'in_progress' });
    // The detector's own severity for the longer episode, plus the step.
    expect(row.severityRaise).toBe(raiseFor(row.severity - row.severityRaise, 'unauthorized'));
  });

  it('runs a tenant and its children on demand, and never twice at once', async () => {
    const parent = await seedTenant(t.app, { msp: true });
    const child = await seedTenant(t.app, { parentId: parent.id });
    await insertFlows(t.app.flows, parent.id, beacon(NOW - 2 * HOUR, NOW - HOUR, '10.20.1.51'));
    await insertFlows(t.app.flows, child.id, beacon(NOW - 2 * HOUR, NOW - HOUR, '10.20.1.52'));

    // A second process on the same database and ClickHouse.
    const db2 = await openDatabase({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir, logger: silent, role: 'server' });
    const other = createDetectionService(db2, t.app.flows, silent, { intervalMs: 0, windowMs: HOUR });
    try {
      const runs = await Promise.all([
        t.app.services.detection.runNow(parent.id, { window: window(NOW), nowMs: NOW }),
        other.runNow(parent.id, { window: window(NOW), nowMs: NOW }),
        t.app.services.detection.runNow(parent.id, { window: window(NOW), nowMs: NOW }),
      ]);
      for (const run of runs) expect(run.tenants).toEqual([parent.id, child.id]);
      const opened = runs.flatMap((r) => r.opened);
      expect(opened.map((o) => o.source).sort()).toEqual(['10.20.1.51', '10.20.1.52']);
      expect(opened.map((o) => o.customer_id).sort()).toEqual([parent.id, child.id].sort());
      expect(await t.app.db.prisma.investigation.count({ where: { customerId: { in: [parent.id, child.id] } } })).toBe(2);
    } finally {
      await db2.close();
    }
  });

  it('records a failed analysis as a `failed` investigation', async () => {
    const { id: customerId } = await seedTenant(t.app);
    await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - HOUR, '10.20.1.53'));
    const broken = {
      ...beaconDetector,
      story: () => {
        throw new Error('narrative exploded');
      },
    };
    const service = createDetectionService(t.app.db, t.app.flows, silent, { intervalMs: 0, windowMs: HOUR }, { detectors: [broken] });
    const outcome = await service.detectTenant(customerId, window(NOW), NOW);
    expect(outcome.failed).toEqual([expect.objectContaining({ status: 'failed', disposition: null })]);
    const caller = await seedCaller(t.app, customerId);
    const res = await call(t.url, 'GET', `/rest/investigations/1.0/${outcome.failed[0].id}`, { token: caller.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', verdict: null, key_findings: [], meta: { ai_generated: false } });
  });

  it('skips a scheduled tenant another process is running', async () => {
    const { id: customerId } = await seedTenant(t.app);
    await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - HOUR, '10.20.1.54'));
    const holder = new pg.Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [LockSpace.detection, customerId]);
      await t.app.services.detection.runSchedule(NOW);
      expect(await t.app.db.prisma.investigation.count({ where: { customerId } })).toBe(0);
      await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LockSpace.detection, customerId]);
      await t.app.services.detection.runSchedule(NOW);
      expect(await t.app.db.prisma.investigation.count({ where: { customerId } })).toBe(1);
      const runs = await t.app.db.prisma.detectionRun.findMany({ where: { customerId, trigger: 'schedule' } });
      expect(runs.map((r) => r.status)).toEqual(['completed']);
    } finally {
      await holder.end();
    }
  });

  describe('detect run (admin CLI)', () => {
    const env = () => ({ DATABASE_URL: t.config.databaseUrl!, DATA_DIR: t.config.dataDir, LOG_LEVEL: 'silent' });

    it('has the running server run it and prints what it opened', async () => {
      const { id: customerId } = await seedTenant(t.app);
      await insertFlows(t.app.flows, customerId, beacon(NOW - 2 * HOUR, NOW - HOUR, '10.20.1.55'));
      const { code, json, stderr } = await adminCli(['detect', 'run', '--customer', customerId], env());
      expect(code, stderr).toBe(0);
      expect(json).toMatchObject({ customer_id: customerId, trigger: 'manual', tenants: [customerId], updated: [], closed: [], failed: [] });
      expect(json.opened).toEqual([
        expect.objectContaining({ detector: 'beacon', source: '10.20.1.55', destination: 'Stark Industries Solutions Ltd', disposition: 'malicious' }),
      ]);
      const again = await adminCli(['detect', 'run', '--customer', customerId], env());
      expect(again.json).toMatchObject({ opened: [], updated: [] });
    }, 60_000);

    it('refuses an unknown customer and a missing one', async () => {
      const unknown = await adminCli(['detect', 'run', '--customer', 'cus_nope'], env());
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stderr.trim().split('\n').pop()!)).toMatchObject({ error: 'not_found' });
      const missing = await adminCli(['detect', 'run'], env());
      expect(missing.code).toBe(2);
    }, 60_000);
  });
});

describe('job runner and advisory locks', () => {
  it('never overlaps a job with itself', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const job = new PeriodicJob(
      'test',
      10,
      async () => {
        most = Math.max(most, ++running);
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 30));
        running--;
      },
      silent,
    );
    job.start(0);
    await Promise.all([job.trigger(), job.trigger(), job.trigger()]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await job.stop();
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(most).toBe(1);
    expect(runs).toBeGreaterThan(2);
    expect(runs).toBe(after);
  });

  it('lets one holder at a time run, across connections', async () => {
    const a = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2 });
    const b = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const first = withAdvisoryLock(a, LockSpace.detection, 'lock-test', () => held);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await withAdvisoryLock(b, LockSpace.detection, 'lock-test', async () => 'second')).toEqual({ acquired: false });
      const waiting = withAdvisoryLock(b, LockSpace.detection, 'lock-test', async () => 'after', { waitMs: 5000, retryMs: 20 });
      release();
      expect(await first).toEqual({ acquired: true, value: undefined });
      expect(await waiting).toEqual({ acquired: true, value: 'after' });
      await expect(
        withAdvisoryLock(a, LockSpace.detection, 'lock-test', async () => {
          throw new Error('inside');
        }),
      ).rejects.toThrow('inside');
      expect(await withAdvisoryLock(b, LockSpace.detection, 'lock-test', async () => 'free again')).toEqual({ acquired: true, value: 'free again' });
    } finally {
      await a.end();
      await b.end();
    }
  });
});
