import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFlowBatch } from '../../flowstore/index.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';
import { ACME, BASE, BEAT, WINDOW, instanceAFlows, otherAcmeFlows } from './explore.fixtures.js';

const LIST = '/rest/explore/1.0/egress/organizations';
const org = (name: string, view = '') => `${LIST}/${encodeURIComponent(name)}${view ? `/${view}` : ''}`;
const VIEWS = ['', 'temporal', 'cadence', 'transfer', 'reach', 'access'] as const;
const ALL_PATHS = [LIST, ...VIEWS.map((v) => org(ACME, v))];

describe('explore egress organizations', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;
  let a: string;
  let token: string;
  const get = (path: string, body: Record<string, unknown>, tok = token) => call(t.url, 'GET', path, { token: tok, body });

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
    a = tree.childA.id;
    token = tree.childACaller.token;
    const insert = (customerId: string, flows: Record<string, unknown>[]) =>
      insertFlowBatch(t.app.flows, { customerId, nodeId: 'n1', batchId: `explore-${customerId}`, flows });
    await insert(a, instanceAFlows());
    await insert(tree.childB.id, otherAcmeFlows('10.9.0.1'));
    await insert(other.childA.id, otherAcmeFlows('10.8.0.1'));
    await t.app.services.explore.dataset.ensure();
    expect(t.app.services.explore.dataset.status()).toMatchObject({ state: 'ready', dataset: '@ip-location-db/asn' });
  }, 300_000);
  afterAll(() => t.stop());

  it('ranks organizations by bytes, attributing collector-named flows first and the rest by the dataset', async () => {
    const res = await get(LIST, { instance_ids: [a], ...WINDOW, size: 25 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', results_for: [a], total_orgs: 6, coverage: { classified_in_page: 30, total_flows: 31 } });
    expect(res.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(res.body.organizations).toEqual([
      { name: ACME, bytes: 6600, upload: 600, download: 6000, flows: 3, sources: 2 },
      { name: BEAT, bytes: 4400, upload: 2200, download: 2200, flows: 22, sources: 1 },
      { name: 'Geo Only Inc', bytes: 100, upload: 50, download: 50, flows: 1, sources: 1 },
      { name: 'Google LLC', bytes: 60, upload: 20, download: 40, flows: 2, sources: 2 },
      { name: 'Quad9', bytes: 40, upload: 20, download: 20, flows: 1, sources: 1 },
      { name: 'My DNS', bytes: 10, upload: 5, download: 5, flows: 1, sources: 1 },
    ]);
    expect(res.body.readout).toBe(`6 organizations in 31 egress flows; top ${ACME} (59% of bytes in page); 97% of flows classified in page`);
    const top2 = await get(LIST, { instance_ids: [a], ...WINDOW, size: 2 });
    expect(top2.body.organizations.map((o: { name: string }) => o.name)).toEqual([ACME, BEAT]);
    expect(top2.body).toMatchObject({ total_orgs: 6, coverage: { classified_in_page: 25, total_flows: 31 } });
  });

  it('answers the header of one organization, {org} percent-decoded (%20, %2F)', async () => {
    const path = `${LIST}/Acme%20Cloud%2FEU`;
    const res = await get(path, { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      org: ACME,
      industry: 'Cloud',
      geo: 'United States',
      upload: 600,
      download: 6000,
      sources: 2,
      endpoints: 2,
      processes: ['chrome.exe', 'Slack'],
    });
    expect(res.body.readout).toBe(`${ACME}: 600 B up, 6 KB down, 2 sources, 2 endpoints, mostly chrome.exe`);
    const dataset = await get(org('Google LLC'), { instance_ids: [a], ...WINDOW });
    expect(dataset.body).toMatchObject({ org: 'Google LLC', upload: 20, download: 40, sources: 2, endpoints: 1, processes: [], industry: null, geo: null });
    const collectorWins = await get(org('Cloudflare, Inc.'), { instance_ids: [a], ...WINDOW });
    expect(collectorWins.body).toMatchObject({ upload: 0, download: 0, sources: 0, endpoints: 0, processes: [] });
  });

  it('draws the weekday × hour heatmap (UTC), every cell present', async () => {
    const res = await get(org(ACME, 'temporal'), { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']);
    expect(res.body.cols).toHaveLength(24);
    expect(res.body.cells).toHaveLength(168);
    expect(res.body.total).toBe(3);
    const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date(BASE).getUTCDay()];
    const hour = String(new Date(BASE).getUTCHours()).padStart(2, '0');
    expect(res.body.cells.filter((c: { value: number }) => c.value > 0)).toEqual([{ row: day, col: hour, value: 3 }]);
    expect(res.body.readout).toMatch(new RegExp(`^busiest ${day} ${hour}:00 UTC \\(3 of 3 flows\\)`));
  });

  it('finds the beat of a regular source, merging connections less than 1 s apart', async () => {
    const res = await get(org(BEAT, 'cadence'), { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'beacon',
      'cdf',
      'dominant_intervals',
      'median_gap_secs',
      'readout',
      'results_for',
      'stats',
      'status',
      'steppedness',
      'timestamp',
    ]);
    // 20 gaps of 30 s: p1/p99 need 100 gaps, the others are reported.
    expect(res.body.cdf).toEqual([0.05, 0.25, 0.5, 0.75, 0.9].map((fraction) => ({ gap_secs: 30, fraction })));
    expect(res.body.dominant_intervals).toEqual([{ gap_secs: 30, fraction: 1 }]);
    expect(res.body.steppedness).toBe(1);
    expect(res.body.median_gap_secs).toBe(30);
    expect(res.body.stats).toEqual({ 'stats.timing.inter_arrival_secs.regularity': 0.9 });
    expect(res.body.beacon).toEqual({ flows: 10, sources: 1, interval_ms: 30000 });
    expect(res.body.readout).toBe('machine-steady, sessions beat 100% at ~30s, 10 beacon-like flows from 1 source (~30000 ms interval)');
  });

  it('answers the sparse-data cadence form when there are fewer than 3 quantile points', async () => {
    // Acme: one gap (10.0.0.1 at 0 s and 60 s), 10.0.0.2 once.
    for (const body of [
      { instance_ids: [a], ...WINDOW },
      { instance_ids: [a], ...WINDOW, src_ip: '10.0.0.2' },
    ]) {
      const res = await get(org(ACME, 'cadence'), body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        results_for: [a],
        timestamp: expect.any(String),
        readout: 'no cadence data',
        cdf: [],
        dominant_intervals: [],
        steppedness: null,
        median_gap_secs: null,
        stats: {},
        beacon: { flows: 0, sources: 0, interval_ms: null },
      });
    }
  });

  it('describes what moves', async () => {
    const res = await get(org(ACME, 'transfer'), { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    // Bytes per flow 1100, 2200, 3300: mean 2200, σ 898.146; entropy 270/40; durations 2, 4, 6.
    expect(res.body.transfer).toEqual({ chunk_bytes_mean: 2200, chunk_cv: 0.408, entropy_mean: 6.75, duration_mean: 4, up: 600, down: 6000 });
    const none = await get(org('Nobody'), { instance_ids: [a], ...WINDOW });
    expect(none.body.readout).toBe('no egress flows to Nobody in the window');
    const empty = await get(org('Nobody', 'transfer'), { instance_ids: [a], ...WINDOW });
    expect(empty.body.transfer).toEqual({ chunk_bytes_mean: null, chunk_cv: null, entropy_mean: null, duration_mean: null, up: 0, down: 0 });
  });

  it('lists who reaches the organization, sources by bytes then flows, processes by flows', async () => {
    const res = await get(org(ACME, 'reach'), { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      source_count: 2,
      sources: [
        { ip: '10.0.0.1', upload: 300, download: 3000, flows: 2 },
        { ip: '10.0.0.2', upload: 300, download: 3000, flows: 1 },
      ],
      processes: [
        { name: 'chrome.exe', flows: 2, sources: 1 },
        { name: 'Slack', flows: 1, sources: 1 },
      ],
    });
    const one = await get(org(ACME, 'reach'), { instance_ids: [a], ...WINDOW, size: 1, src_ip: '10.0.0.2' });
    expect(one.body).toMatchObject({ source_count: 1, sources: [{ ip: '10.0.0.2', flows: 1 }], processes: [{ name: 'Slack', flows: 1, sources: 1 }] });
  });

  it('lists how the organization is reached', async () => {
    const res = await get(org(ACME, 'access'), { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tls_versions: [{ name: 'TLS 1.3', flows: 2, bytes: 3300 }],
      ports: [
        { name: 443, flows: 2, bytes: 3300 },
        { name: 8443, flows: 1, bytes: 3300 },
      ],
      protocols: [
        { name: 'TCP', flows: 2, bytes: 3300 },
        { name: 'UDP', flows: 1, bytes: 3300 },
      ],
      apps: [
        { name: 'HTTPS', flows: 2, bytes: 3300 },
        { name: 'QUIC', flows: 1, bytes: 3300 },
      ],
    });
    expect(res.body.readout).toBe('mostly TLS 1.3, port 443/TCP, HTTPS (67% of flows on the top port)');
  });

  it('serves every view through GraphQL as well', async () => {
    const request = { instanceIds: [a], ...WINDOW };
    const q = `query($org: String!, $r: ExploreRequest!) {
      exploreOrganizations(request: $r) { resultsFor totalOrgs organizations { name bytes } }
      exploreOrganization(org: $org, request: $r) { org processes }
      exploreOrgTemporal(org: $org, request: $r) { total }
      exploreOrgCadence(org: $org, request: $r) { readout cdf { gapSecs fraction } }
      exploreOrgTransfer(org: $org, request: $r) { transfer { up down } }
      exploreOrgReach(org: $org, request: $r) { sourceCount }
      exploreOrgAccess(org: $org, request: $r) { ports { name flows } }
      ipOrgDataset { state loadedVersion attribution }
    }`;
    const res = await graphql(t.url, q, { org: ACME, r: request }, token);
    expect(res.errors).toBeUndefined();
    expect(res.data).toMatchObject({
      exploreOrganizations: { resultsFor: [a], totalOrgs: 6 },
      exploreOrganization: { org: ACME, processes: ['chrome.exe', 'Slack'] },
      exploreOrgTemporal: { total: 3 },
      exploreOrgCadence: { readout: 'no cadence data', cdf: [] },
      exploreOrgTransfer: { transfer: { up: 600, down: 6000 } },
      exploreOrgReach: { sourceCount: 2 },
      exploreOrgAccess: {
        ports: [
          { name: 443, flows: 2 },
          { name: 8443, flows: 1 },
        ],
      },
      ipOrgDataset: { state: 'ready', attribution: expect.stringContaining('DB-IP') },
    });
  });

  describe('tenant isolation', () => {
    it.each(ALL_PATHS)('%s: own and child answer, merged for a parent; sibling, other tree and unknown ids are 403', async (path) => {
      const own = await get(path, { instance_ids: [a], ...WINDOW });
      expect(own.status).toBe(200);
      expect(own.body.results_for).toEqual([a]);
      const parent = await get(path, { instance_ids: [a, tree.childB.id], ...WINDOW }, tree.mspCaller.token);
      expect(parent.status).toBe(200);
      expect(parent.body.results_for).toEqual([a, tree.childB.id]);
      for (const refused of [tree.childB.id, other.childA.id, other.msp.id, tree.msp.id, 'cus_missing']) {
        const res = await get(path, { instance_ids: [a, refused], ...WINDOW });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          error: 'authorization_error',
          code: 'authorization_error',
          message: 'Not authorized for 1 of the requested instances',
          unauthorized_instance_ids: [refused],
        });
      }
    });

    it("never mixes other tenants' flows into a view", async () => {
      const own = await get(org(ACME), { instance_ids: [a], ...WINDOW });
      expect(own.body.processes).not.toContain('curl');
      const merged = await get(org(ACME), { instance_ids: [a, tree.childB.id], ...WINDOW }, tree.mspCaller.token);
      expect(merged.body).toMatchObject({ upload: 1_000_600, sources: 3, processes: ['chrome.exe', 'Slack', 'curl'] });
      const sibling = await get(org(ACME, 'reach'), { instance_ids: [tree.childB.id], ...WINDOW }, tree.childBCaller.token);
      expect(sibling.body.sources).toEqual([{ ip: '10.9.0.1', upload: 1_000_000, download: 1_000_000, flows: 1 }]);
    });

    it('needs a token with the search scope', async () => {
      expect((await call(t.url, 'GET', LIST, { body: { instance_ids: [a] } })).status).toBe(401);
      const nodeOnly = await seedCaller(t.app, a, ['p.token.scope.node_api']);
      const res = await get(org(ACME, 'cadence'), { instance_ids: [a] }, nodeOnly.token);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        error: 'authorization_error',
        code: 'authorization_error',
        message: 'Token is missing the required scope: p.token.scope.search_api',
      });
    });
  });

  describe('requests', () => {
    it('reads the SDK request: Content-Type json on GET with a body, a bare instance id, the default window', async () => {
      const res = await call(t.url, 'GET', LIST, { token, rawBody: `{"instance_ids": "${a}", "size": 25}`, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
      expect(res.body.results_for).toEqual([a]);
      expect(res.body.total_orgs).toBe(6);
    });

    it('accepts query parameters: instance_ids repeated or comma-separated, start/end as JSON or ISO, size, src_ip', async () => {
      const start = encodeURIComponent(JSON.stringify(WINDOW.start));
      const end = encodeURIComponent(WINDOW.end.absolute.date);
      const res = await call(t.url, 'GET', `${LIST}?instance_ids=${a}&start=${start}&end=${end}&size=1`, { token });
      expect(res.status).toBe(200);
      expect(res.body.organizations.map((o: { name: string }) => o.name)).toEqual([ACME]);
      const parent = await call(t.url, 'GET', `${org(ACME)}?instance_ids=${a},${tree.childB.id}&src_ip=10.9.0.1`, { token: tree.mspCaller.token });
      expect(parent.body).toMatchObject({ results_for: [a, tree.childB.id], sources: 1, upload: 1_000_000 });
      const repeated = await call(t.url, 'GET', `${org(ACME, 'reach')}?instance_ids=${a}&instance_ids=${tree.childB.id}`, { token: tree.mspCaller.token });
      expect(repeated.body.source_count).toBe(3);
      const bodyWins = await call(t.url, 'GET', `${LIST}?instance_ids=${tree.childB.id}`, { token, body: { instance_ids: [a] } });
      expect(bodyWins.body.results_for).toEqual([a]);
    });

    const bad: [string, string, Record<string, unknown>, string][] = [
      ['no instance_ids', LIST, { instance_ids: undefined }, 'instance_ids'],
      ['empty instance_ids', LIST, { instance_ids: [] }, 'instance_ids'],
      ['blank instance id', LIST, { instance_ids: ['', ' '] }, 'instance_ids'],
      ['numeric instance id', LIST, { instance_ids: [5] }, ''],
      ['null instance id', LIST, { instance_ids: [null] }, ''],
      ['object instance_ids', LIST, { instance_ids: { a: 1 } }, ''],
      ['numeric instance_ids', LIST, { instance_ids: 7 }, ''],
      ['boolean instance_ids', org(ACME), { instance_ids: true }, ''],
      ['start not a filter', LIST, { start: 5 }, 'start'],
      ['start with two forms', LIST, { start: { now: true, relative: { value: 1, unit: 'hours' } } }, 'start'],
      ['start.relative.value 0', LIST, { start: { relative: { value: 0, unit: 'hours' } } }, 'start.relative.value'],
      ['start.relative.unit', LIST, { start: { relative: { value: 1, unit: 'years' } } }, 'start.relative.unit'],
      ['start not a date', LIST, { start: 'yesterday' }, 'start.absolute.date'],
      ['end.now false', LIST, { end: { now: false } }, 'end.now'],
      ['end.absolute month 13', LIST, { end: { absolute: { date: '2025-13-01T00:00:00Z' } } }, 'end.absolute.date'],
      ['start after end', LIST, { start: { now: true }, end: { relative: { value: 1, unit: 'hours' } } }, 'start'],
      ['size 0', LIST, { size: 0 }, 'size'],
      ['size -1', org(ACME, 'reach'), { size: -1 }, 'size'],
      ['size 1001', LIST, { size: 1001 }, 'size'],
      ['size 1.5', LIST, { size: 1.5 }, ''],
      ['size text', LIST, { size: 'abc' }, ''],
      ['size 2^40', LIST, { size: 2 ** 40 }, ''],
      ['src_ip not an address', org(ACME), { src_ip: '999.1.1.1' }, 'src_ip'],
      ['src_ip a number', org(ACME, 'cadence'), { src_ip: 5 }, ''],
      ['org too long', org('x'.repeat(600)), {}, 'org'],
    ];
    it.each(bad)('answers %s with 400', async (_name, path, body, field) => {
      const res = await get(path, { instance_ids: [a], ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual(res.body.code);
      expect(['validation_error', 'invalid_request']).toContain(res.body.code);
      if (field) expect(res.body.field).toBe(field);
    });

    it('answers a malformed body with 400 and unknown views with 404', async () => {
      expect((await call(t.url, 'GET', LIST, { token, rawBody: '{"instance_ids": [' })).status).toBe(400);
      expect((await call(t.url, 'GET', LIST, { token, rawBody: '[1]' })).status).toBe(400);
      expect((await get(`${org(ACME)}/nope`, { instance_ids: [a] })).status).toBe(404);
      expect((await get(`${LIST}/`, { instance_ids: [a], ...WINDOW })).status).toBe(200);
      expect((await call(t.url, 'POST', LIST, { token, body: { instance_ids: [a] } })).status).toBe(405);
      expect((await get(`${LIST}/%E0%A4%A`, { instance_ids: [a] })).status).toBe(404);
    });
  });
});
