import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { type FlowEngine, FlowQueryAbortedError } from '../../flowstore/index.js';
import { createLogger } from '../../infra/logger.js';
import { insertFlows } from '../detection/detection.fixtures.js';
import { SearchService } from '../search/search.service.js';
import { seedInvestigation } from './investigations.fixtures.js';
import { TRAFFIC_LINK_SEARCHES_PER_REQUEST } from './investigations.service.js';

const PATH = '/rest/investigations/1.0';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const ids = (body: { investigations: { id: string }[] }) => body.investigations.map((i) => i.id);
/** The `triage` object of an investigation nobody has triaged yet. */
const UNTRIAGED = {
  status: 'NEW',
  resolution: null,
  resolved_at: null,
  answer: null,
  note: null,
  answered_by: null,
  answered_at: null,
  assignee_id: null,
  severity_raise: 0,
};

/** wire.md 16: lists and these fields may be absent but never null, anywhere in an investigation. */
function assertWireShape(inv: any): void {
  const str = (v: unknown) => expect(typeof v).toBe('string');
  const strOrNull = (v: unknown) => expect(v === null || typeof v === 'string').toBe(true);
  const list = (v: unknown) => expect(Array.isArray(v)).toBe(true);
  str(inv.id);
  expect(['completed', 'failed']).toContain(inv.status);
  expect(inv.created_at).toMatch(ISO);
  expect(inv.trigger).toBeTypeOf('object');
  expect(inv.trigger.signal).toBeTypeOf('object');
  for (const k of ['volume_bytes', 'anomaly_score', 'surprise', 'mismatch']) expect(k in inv.trigger.signal).toBe(true);
  expect(inv.decision_support).toBeTypeOf('object');
  list(inv.decision_support.open_questions);
  list(inv.decision_support.recommended_actions);
  expect(inv.decision_support.open_questions[0]).toMatchObject({ question: 'Was this activity authorized?', priority: 'highest' });
  for (const a of inv.decision_support.recommended_actions) (str(a.timeframe), str(a.action));
  expect(inv.meta).toMatchObject({ ai_generated: false });
  list(inv.key_findings);
  if (inv.status === 'failed') return;
  for (const k of ['disposition', 'headline', 'rationale']) str(inv.verdict[k]);
  expect(inv.verdict.confidence).toBeTypeOf('number');
  str(inv.at_a_glance.known);
  str(inv.at_a_glance.therefore);
  expect(inv.key_findings.length).toBeGreaterThan(0);
  const walk = (events: any[]) => {
    for (const e of events) {
      expect(e.at).toMatch(ISO);
      str(e.label);
      list(e.children);
      walk(e.children);
    }
  };
  for (const f of inv.key_findings) {
    for (const k of ['headline', 'observation', 'significance']) str(f[k]);
    list(f.rules_out);
    list(f.confirms);
    if (f.timeline !== null) walk(f.timeline);
    for (const link of f.traffic_links ?? []) {
      str(link.label);
      expect(link.query).toMatchObject({
        query: expect.any(String),
        start: { absolute: { date: expect.stringMatching(ISO) } },
        end: { absolute: { date: expect.stringMatching(ISO) } },
      });
    }
  }
  const p = inv.provenance;
  expect(p.available).toBe(true);
  expect(p.completeness).toBeTypeOf('number');
  str(p.host_value.role);
  expect(['low', 'moderate', 'high']).toContain(p.host_value.value);
  expect(p.legs.map((l: any) => l.stage).slice(0, 2)).toEqual(['access', 'execution']);
  for (const leg of p.legs) {
    for (const k of ['stage', 'title', 'headline', 'confidence']) str(leg[k]);
    strOrNull(leg.gap_reason);
    list(leg.actors);
    list(leg.pivot_keys);
    for (const a of leg.actors) (str(a.kind), str(a.label));
    for (const a of leg.attack) {
      str(a.tactic);
      str(a.technique);
      expect(a.technique_id).toMatch(/^T\d{4}(\.\d{3})?$/);
    }
  }
  expect(p.legs.flatMap((l: any) => l.attack).length).toBeGreaterThan(0);
}

describe('investigations REST paths', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;
  const seeded: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
    const p = t.app.db.prisma;
    const day = (n: number) => new Date(Date.UTC(2026, 3, n, 12));
    seeded.mspExfil = await seedInvestigation(p, tree.msp.id, { detector: 'exfil', severity: 95, confidence: 0.96, createdAt: day(1) });
    seeded.mspScan = await seedInvestigation(p, tree.msp.id, { detector: 'scan', severity: 40, confidence: 0.6, disposition: 'escalate', createdAt: day(5) });
    seeded.childBeacon = await seedInvestigation(p, tree.childA.id, { detector: 'beacon', severity: 80, confidence: 0.9, createdAt: day(3) });
    seeded.childBenign = await seedInvestigation(p, tree.childA.id, {
      detector: 'beacon',
      severity: 10,
      confidence: 0.55,
      disposition: 'benign',
      createdAt: day(4),
    });
    seeded.childRunning = await seedInvestigation(p, tree.childA.id, { detector: 'dns-tunnel', status: 'running', severity: 5, createdAt: day(6) });
    seeded.childFailed = await seedInvestigation(p, tree.childA.id, { detector: 'bruteforce', status: 'failed', severity: 0, createdAt: day(2) });
    seeded.sibling = await seedInvestigation(p, tree.childB.id, {
      detector: 'exfil',
      severity: 20,
      confidence: 0.7,
      disposition: 'escalate',
      createdAt: new Date(Date.UTC(2026, 3, 2, 13)),
    });
    seeded.otherTree = await seedInvestigation(p, other.msp.id, { detector: 'scan', createdAt: day(2) });
  });
  afterAll(() => t.stop());

  describe('authentication and scope', () => {
    it.each([PATH, `${PATH}/inv_x`])('GET %s needs a token', async (path) => {
      const res = await call(t.url, 'GET', path);
      expect(res.status).toBe(401);
    });

    it.each([PATH, `${PATH}/inv_x`])('GET %s needs the search_api scope', async (path) => {
      const caller = await seedCaller(t.app, tree.msp.id, [Scopes.nodeApi]);
      const res = await call(t.url, 'GET', path, { token: caller.token });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'authorization_error', code: 'authorization_error', message: expect.any(String) });
    });
  });

  describe('list', () => {
    it('answers the page envelope, most severe first, running ones without a verdict', async () => {
      const res = await call(t.url, 'GET', `${PATH}?limit=50&offset=0`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 7, limit: 50, offset: 0 });
      expect(ids(res.body)).toEqual([
        seeded.mspExfil,
        seeded.childBeacon,
        seeded.mspScan,
        seeded.sibling,
        seeded.childBenign,
        seeded.childRunning,
        seeded.childFailed,
      ]);
      const running = res.body.investigations.find((i: any) => i.id === seeded.childRunning);
      expect(running).toMatchObject({
        status: 'running',
        disposition: null,
        confidence: null,
        related_alerts_count: expect.any(Number),
        tags: expect.any(Array),
      });
      for (const item of res.body.investigations) {
        expect(item).toMatchObject({ id: expect.any(String), status: expect.any(String), related_alerts_count: expect.any(Number), tags: expect.any(Array) });
        expect(item.detected_at).toMatch(ISO);
        expect(item.created_at).toMatch(ISO);
        expect(typeof item.source).toBe('string');
        expect(typeof item.destination).toBe('string');
        // wire.md 8.1's fields plus severity, and triage added beside them.
        expect(Object.keys(item).sort()).toEqual(
          [
            'id',
            'status',
            'disposition',
            'confidence',
            'headline',
            'source',
            'destination',
            'detected_at',
            'created_at',
            'completed_at',
            'related_alerts_count',
            'tags',
            'severity',
            'triage',
          ].sort(),
        );
        expect(item.triage).toEqual(UNTRIAGED);
      }
    });

    it('sorts by creation with sort=recent', async () => {
      const res = await call(t.url, 'GET', `${PATH}?sort=recent`, { token: tree.mspCaller.token });
      expect(ids(res.body)).toEqual([
        seeded.childRunning,
        seeded.mspScan,
        seeded.childBenign,
        seeded.childBeacon,
        seeded.sibling,
        seeded.childFailed,
        seeded.mspExfil,
      ]);
    });

    it("sees only the caller's tree: a child its own, a parent its children too", async () => {
      const child = await call(t.url, 'GET', PATH, { token: tree.childACaller.token });
      expect(ids(child.body).sort()).toEqual([seeded.childBeacon, seeded.childBenign, seeded.childRunning, seeded.childFailed].sort());
      const sibling = await call(t.url, 'GET', PATH, { token: tree.childBCaller.token });
      expect(ids(sibling.body)).toEqual([seeded.sibling]);
      const outsider = await call(t.url, 'GET', PATH, { token: other.mspCaller.token });
      expect(ids(outsider.body)).toEqual([seeded.otherTree]);
      const empty = await seedCaller(t.app, (await seedTenant(t.app)).id);
      expect((await call(t.url, 'GET', PATH, { token: empty.token })).body).toEqual({ investigations: [], total: 0, limit: 50, offset: 0 });
    });

    it('pages with limit and offset, clamping limit to 1..200', async () => {
      const first = await call(t.url, 'GET', `${PATH}?limit=2&offset=0`, { token: tree.mspCaller.token });
      const second = await call(t.url, 'GET', `${PATH}?limit=2&offset=2`, { token: tree.mspCaller.token });
      expect(first.body).toMatchObject({ total: 7, limit: 2, offset: 0 });
      expect([...ids(first.body), ...ids(second.body)]).toEqual([seeded.mspExfil, seeded.childBeacon, seeded.mspScan, seeded.sibling]);
      expect((await call(t.url, 'GET', `${PATH}?limit=0`, { token: tree.mspCaller.token })).body).toMatchObject({
        limit: 1,
        investigations: [expect.anything()],
      });
      expect((await call(t.url, 'GET', `${PATH}?limit=-7`, { token: tree.mspCaller.token })).body.limit).toBe(1);
      expect((await call(t.url, 'GET', `${PATH}?limit=100000`, { token: tree.mspCaller.token })).body.limit).toBe(200);
      expect((await call(t.url, 'GET', `${PATH}?limit=99999999999`, { token: tree.mspCaller.token })).body.limit).toBe(200);
      const past = await call(t.url, 'GET', `${PATH}?offset=500`, { token: tree.mspCaller.token });
      expect(past.body).toEqual({ investigations: [], total: 7, limit: 50, offset: 500 });
    });

    it('filters by disposition, min_confidence, since and until', async () => {
      const get = async (q: string) => ids((await call(t.url, 'GET', `${PATH}?${q}`, { token: tree.mspCaller.token })).body).sort();
      expect(await get('disposition=malicious')).toEqual([seeded.mspExfil, seeded.childBeacon].sort());
      expect(await get('disposition=benign')).toEqual([seeded.childBenign]);
      expect(await get('disposition=escalate')).toEqual([seeded.mspScan, seeded.sibling].sort());
      expect(await get('min_confidence=0.9')).toEqual([seeded.mspExfil, seeded.childBeacon].sort());
      expect(await get('min_confidence=0.5&disposition=benign')).toEqual([seeded.childBenign]);
      // The SDK's Python ISO form, `+` percent-encoded, and the same with a bare `+` (read as a space).
      expect(await get('since=2026-04-04T12%3A00%3A00%2B00%3A00')).toEqual([seeded.childBenign, seeded.mspScan, seeded.childRunning].sort());
      expect(await get('since=2026-04-04T12:00:00+00:00&until=2026-04-05T12:00:00Z')).toEqual([seeded.childBenign, seeded.mspScan].sort());
      expect(await get('until=2026-04-02T14%3A00%3A00%2B02%3A00')).toEqual([seeded.mspExfil, seeded.childFailed].sort());
      expect(await get('since=2026-04-03')).toHaveLength(4);
    });

    it.each([
      ['limit=abc', 400],
      ['limit=1.5', 200],
      ['offset=-1', 400],
      ['offset=abc', 400],
      ['offset=1e400', 400],
      ['disposition=evil', 400],
      ['disposition=MALICIOUS', 400],
      ['min_confidence=1.5', 400],
      ['min_confidence=-0.1', 400],
      ['min_confidence=abc', 400],
      ['min_confidence=NaN', 400],
      ['min_confidence=Infinity', 400],
      ['since=yesterday', 400],
      ['since=2026-13-01T00:00:00Z', 400],
      ['since=0000-01-01T00:00:00Z', 400], // no year 0000 in PostgreSQL
      ['since=0001-01-01T00:00:00Z', 200],
      ['until=2026-04-01T25:00:00Z', 400],
      ['until=%00', 400],
      ['since=2026-04-05T00:00:00Z&until=2026-04-01T00:00:00Z', 400],
      ['sort=worst', 400],
      ['sort=', 200],
      ['limit=', 200],
    ])('answers %s with %s, never a 500', async (q, status) => {
      const res = await call(t.url, 'GET', `${PATH}?${q}`, { token: tree.mspCaller.token });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      if (status === 400) expect(res.body).toMatchObject({ error: expect.any(String), code: res.body.error, message: expect.any(String) });
    });
  });

  describe('get one', () => {
    it('answers a finished investigation in the full wire shape', async () => {
      const res = await call(t.url, 'GET', `${PATH}/${seeded.mspExfil}`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      assertWireShape(res.body);
      expect(res.body.verdict).toMatchObject({ disposition: 'malicious', confidence: 0.96 });
      // The wire.md 8.3 fields, and triage added beside them (docs/triage.md).
      expect(Object.keys(res.body).sort()).toEqual(
        [
          'at_a_glance',
          'completed_at',
          'created_at',
          'decision_support',
          'id',
          'key_findings',
          'meta',
          'provenance',
          'status',
          'trigger',
          'verdict',
          'triage',
        ].sort(),
      );
      expect(res.body.triage).toEqual(UNTRIAGED);
    });

    it('answers a failed investigation without a verdict but with every required field', async () => {
      const res = await call(t.url, 'GET', `${PATH}/${seeded.childFailed}`, { token: tree.childACaller.token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'failed', verdict: null, at_a_glance: null, provenance: null, key_findings: [] });
      assertWireShape(res.body);
    });

    it.each([
      ['own', () => tree.childACaller.token, () => seeded.childBeacon, 200],
      ["a child's, asked by the parent", () => tree.mspCaller.token, () => seeded.childBeacon, 200],
      ["the parent's, asked by a child", () => tree.childACaller.token, () => seeded.mspExfil, 404],
      ["a sibling's", () => tree.childACaller.token, () => seeded.sibling, 404],
      ["another tree's", () => tree.mspCaller.token, () => seeded.otherTree, 404],
      ['a running one', () => tree.childACaller.token, () => seeded.childRunning, 404],
      ['a missing one', () => tree.mspCaller.token, () => 'inv_doesnotexist', 404],
      ['a long id', () => tree.mspCaller.token, () => 'x'.repeat(5000), 404],
      ['an odd id', () => tree.mspCaller.token, () => encodeURIComponent("'; DROP TABLE investigations;--"), 404],
      ['a NUL id', () => tree.mspCaller.token, () => '%00', 404],
    ])('%s → %s', async (_name, token, id, status) => {
      const res = await call(t.url, 'GET', `${PATH}/${id()}`, { token: token() });
      expect(res.status).toBe(status);
      if (status === 404) expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found', message: expect.any(String) });
    });
  });

  describe('GraphQL', () => {
    it('links an investigation to its nodes and replays its traffic links as flow searches', async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      const node = await t.app.db.prisma.node.create({
        data: { id: `node_${tenant.id}`, customerId: tenant.id, status: 'active', hostname: 'ws-0014', os: 'windows', localIp: '10.20.1.99' },
      });
      const now = Date.now();
      const id = await seedInvestigation(t.app.db.prisma, tenant.id, {
        detector: 'beacon',
        source: '10.20.1.99',
        createdAt: new Date(now),
        nodeIds: [node.id],
      });
      await insertFlows(
        t.app.flows,
        tenant.id,
        [0, 1, 2].map((i) => ({
          at: now - 30 * 60_000 + i * 36_000,
          src: '10.20.1.99',
          dst: '45.148.10.83',
          port: 443,
          org: 'Stark Industries Solutions Ltd',
        })),
      );
      const res = await graphql(
        t.url,
        `
          query ($id: String!) {
            investigation(id: $id) {
              id
              detector
              status
              severity
              active
              customerId
              sourceNode {
                nodeId
                hostname
                os
              }
              observedBy {
                nodeId
              }
              verdict {
                disposition
              }
              keyFindings {
                headline
                trafficLinks {
                  label
                  query
                  flows(size: 10)
                }
                timeline {
                  label
                  children {
                    label
                  }
                }
              }
              provenance {
                legs {
                  stage
                  attack {
                    techniqueId
                  }
                }
              }
            }
          }
        `,
        { id },
        caller.token,
      );
      expect(res.errors).toBeUndefined();
      const inv = res.data.investigation;
      expect(inv).toMatchObject({
        id,
        detector: 'beacon',
        status: 'completed',
        customerId: tenant.id,
        sourceNode: { nodeId: node.id, hostname: 'ws-0014', os: 'windows' },
        observedBy: [{ nodeId: node.id }],
      });
      const checkIns = inv.keyFindings[0].trafficLinks[0];
      expect(checkIns.query.query).toBe('src.ip eq 10.20.1.99 and dst.ip eq 45.148.10.83');
      expect(checkIns.flows).toHaveLength(3);
      expect(checkIns.flows[0]).toMatchObject({ src: { ip: '10.20.1.99' }, dst: { ip: '45.148.10.83', port: 443 } });

      // The same links are empty for anyone outside the tree (they cannot see the investigation at all).
      const outsider = await graphql(t.url, 'query ($id: String!) { investigation(id: $id) { id } }', { id }, tree.mspCaller.token);
      expect(outsider.data).toEqual({ investigation: null });

      // Node details need node_api, as everywhere else: a search-only token reads the investigation, not its nodes.
      const searchOnly = await seedCaller(t.app, tenant.id, [Scopes.searchApi]);
      expect((await graphql(t.url, 'query ($id: String!) { investigation(id: $id) { id } }', { id }, searchOnly.token)).data).toEqual({
        investigation: { id },
      });
      for (const field of ['sourceNode { hostname }', 'observedBy { hostname }']) {
        const denied = await graphql(t.url, `query ($id: String!) { investigation(id: $id) { id ${field} } }`, { id }, searchOnly.token);
        expect(denied.errors?.[0]?.extensions, field).toMatchObject({
          code: 'authorization_error',
          details: { reason: 'insufficient_scope', required_scope: Scopes.nodeApi },
        });
        expect(JSON.stringify(denied.data), field).not.toContain('ws-0014');
      }
    });

    it('answers a token without node_api its investigations, with only observedBy refused', async () => {
      const tenant = await seedTenant(t.app);
      const node = await t.app.db.prisma.node.create({ data: { id: `node_${tenant.id}`, customerId: tenant.id, status: 'active', localIp: '10.20.3.1' } });
      const id = await seedInvestigation(t.app.db.prisma, tenant.id, { source: '10.20.3.1', nodeIds: [node.id] });
      const searchOnly = await seedCaller(t.app, tenant.id, [Scopes.searchApi]);
      const res: any = await graphql(
        t.url,
        '{ viewer { customerId } investigations { total investigations { id observedBy { nodeId } } } }',
        {},
        searchOnly.token,
      );
      expect(res.data).toEqual({ viewer: { customerId: tenant.id }, investigations: { total: 1, investigations: [{ id, observedBy: null }] } });
      expect(res.errors).toHaveLength(1);
      expect(res.errors[0]).toMatchObject({
        path: ['investigations', 'investigations', 0, 'observedBy'],
        extensions: { code: 'authorization_error', details: { reason: 'insufficient_scope', required_scope: Scopes.nodeApi } },
      });
    });

    it(`starts at most ${TRAFFIC_LINK_SEARCHES_PER_REQUEST} traffic-link searches per request; the fields past that answer too_many_searches`, async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      // A brute-force analysis has three traffic links: enough investigations to pass the budget.
      for (let i = 0; i < Math.ceil(TRAFFIC_LINK_SEARCHES_PER_REQUEST / 3) + 1; i++) {
        await seedInvestigation(t.app.db.prisma, tenant.id, { detector: 'bruteforce', source: `10.20.4.${i}` });
      }
      const query = (limit: number) =>
        `{ investigations(limit: ${limit}) { total investigations { id keyFindings { trafficLinks { label query flows(size: 1) } } } } }`;
      const res: any = await graphql(t.url, query(200), {}, caller.token);
      const searched = res.data.investigations.investigations
        .flatMap((i: any) => i.keyFindings.flatMap((f: any) => f.trafficLinks ?? []))
        .filter((l: any) => l.query !== null);
      const over = searched.length - TRAFFIC_LINK_SEARCHES_PER_REQUEST;
      expect(over).toBeGreaterThan(0);
      // The first searches of the query resolve, the rest are null; every other field is there.
      expect(searched.slice(0, TRAFFIC_LINK_SEARCHES_PER_REQUEST).every((l: any) => Array.isArray(l.flows))).toBe(true);
      expect(searched.slice(TRAFFIC_LINK_SEARCHES_PER_REQUEST).map((l: any) => l.flows)).toEqual(Array(over).fill(null));
      expect(searched.every((l: any) => typeof l.label === 'string')).toBe(true);
      expect(res.errors).toHaveLength(over);
      for (const error of res.errors) {
        expect(error.path.at(-1)).toBe('flows');
        expect(error.extensions).toMatchObject({
          code: 'too_many_searches',
          details: { reason: 'too_many_searches', limit: TRAFFIC_LINK_SEARCHES_PER_REQUEST },
        });
        expect(error.message).toMatch(/fewer investigations or links/);
      }
      // The budget is the request's: the next request has all of it.
      const next: any = await graphql(t.url, query(1), {}, caller.token);
      expect(next.errors).toBeUndefined();
    });

    it('cancels a traffic-link search past the search deadline and answers 504 query_timeout on that field', async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      const id = await seedInvestigation(t.app.db.prisma, tenant.id, { detector: 'beacon' });
      // An engine whose searches never finish on their own: only the deadline ends them.
      const stalled = new Proxy(t.app.flows, {
        get: (engine, prop, receiver) =>
          prop === 'queryLines'
            ? (_sql: string, _params: unknown, opts?: { signal?: AbortSignal }) =>
                new Promise((_resolve, reject) => opts?.signal?.addEventListener('abort', () => reject(new FlowQueryAbortedError('stalled'))))
            : Reflect.get(engine, prop, receiver),
      }) as FlowEngine;
      // The app's one search service (investigations hold it too) searches that engine meanwhile.
      const stalledSearch = new SearchService(stalled, createLogger('silent'), { timeoutMs: 50 });
      const records = vi.spyOn(t.app.services.search, 'records').mockImplementation((session, request) => stalledSearch.records(session, request));
      try {
        const res: any = await graphql(
          t.url,
          'query ($id: String!) { investigation(id: $id) { id keyFindings { trafficLinks { label flows(size: 1) } } } }',
          { id },
          caller.token,
        );
        expect(res.data.investigation.id).toBe(id);
        expect(res.data.investigation.keyFindings[0].trafficLinks[0].flows).toBeNull();
        expect(res.errors.length).toBeGreaterThan(0);
        for (const error of res.errors) expect(error.extensions).toMatchObject({ code: 'query_timeout', details: { reason: 'query_timeout', timeout_ms: 50 } });
      } finally {
        records.mockRestore();
      }
    });

    it('pages with the same arguments as REST, and refuses bad ones with invalid_request', async () => {
      const res = await graphql(t.url, '{ investigations(limit: 1, sort: "recent") { total limit offset investigations { id } } }', {}, tree.mspCaller.token);
      expect(res.data.investigations).toEqual({ total: 7, limit: 1, offset: 0, investigations: [{ id: seeded.childRunning }] });
      const bad = await graphql(t.url, '{ investigations(disposition: "evil") { total } }', {}, tree.mspCaller.token);
      expect(bad.errors?.[0].extensions).toMatchObject({ code: 'invalid_request', details: { field: 'disposition' } });
    });

    it('loads the nodes of a listed page in one statement per kind, not per investigation', async () => {
      const tenant = await seedTenant(t.app);
      const caller = await seedCaller(t.app, tenant.id);
      for (let i = 0; i < 6; i++) {
        const node = await t.app.db.prisma.node.create({
          data: { id: `node_${tenant.id}_${i}`, customerId: tenant.id, status: 'active', localIp: `10.20.2.${i}` },
        });
        await seedInvestigation(t.app.db.prisma, tenant.id, { source: `10.20.2.${i}`, nodeIds: [node.id] });
      }
      const statements: string[] = [];
      t.app.db.prisma.$on('query', (e) => statements.push(e.query));
      const res = await graphql(t.url, '{ investigations { investigations { source sourceNode { nodeId } observedBy { nodeId } } } }', {}, caller.token);
      expect(res.errors).toBeUndefined();
      expect(res.data.investigations.investigations).toHaveLength(6);
      for (const inv of res.data.investigations.investigations) expect(inv.sourceNode.nodeId).toBe(inv.observedBy[0].nodeId);
      expect(statements.filter((q) => q.includes('"nodes"'))).toHaveLength(2);
    });

    it('reads a list in a fixed number of statements, without loading any analysis document', async () => {
      const statements: string[] = [];
      t.app.db.prisma.$on('query', (e) => statements.push(e.query));
      const res = await call(t.url, 'GET', `${PATH}?limit=200`, { token: tree.mspCaller.token });
      expect(res.status).toBe(200);
      const mine = statements.filter((q) => q.includes('investigations'));
      // The page's ids, their rows, the total.
      expect(mine).toHaveLength(3);
      expect(mine.some((q) => /analysis|evidence/.test(q))).toBe(false);
    });
  });
});
