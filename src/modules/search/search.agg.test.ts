/**
 * POST /search/agg/1.0 (terms aggregation, shapes in docs/search.md) on real chDB with known flows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scopes } from '../../auth/scopes.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { seedCaller } from '../../../test/kit/seed.js';
import { AGG, type SearchWorld, nested, search, seedSearchWorld, windowOf } from './search.fixtures.js';

describe('POST /search/agg/1.0', () => {
  let t: TestApp;
  let w: SearchWorld;
  let A: string;
  const terms = (body: Record<string, unknown>, token = w.tree.childACaller.token) =>
    search(t.url, token, { instance_ids: [A], module: 'flows', ...windowOf(w.base), ...body }, AGG);
  const bucket = (key: unknown, doc_count: number, value: number | null = doc_count) => ({ key, doc_count, value });

  beforeAll(async () => {
    t = await startTestApp();
    w = await seedSearchWorld(t.app);
    A = w.tree.childA.id;
  });
  afterAll(() => t.stop());

  it('counts the top values of a field, doc_count desc then key, flows without the field not counted', async () => {
    const res = await terms({ field: 'app_name' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      [A]: { buckets: [bucket('DNS', 3), bucket('HTTPS', 3), bucket('HTTP', 2), bucket('Google Drive', 1)], other_doc_count: 0, took: expect.any(Number) },
    });
  });

  it('limits the buckets with size and counts the rest in other_doc_count', async () => {
    const res = await terms({ field: 'app_name', size: 2 });
    expect(res.body[A]).toEqual({ buckets: [bucket('DNS', 3), bucket('HTTPS', 3)], other_doc_count: 3, took: expect.any(Number) });
  });

  it('computes a metric per bucket and orders by it', async () => {
    const res = await terms({ field: 'app_name', metric: 'sum:bytes', order: { by: 'value', direction: 'desc' } });
    expect(res.body[A].buckets).toEqual([bucket('HTTP', 2, 1600), bucket('HTTPS', 3, 1500), bucket('DNS', 3, 800), bucket('Google Drive', 1, 600)]);
    const avg = await terms({ field: 'app_name', metric: 'avg:stats.volume.bytes.total', order: { by: 'key' } });
    expect(avg.body[A].buckets).toEqual([bucket('DNS', 3, 800 / 3), bucket('Google Drive', 1, 600), bucket('HTTP', 2, 800), bucket('HTTPS', 3, 500)]);
    const uniq = await terms({ field: 'transport.proto', metric: 'uniq:src.ip' });
    expect(uniq.body[A].buckets).toEqual([bucket('TCP', 7, 7), bucket('UDP', 3, 3)]);
  });

  it('keeps the JSON type of the key: numbers, array elements, epoch milliseconds', async () => {
    expect((await terms({ field: 'dst.port' })).body[A].buckets).toEqual([bucket(443, 4), bucket(53, 3), bucket(80, 2)]);
    expect((await terms({ field: 'meta.tags' })).body[A].buckets).toEqual([bucket('scan', 3)]);
    const times = await terms({ field: '@timestamp', size: 2, order: { by: 'key', direction: 'DESC' } });
    expect(times.body[A]).toMatchObject({ buckets: [bucket(w.a[0]!['@timestamp'], 1), bucket(w.a[1]!['@timestamp'], 1)], other_doc_count: 8 });
  });

  it('applies the sentence and the window', async () => {
    const res = await terms({ field: 'app_name', sentence: 'transport.proto eq TCP and bytes gt 500' });
    expect(res.body[A].buckets).toEqual([bucket('HTTP', 2), bucket('Google Drive', 1), bucket('HTTPS', 1)]);
    const old = await terms({ field: 'app_name', start: { relative: { value: 2, unit: 'hours' } }, end: { now: true }, size: 1, order: { by: 'key' } });
    expect(old.body[A]).toMatchObject({ buckets: [bucket('DNS', 3)], other_doc_count: 7 });
  });

  it('answers an MSP per instance over its whole tree', async () => {
    const { msp, childA, childB } = w.tree;
    const res = await search(t.url, w.tree.mspCaller.token, { instance_ids: [msp.id, childA.id, childB.id], module: 'flows', field: 'app_name', size: 1 }, AGG);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      [msp.id]: { buckets: [bucket('MSP-APP', 2)], other_doc_count: 0, took: expect.any(Number) },
      [childA.id]: { buckets: [bucket('DNS', 3)], other_doc_count: 6, took: expect.any(Number) },
      [childB.id]: { buckets: [bucket('B-APP', 3)], other_doc_count: 0, took: expect.any(Number) },
    });
  });

  it('answers an instance without flows with no buckets', async () => {
    const res = await terms({ field: 'app_name', sentence: 'app_name eq none' });
    expect(res.body[A]).toEqual({ buckets: [], other_doc_count: 0, took: expect.any(Number) });
  });

  it.each([
    ['no field', {}, 'field is required: the dotted path to aggregate on', { field: 'field' }],
    ['an unknown field', { field: 'nope' }, "unknown or unusable terms field 'nope'", { field: 'field' }],
    ['field a number', { field: 5 }, 'field must be a string', { field: 'field' }],
    ['size 0', { field: 'app_name', size: 0 }, /between 1 and 1000/, { field: 'size' }],
    ['size 1001', { field: 'app_name', size: 1001 }, /between 1 and 1000/, { field: 'size' }],
    ['size a string', { field: 'app_name', size: '10' }, /between 1 and 1000/, { field: 'size' }],
    ['order a string', { field: 'app_name', order: 'asc' }, 'order must be an object', { field: 'order' }],
    ['order.by unknown', { field: 'app_name', order: { by: 'count' } }, /order.by must be/, { field: 'order.by' }],
    ['order.direction unknown', { field: 'app_name', order: { direction: 'up' } }, /order.direction must be/, { field: 'order.direction' }],
    ['order.by constructor', { field: 'app_name', order: { by: 'constructor' } }, /order.by must be/, { field: 'order.by' }],
    ['order.by __proto__', { field: 'app_name', order: JSON.parse('{"by": "__proto__"}') }, /order.by must be/, { field: 'order.by' }],
    ['order.by in a list', { field: 'app_name', order: { by: ['key'] } }, /order.by must be/, { field: 'order.by' }],
    ['order.direction in a list', { field: 'app_name', order: { direction: ['asc'] } }, /order.direction must be/, { field: 'order.direction' }],
    [
      'order with another key',
      { field: 'app_name', order: { by: 'key', dir: 'asc' } },
      "Unknown field 'dir' in order; it may have by, direction",
      { field: 'order.dir' },
    ],
    ['an unknown metric', { field: 'app_name', metric: 'median:bytes' }, /metric must be/, { field: 'metric' }],
    ['a sum over text', { field: 'app_name', metric: 'sum:app_name' }, /needs a numeric field/, { field: 'metric' }],
    ['a bad sentence', { field: 'app_name', sentence: 'app_name eqq x' }, "PQL parse failure near 'eqq'", { position: 9 }],
    ['an unknown key', { field: 'app_name', buckets: 3 }, /Unknown field 'buckets'/, { field: 'buckets' }],
    ['another module', { field: 'app_name', module: 'events' }, "module must be 'flows'", { field: 'module' }],
    ['a bad window', { field: 'app_name', start: { relative: { value: -1, unit: 'days' } } }, /positive integer/, { field: 'start.relative.value' }],
  ])('answers %s with 400 validation_error', async (_name, body, message, details) => {
    const res = await terms(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(nested(400, 'validation_error', message, details));
  });

  it("limits instances to the caller's tree", async () => {
    const res = await search(t.url, w.tree.childACaller.token, { instance_ids: [A, w.tree.childB.id], module: 'flows', field: 'app_name' }, AGG);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      nested(403, 'authorization_error', 'Not authorized for 1 of the requested instances', {
        reason: 'instance_not_authorized',
        unauthorized_instance_ids: [w.tree.childB.id],
      }),
    );
  });

  it('needs a token with the search scope', async () => {
    const none = await search(t.url, undefined, { instance_ids: [A], module: 'flows', field: 'app_name' }, AGG);
    expect(none.status).toBe(401);
    expect(none.body).toEqual(nested(401, 'authentication_error', 'Authentication required', { reason: 'missing_token' }));
    const caller = await seedCaller(t.app, A, [Scopes.nodeApi]);
    const res = await terms({ field: 'app_name' }, caller.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      nested(403, 'authorization_error', 'Token is missing the required scope', { reason: 'insufficient_scope', required_scope: Scopes.searchApi }),
    );
  });
});
