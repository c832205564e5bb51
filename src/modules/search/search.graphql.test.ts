/**
 * The GraphQL search fields follow the REST rules: `flows` (cursor connection), `flowAggregate`,
 * `flowTimeseries`, and the wire fields rest-compat runs, checked against the REST answers.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Scopes } from '../../auth/scopes.js';
import { RawJson } from '../../infra/raw-json.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller } from '../../../test/kit/seed.js';
import { AGG, type SearchWorld, iso, search, seedSearchWorld, windowOf } from './search.fixtures.js';
import { encodeCursor } from './search.service.js';

const FLOWS = `query($id: String!, $sentence: String, $start: FlowTimeFilter, $end: FlowTimeFilter, $sort: [FlowSortInput!], $fields: [String!],
  $first: Int, $after: String, $last: Int, $before: String) {
  flows(instanceId: $id, sentence: $sentence, start: $start, end: $end, sort: $sort, fields: $fields, first: $first, after: $after, last: $last, before: $before) {
    found total took flows
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node }
  }
}`;
const AGGREGATE = `query($ids: [String!]!, $sentence: String, $start: FlowTimeFilter, $end: FlowTimeFilter, $field: String!, $size: Int, $metric: String, $order: FlowTermsOrder) {
  flowAggregate(instanceIds: $ids, sentence: $sentence, start: $start, end: $end, field: $field, size: $size, metric: $metric, order: $order) {
    instanceId otherDocCount took buckets { key docCount value }
  }
}`;
const TIMESERIES = `query($ids: [String!]!, $start: FlowTimeFilter, $end: FlowTimeFilter, $interval: String!, $metric: String, $sentence: String) {
  flowTimeseries(instanceIds: $ids, start: $start, end: $end, interval: $interval, metric: $metric, sentence: $sentence) {
    instanceId interval intervalMs metric found total took buckets { ts count value }
  }
}`;

describe('GraphQL flow search', () => {
  let t: TestApp;
  let w: SearchWorld;
  let A: string;
  let token: string;
  const ts = (...idx: number[]) => idx.map((i) => w.a[i]!['@timestamp']);
  const flows = async (vars: Record<string, unknown>, tok = token) => graphql(t.url, FLOWS, { id: A, ...windowOf(w.base), ...vars }, tok);
  const rest = async (body: Record<string, unknown>) =>
    (await search(t.url, token, { instance_ids: [A], module: 'flows', ...windowOf(w.base), ...body })).body[A];

  beforeAll(async () => {
    t = await startTestApp();
    w = await seedSearchWorld(t.app);
    A = w.tree.childA.id;
    token = w.tree.childACaller.token;
  });
  afterAll(() => t.stop());

  describe('flows', () => {
    it('gives the REST page as a connection: same records, counts and order', async () => {
      const sort = [{ field: 'app_name', order: 'asc' }, { field: 'bytes' }];
      const res = await flows({ first: 4, sort, fields: ['app_name', 'bytes', 'src.ip'], sentence: 'transport.proto eq TCP' });
      expect(res.errors).toBeUndefined();
      const page = await rest({ size: 4, page: 0, sort, fields: ['app_name', 'bytes', 'src.ip'], sentence: 'transport.proto eq TCP' });
      const conn = res.data.flows;
      expect(conn.edges.map((e: any) => e.node)).toEqual(page.flows);
      expect(conn.flows).toEqual(page.flows);
      expect(conn.edges.map((e: any) => e.cursor)).toEqual([0, 1, 2, 3].map(encodeCursor));
      expect(conn).toMatchObject({
        found: 7,
        total: 10,
        pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: encodeCursor(0), endCursor: encodeCursor(3) },
      });
      expect(conn.edges.map((e: any) => e.node['@timestamp'])).toEqual(ts(8, 2, 5, 6));
    });

    it('writes the page of `flows` as the engine wrote it, without parsing a record', async () => {
      const parse = vi.spyOn(RawJson.prototype, 'parse');
      try {
        const res = await graphql(
          t.url,
          'query($id: String!, $start: FlowTimeFilter, $end: FlowTimeFilter) { flows(instanceId: $id, start: $start, end: $end, first: 100) { found flows } }',
          { id: A, ...windowOf(w.base) },
          token,
        );
        expect(parse).not.toHaveBeenCalled();
        expect(res).toEqual({ data: { flows: { found: 10, flows: (await rest({ size: 100 })).flows } } });
        // Errors keep yoga's own shape and status.
        const bad = await graphql(t.url, 'query($id: String!) { flows(instanceId: $id, sentence: "dst.port eqq 1") { flows } }', { id: A }, token);
        expect(bad.errors?.[0].extensions).toMatchObject({ code: 'validation_error', details: { position: 9 } });
      } finally {
        parse.mockRestore();
      }
    });

    it('pages forward with endCursor to the end', async () => {
      const seen: number[] = [];
      let after: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = await flows({ first: 3, after, fields: ['app_name'] });
        const conn = res.data.flows;
        seen.push(...conn.edges.map((e: any) => e.node['@timestamp']));
        if (!conn.pageInfo.hasNextPage) break;
        after = conn.pageInfo.endCursor;
      }
      expect(seen).toEqual(ts(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
    });

    it('starts after any edge, not only at page boundaries', async () => {
      const res = await flows({ first: 3, after: encodeCursor(1), fields: ['app_name'] });
      expect(res.data.flows.edges.map((e: any) => [e.cursor, e.node['@timestamp']])).toEqual([2, 3, 4].map((i) => [encodeCursor(i), w.a[i]!['@timestamp']]));
      expect(res.data.flows.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true, startCursor: encodeCursor(2), endCursor: encodeCursor(4) });
    });

    it('pages backward with last and before', async () => {
      const res = await flows({ last: 3, before: encodeCursor(5), fields: ['app_name'] });
      expect(res.data.flows.edges.map((e: any) => e.node['@timestamp'])).toEqual(ts(2, 3, 4));
      const head = await flows({ last: 3, before: encodeCursor(1), fields: ['app_name'] });
      expect(head.data.flows.edges.map((e: any) => e.node['@timestamp'])).toEqual(ts(0));
      expect(head.data.flows.pageInfo.hasPreviousPage).toBe(false);
      const none = await flows({ last: 3, before: encodeCursor(0) });
      expect(none.data.flows).toMatchObject({ edges: [], flows: [], found: 10, pageInfo: { hasNextPage: true, startCursor: null, endCursor: null } });
    });

    it('answers first: 0 with counts only', async () => {
      const res = await flows({ first: 0 });
      expect(res.data.flows).toMatchObject({ edges: [], found: 10, total: 10, pageInfo: { hasNextPage: true } });
    });

    it.each([
      ['a foreign cursor', { after: 'bm9wZQ' }, 'after is not a cursor of this connection', { field: 'after' }],
      ['first over the limit', { first: 25_001 }, 'first must be an integer between 0 and 25000', { field: 'first' }],
      ['last without before', { last: 2 }, /last needs before/, { field: 'before' }],
      ['both directions', { first: 2, before: encodeCursor(3) }, /not both/, { field: 'last' }],
      ['a PQL error', { sentence: 'app_name eqq x' }, "PQL parse failure near 'eqq'", { position: 9 }],
      ['the wildcard in fields', { fields: ['*'] }, /wildcard/, { field: 'fields[0]' }],
      ['an unknown sort field', { sort: [{ field: 'nope' }] }, /unknown sort field/, { field: 'sort[0].field' }],
      ['a bad window', { start: { now: true, relative: { value: 1, unit: 'hours' } } }, /exactly one of/, { field: 'start' }],
    ])('refuses %s with validation_error', async (_name, vars, message, details) => {
      const res = await flows(vars);
      expect(res.data).toBeNull();
      expect(res.errors).toHaveLength(1);
      expect(res.errors![0]).toMatchObject({
        message: message instanceof RegExp ? expect.stringMatching(message) : message,
        extensions: { code: 'validation_error', details },
      });
    });

    it("limits the instance to the caller's tree", async () => {
      const res = await flows({ id: w.tree.childB.id });
      expect(res.errors![0]).toMatchObject({
        message: 'Not authorized for 1 of the requested instances',
        extensions: { code: 'authorization_error', details: { reason: 'instance_not_authorized', unauthorized_instance_ids: [w.tree.childB.id] } },
      });
      const msp = await flows({ first: 1 }, w.tree.mspCaller.token);
      expect(msp.data.flows.found).toBe(10);
    });

    it('needs a token with the search scope', async () => {
      const none = await graphql(t.url, FLOWS, { id: A });
      expect(none.errors![0]).toMatchObject({
        message: 'Authentication required',
        extensions: { code: 'authentication_error', details: { reason: 'missing_token' } },
      });
      const caller = await seedCaller(t.app, A, [Scopes.nodeApi]);
      const res = await flows({}, caller.token);
      expect(res.errors![0]).toMatchObject({
        message: 'Token is missing the required scope',
        extensions: { code: 'authorization_error', details: { reason: 'insufficient_scope', required_scope: Scopes.searchApi } },
      });
    });
  });

  describe('flowAggregate', () => {
    it('gives the REST terms per instance under camelCase names', async () => {
      const { msp, childA, childB } = w.tree;
      const vars = { ids: [msp.id, childA.id, childB.id], field: 'app_name', metric: 'sum:bytes', order: { by: 'value', direction: 'desc' }, size: 3 };
      const res = await graphql(t.url, AGGREGATE, vars, w.tree.mspCaller.token);
      expect(res.errors).toBeUndefined();
      const wire = await search(
        t.url,
        w.tree.mspCaller.token,
        { instance_ids: vars.ids, module: 'flows', field: 'app_name', metric: 'sum:bytes', order: vars.order, size: 3 },
        AGG,
      );
      expect(res.data.flowAggregate).toEqual(
        vars.ids.map((id) => ({
          instanceId: id,
          buckets: wire.body[id].buckets.map((b: any) => ({ key: b.key, docCount: b.doc_count, value: b.value })),
          otherDocCount: wire.body[id].other_doc_count,
          took: expect.any(Number),
        })),
      );
      expect(res.data.flowAggregate[1].buckets).toEqual([
        { key: 'HTTP', docCount: 2, value: 1600 },
        { key: 'HTTPS', docCount: 3, value: 1500 },
        { key: 'DNS', docCount: 3, value: 800 },
      ]);
    });

    it('refuses a bad field with validation_error', async () => {
      const res = await graphql(t.url, AGGREGATE, { ids: [A], field: 'nope' }, token);
      expect(res.errors![0]).toMatchObject({ extensions: { code: 'validation_error', details: { field: 'field' } } });
    });
  });

  describe('flowTimeseries', () => {
    it('gives the REST timeseries per instance', async () => {
      const start = { absolute: { date: iso(w.minute - 30_000) } };
      const res = await graphql(t.url, TIMESERIES, { ids: [A], start, end: windowOf(w.base).end, interval: '1m', metric: 'max:bytes' }, token);
      expect(res.errors).toBeUndefined();
      expect(res.data.flowTimeseries).toEqual([
        {
          instanceId: A,
          interval: '1m',
          intervalMs: 60_000,
          metric: 'max:stats.volume.bytes.total',
          found: 10,
          total: 10,
          took: expect.any(Number),
          buckets: [
            { ts: w.minute - 60_000, count: 0, value: null },
            { ts: w.minute, count: 10, value: 900 },
          ],
        },
      ]);
      const wire = await rest({ size: 0, start, timeseries: { interval: '1m', metric: 'max:bytes' } });
      expect(wire.timeseries.buckets).toEqual(res.data.flowTimeseries[0].buckets);
    });

    it('refuses an interval that is not one', async () => {
      const res = await graphql(t.url, TIMESERIES, { ids: [A], interval: 'hourly' }, token);
      expect(res.errors![0]).toMatchObject({ extensions: { code: 'validation_error', details: { field: 'timeseries.interval' } } });
    });
  });

  describe('the wire fields rest-compat runs', () => {
    it('searchRecords answers exactly what POST /search/records/1.0 answers', async () => {
      const body = { instance_ids: [A], module: 'flows', size: 3, page: 1, sentence: 'dst.port ex', ...windowOf(w.base) };
      const res = await graphql(t.url, 'query($body: JSON!) { searchRecords(body: $body) }', { body }, token);
      const wire = await search(t.url, token, body);
      const noTook = (r: any) => ({ ...r[A], took: 0 });
      expect(noTook(res.data.searchRecords)).toEqual(noTook(wire.body));
      expect(res.data.searchRecords[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(3, 4, 5));
    });

    it('searchAggregate answers exactly what POST /search/agg/1.0 answers', async () => {
      const body = { instance_ids: [A], module: 'flows', field: 'dst.port', ...windowOf(w.base) };
      const res = await graphql(t.url, 'query($body: JSON!) { searchAggregate(body: $body) }', { body }, token);
      const wire = await search(t.url, token, body, AGG);
      expect({ ...res.data.searchAggregate[A], took: 0 }).toEqual({ ...wire.body[A], took: 0 });
    });
  });
});
