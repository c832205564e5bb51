/**
 * POST /search/records/1.0 on real chDB with known flows: every rule of api-spec.md "Search" and
 * wire.md 5, tenant isolation, and the nested error envelope (wire.md 2.4) for every failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scopes } from '../../auth/scopes.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedCaller } from '../../../test/kit/seed.js';
import { type SearchWorld, AGG, RECORDS, asStored, expiredToken, iso, nested, search, seedSearchWorld, windowOf } from './search.fixtures.js';

describe('POST /search/records/1.0', () => {
  let t: TestApp;
  let w: SearchWorld;
  let A: string;
  let token: string;
  /** A's flows picked by index, as the search returns them whole. */
  const whole = (...idx: number[]) => idx.map((i) => asStored(w.a[i]!, A));
  const ts = (...idx: number[]) => idx.map((i) => w.a[i]!['@timestamp']);
  const records = (body: Record<string, unknown>, tok = token) => search(t.url, tok, { instance_ids: [A], module: 'flows', ...windowOf(w.base), ...body });

  beforeAll(async () => {
    t = await startTestApp();
    w = await seedSearchWorld(t.app);
    A = w.tree.childA.id;
    token = w.tree.childACaller.token;
  });
  afterAll(() => t.stop());

  describe('what the SDK sends', () => {
    it('answers the wire.md 5.1 example body with the 5.3 envelope keyed by instance id (200, not 201)', async () => {
      const res = await search(t.url, token, {
        instance_ids: [A],
        module: 'flows',
        size: 50,
        page: 0,
        sentence: 'dst.port eq 443',
        start: { relative: { value: 2, unit: 'hours' } },
        end: { now: true },
        sort: [{ field: '@timestamp', order: 'asc' }],
        fields: ['src.ip', 'dst.ip'],
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const flows = [w.oldOfA, ...[8, 6, 3, 0].map((i) => w.a[i]!)].map((f: any) => ({
        '@timestamp': f['@timestamp'],
        ...(f.src ? { src: { ip: f.src.ip } } : {}),
        ...(f.dst?.ip ? { dst: { ip: f.dst.ip } } : {}),
      }));
      expect(res.body).toEqual({
        [A]: { flows, found: 5, total: 11, returned: 5, current_page: 0, pages: 1, more_data_available: false, took: expect.any(Number) },
      });
      expect(Number.isInteger(res.body[A].flows[0]['@timestamp'])).toBe(true);
    });

    it('defaults: 15 minutes back to now, @timestamp desc, 15 per page, whole records without the id', async () => {
      const res = await search(t.url, token, { instance_ids: [A], module: 'flows' });
      expect(res.status).toBe(200);
      expect(res.body[A]).toEqual({
        flows: whole(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
        found: 10,
        total: 10,
        returned: 10,
        current_page: 0,
        pages: 1,
        more_data_available: false,
        took: expect.any(Number),
      });
    });

    it('pages with size and page until more_data_available is false, as the SDK iterates', async () => {
      const seen: number[] = [];
      const envelopes: unknown[] = [];
      for (let page = 0; ; page++) {
        const res = await records({ size: 3, page });
        expect(res.status).toBe(200);
        const entry = res.body[A];
        envelopes.push({ ...entry, flows: entry.flows.length, took: 0 });
        seen.push(...entry.flows.map((f: any) => f['@timestamp']));
        if (!entry.more_data_available) break;
      }
      expect(seen).toEqual(ts(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
      expect(envelopes).toEqual(
        [0, 1, 2, 3].map((page) => ({
          flows: page < 3 ? 3 : 1,
          found: 10,
          total: 10,
          returned: page < 3 ? 3 : 1,
          current_page: page,
          pages: 4,
          more_data_available: page < 3,
          took: 0,
        })),
      );
      const past = await records({ size: 3, page: 4 });
      expect(past.body[A]).toMatchObject({ flows: [], returned: 0, current_page: 4, more_data_available: false, found: 10 });
    });
  });

  describe('sentence', () => {
    it.each([
      ['dst.port eq 443', [0, 3, 6, 8]],
      ['protocol eq UDP', [1, 4, 7]],
      ['app_name eq Google Drive', [8]],
      ['app_name ne DNS', [0, 2, 3, 5, 6, 8, 9]],
      ['app_name nex', [9]],
      ['meta.tags eq scan', [0, 4, 8]],
      ['src.ip eq 10.0.0.0/24', [0, 1, 2, 3, 4, 5, 6, 7, 9]],
      ['src.ip wi 192.168.*', [8]],
      ['bytes gte 300 and bytes lte 600', [0, 4, 7, 8]],
      ['dst.port in [53, 80]', [1, 2, 4, 5, 7]],
      ['app_name eq DNS or app_name eq HTTPS and bytes gt 400', [0, 1, 4, 6, 7]],
      ['(app_name eq DNS or app_name eq HTTPS) and bytes gt 400', [0, 6]],
      ['dst.ip eq 8.8.8.8 (dst.port eq 53)', [1, 7]],
      ['', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
      ['()', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ])('%s', async (sentence, expected) => {
      const res = await records({ sentence, fields: ['app_name'] });
      expect(res.status).toBe(200);
      expect(res.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(...expected));
      expect(res.body[A]).toMatchObject({ found: expected.length, total: 10 });
    });

    it.each([
      ['src.ip gt 10.0.0.8', [8, 9]],
      ['src.ip lte 10.0.0.2', [0, 1]],
      ['src.ip lt 2001:db8::', []],
      ['src.ip in [10.0.0.1/32, 10.0.0.2/32, 192.168.0.0/16]', [0, 1, 8]],
      ['src.ip in [192.168.*, 10.0.0.1?]', [8, 9]],
      ['src.ip in [192.168.*, 10.0.0.1?, 10.0.0.3/32, 10.0.0.4/32, None]', [2, 3, 8, 9]],
    ])('%s: addresses ordered within their family, lists of blocks and wildcards', async (sentence, expected) => {
      const res = await records({ sentence, fields: ['app_name'] });
      expect(res.status).toBe(200);
      expect(res.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(...expected));
    });

    it('answers a syntax error with 400 validation_error, the token and its position', async () => {
      const res = await records({ sentence: 'dst.port eq 443 and x eqq 2' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', "PQL parse failure near 'eqq'", { position: 22 }));
    });

    it('counts the position in characters, as the SDK does, not in UTF-16 units', async () => {
      const res = await records({ sentence: 'app_name eq 😀 and x eqq 2' });
      expect(res.body).toEqual(nested(400, 'validation_error', "PQL parse failure near 'eqq'", { position: 20 }));
    });

    it('reads thousands of parentheses without running out of stack', async () => {
      for (const sentence of [`app_name eq x ${'('.repeat(10_000)}`, `app_name eq x and ${'('.repeat(16_000)}`]) {
        const res = await records({ sentence });
        expect(res.status, sentence.slice(0, 20)).toBe(200);
        expect(res.body[A].found).toBe(0);
      }
      const deep = await records({ sentence: `${'('.repeat(8_000)}app_name eq x${')'.repeat(8_000)}` });
      expect(deep.body).toEqual(nested(400, 'validation_error', "PQL parse failure near '('", { position: 64 }));
    });

    it('answers an unknown field and a wrongly typed value with their position', async () => {
      const unknown = await records({ sentence: 'app_name eq x or nope eq 1' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual(nested(400, 'validation_error', /unknown field 'nope'/, { position: 17 }));
      const typed = await records({ sentence: 'dst.port eq http' });
      expect(typed.body).toEqual(nested(400, 'validation_error', "field 'dst.port' expects a number, got 'http'", { position: expect.any(Number) }));
    });

    it.each([
      ['bytes gt 1e400', /within ±9007199254740991, got '1e400'/, 9],
      ['dst.port lt 99999999999999999999999', /within ±9007199254740991/, 12],
      ['@timestamp gt 99999999999999999999', /epoch milliseconds between years 0001 and 9999/, 14],
    ])('answers %s, a value no engine binds exactly, with 400 and its position', async (sentence, message, position) => {
      const res = await records({ sentence });
      expect(res.body).toEqual(nested(400, 'validation_error', message, { position }));
    });
  });

  describe('sentences as long as they may be', () => {
    /** `make(0) join make(1) join …` as long as it fits in the 16 KiB a sentence may have, inside `wrap`. */
    const longest = (make: (i: number) => string, join: string, wrap: (inner: string) => string = (inner) => inner) => {
      const items: string[] = [];
      while (wrap([...items, make(items.length)].join(join)).length <= 16_384) items.push(make(items.length));
      return wrap(items.join(join));
    };
    const nest = (inner: string, depth: number) => `${'('.repeat(depth)}${inner}${')'.repeat(depth)}`;
    it.each([
      [
        'a list of IPv6 blocks',
        longest(
          () => '::/0',
          ', ',
          (l) => `src.ip in [${l}]`,
        ),
        10,
      ],
      [
        'a list of IPv4 blocks',
        longest(
          (i) => `${(i % 200) + 1}.${i % 250}.0.0/16`,
          ', ',
          (l) => `src.ip in [${l}]`,
        ),
        0,
      ],
      [
        'a list of wildcards',
        longest(
          (i) => `${i}.*.1?`,
          ', ',
          (l) => `src.ip in [${l}]`,
        ),
        2,
      ],
      [
        'a list of values',
        longest(
          (i) => `v${i}`,
          ', ',
          (l) => `app_name in [${l}]`,
        ),
        0,
      ],
      ['blocks joined by or', longest((i) => `src.ip eq ${(i % 9) + 1}.0.0.0/8`, ' or '), 0],
      ['negated blocks joined by and', longest((i) => `src.ip ne ${(i % 9) + 1}.0.0.0/8`, ' and '), 10],
      ['address orderings joined by and', longest((i) => `src.ip gte 1.0.0.${i % 250}`, ' and '), 10],
      ['numbers joined by or', longest((i) => `dst.port eq ${i}`, ' or '), 9],
      ['array wildcards joined by or', longest((i) => `meta.tags wi x${i}*`, ' or '), 0],
      ['groups nested 60 deep, joined by or', longest((i) => nest(`dst.port eq ${i + 1000}`, 60), ' or '), 0],
    ])('runs %s on both paths', async (_name, sentence, found) => {
      expect(sentence.length).toBeGreaterThan(16_000);
      const res = await records({ sentence, fields: ['app_name'] });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body[A].found).toBe(found);
      const agg = await search(t.url, token, { instance_ids: [A], module: 'flows', ...windowOf(w.base), field: 'app_name', sentence }, AGG);
      expect(agg.status, JSON.stringify(agg.body).slice(0, 300)).toBe(200);
    });
  });

  describe('sort', () => {
    it('applies keys in order, missing values last', async () => {
      const res = await records({
        sort: [
          { field: 'app_name', order: 'asc' },
          { field: 'stats.volume.bytes.total', order: 'desc' },
        ],
        fields: ['app_name'],
      });
      expect(res.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(7, 4, 1, 8, 2, 5, 6, 0, 3, 9));
    });

    it('defaults the order to desc and accepts aliases', async () => {
      const asc = await records({ sort: [{ field: 'bytes', order: 'asc' }], fields: ['bytes'] });
      expect(asc.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(1, 3, 4, 7, 0, 8, 5, 6, 2, 9));
      const desc = await records({ sort: [{ field: 'bytes' }], fields: ['bytes'] });
      expect(desc.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(2, 6, 5, 8, 0, 7, 4, 3, 1, 9));
    });

    it('orders addresses as addresses, and takes the order in any case', async () => {
      const res = await records({ sort: [{ field: 'src.ip', order: 'ASC' }], fields: ['src.ip'] });
      expect(res.body[A].flows.map((f: any) => f.src.ip)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 10].map((n) => `10.0.0.${n}`).concat('192.168.1.10'));
    });

    it('takes an empty sort as the default, as an empty fields', async () => {
      const res = await records({ sort: [], fields: [] });
      expect(res.status).toBe(200);
      expect(res.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
    });

    it('pages a multi-key sort without overlap', async () => {
      const sort = [{ field: 'transport.proto', order: 'asc' }];
      const pages = await Promise.all([0, 1, 2].map((page) => records({ sort, size: 4, page, fields: ['transport'] })));
      const all = pages.flatMap((p) => p.body[A].flows.map((f: any) => f['@timestamp']));
      expect(new Set(all).size).toBe(10);
      expect(pages.map((p) => p.body[A].flows.map((f: any) => f.transport.proto))).toEqual([
        ['TCP', 'TCP', 'TCP', 'TCP'],
        ['TCP', 'TCP', 'TCP', 'UDP'],
        ['UDP', 'UDP'],
      ]);
    });
  });

  describe('fields', () => {
    it('projects dotted paths and prefixes, omits missing paths, always adds @timestamp, gives the id only when named', async () => {
      const res = await records({ fields: ['src', 'dst.port', 'no.such.path', 'id'], size: 2 });
      expect(res.status).toBe(200);
      expect(res.body[A].flows).toEqual(
        [0, 1].map((i) => ({
          '@timestamp': w.a[i]!['@timestamp'],
          src: w.a[i]!.src,
          dst: { port: (w.a[i]!.dst as any).port },
          id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        })),
      );
      const noId = await records({ fields: ['app_name'], sort: [{ field: '@timestamp', order: 'asc' }], size: 1 });
      expect(noId.body[A].flows).toEqual([{ '@timestamp': w.a[9]!['@timestamp'] }]);
    });

    it('reads names of JavaScript object members as paths like any other: missing ones', async () => {
      const res = await records({ fields: ['constructor', '__proto__', 'toString', 'hasOwnProperty.x', 'src.ip'], size: 1 });
      expect(res.status).toBe(200);
      expect(res.body[A].flows).toEqual([{ '@timestamp': w.a[0]!['@timestamp'], src: { ip: '10.0.0.1' } }]);
    });

    it('answers the most fields it takes: 512 paths, 2,048 segments, 256 characters each', async () => {
      const fields = Array.from({ length: 512 }, (_, i) => `${String(i).padStart(3, '0')}${'p'.repeat(230)}.${'q'.repeat(8)}.r.s`);
      expect(fields.every((f) => f.length <= 256)).toBe(true);
      const res = await records({ fields, size: 2 });
      expect(res.status).toBe(200);
      expect(res.body[A].flows).toEqual([0, 1].map((i) => ({ '@timestamp': w.a[i]!['@timestamp'] })));
    });

    it.each([['*'], ['src.*'], ['app_name', '*']])('rejects the wildcard in %j', async (...fields) => {
      const res = await records({ fields });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', /wildcard/, { field: expect.stringMatching(/^fields\[\d\]$/) }));
    });
  });

  describe('size and page', () => {
    it.each([
      [0, 'size 0 is only valid together with timeseries'],
      [25_001, 'size must be an integer between 0 and 25000'],
      [-1, 'size must be an integer between 0 and 25000'],
      [1.5, 'size must be an integer between 0 and 25000'],
      ['10', 'size must be an integer between 0 and 25000'],
    ])('refuses size %j', async (size, message) => {
      const res = await records({ size });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', message, { field: 'size' }));
    });

    it('takes the maximum size, and size 0 with a timeseries', async () => {
      expect((await records({ size: 25_000 })).body[A].returned).toBe(10);
      const res = await records({ size: 0, timeseries: { interval: '1m', metric: 'sum:bytes' }, start: { absolute: { date: iso(w.minute - 30_000) } } });
      expect(res.status).toBe(200);
      expect(res.body[A]).toEqual({
        flows: [],
        found: 10,
        total: 10,
        returned: 0,
        current_page: 0,
        pages: 0,
        more_data_available: false,
        took: expect.any(Number),
        timeseries: {
          interval: '1m',
          interval_ms: 60_000,
          metric: 'sum:stats.volume.bytes.total',
          buckets: [
            { ts: w.minute - 60_000, count: 0, value: 0 },
            { ts: w.minute, count: 10, value: 4500 },
          ],
        },
      });
    });

    it.each([-1, 0.5, '1', 2 ** 60])('refuses page %j', async (page) => {
      const res = await records({ page });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', /page/, { field: 'page' }));
    });
  });

  describe('time window', () => {
    it('includes both ends and reads Z, +HH:MM and zone-less dates', async () => {
      const at = (ms: number) => iso(ms);
      const inclusive = await records({ start: { absolute: { date: at(w.base - 2000) } }, end: { absolute: { date: at(w.base - 1000) } } });
      expect(inclusive.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(1, 2));
      const plusTwo = new Date(w.base + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
      const zoneLess = at(w.base - 3000).replace('Z', '');
      const res = await records({ start: { absolute: { date: zoneLess } }, end: { absolute: { date: plusTwo } } });
      expect(res.body[A].flows.map((f: any) => f['@timestamp'])).toEqual(ts(0, 1, 2, 3));
    });

    it('reaches older flows with a relative start', async () => {
      const res = await records({ start: { relative: { value: 2, unit: 'hours' } }, end: { now: true }, sentence: 'app_name eq OLD' });
      expect(res.body[A]).toMatchObject({ found: 1, total: 11, flows: [{ '@timestamp': w.oldOfA['@timestamp'], app_name: 'OLD' }] });
    });

    it('refuses a start after the end', async () => {
      const res = await records({ start: { now: true }, end: { absolute: { date: iso(w.base) } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', 'start must not be after end', { field: 'start' }));
    });
  });

  describe('instances', () => {
    it('answers an MSP for itself and its children, each with its own flows only', async () => {
      const { msp, childA, childB } = w.tree;
      const res = await search(t.url, w.tree.mspCaller.token, {
        instance_ids: [msp.id, childA.id, childB.id],
        module: 'flows',
        fields: ['app_name', 'meta.customer_id'],
        size: 100,
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([msp.id, childA.id, childB.id].sort());
      expect(res.body[msp.id].flows.map((f: any) => [f.app_name, f.meta.customer_id])).toEqual([
        ['MSP-APP', msp.id],
        ['MSP-APP', msp.id],
      ]);
      expect(res.body[childB.id].flows.map((f: any) => f.app_name)).toEqual(['B-APP', 'B-APP', 'B-APP']);
      expect(res.body[childA.id].found).toBe(10);
      expect(res.body[childA.id].flows.every((f: any) => f.meta.customer_id === childA.id)).toBe(true);
    });

    it('pages several instances independently', async () => {
      const { msp, childB } = w.tree;
      const res = await search(t.url, w.tree.mspCaller.token, { instance_ids: [msp.id, childB.id], module: 'flows', size: 2, page: 1 });
      expect(res.body[msp.id]).toMatchObject({ returned: 0, found: 2, pages: 1, more_data_available: false });
      expect(res.body[childB.id]).toMatchObject({ returned: 1, found: 3, pages: 2, more_data_available: false });
    });

    it('answers an instance without flows with an empty page', async () => {
      const res = await search(t.url, w.tree.childBCaller.token, { instance_ids: [w.tree.childB.id], module: 'flows', sentence: 'app_name eq nothing' });
      expect(res.body).toEqual({
        [w.tree.childB.id]: { flows: [], found: 0, total: 3, returned: 0, current_page: 0, pages: 0, more_data_available: false, took: expect.any(Number) },
      });
    });

    it.each([
      ['a sibling', (x: SearchWorld) => [x.tree.childB.id], (x: SearchWorld) => [x.tree.childB.id]],
      ['the parent', (x: SearchWorld) => [x.tree.msp.id], (x: SearchWorld) => [x.tree.msp.id]],
      ['another tree', (x: SearchWorld) => [x.other.msp.id], (x: SearchWorld) => [x.other.msp.id]],
      ['a missing id', () => ['sentinel-999999'], () => ['sentinel-999999']],
      [
        'its own and two foreign ids',
        (x: SearchWorld) => [x.tree.childA.id, x.other.childA.id, 'cus_missing'],
        (x: SearchWorld) => [x.other.childA.id, 'cus_missing'],
      ],
    ])('refuses a child caller asking for %s with 403 instance_not_authorized', async (_name, ids, refused) => {
      const res = await search(t.url, token, { instance_ids: ids(w), module: 'flows' });
      expect(res.status).toBe(403);
      const n = refused(w).length;
      expect(res.body).toEqual(
        nested(403, 'authorization_error', `Not authorized for ${n} of the requested instances`, {
          reason: 'instance_not_authorized',
          unauthorized_instance_ids: refused(w),
        }),
      );
    });

    it("refuses an MSP caller another tree's instances", async () => {
      const res = await search(t.url, w.tree.mspCaller.token, { instance_ids: [w.tree.childA.id, w.other.msp.id], module: 'flows' });
      expect(res.status).toBe(403);
      expect(res.body.error.details).toEqual({ reason: 'instance_not_authorized', unauthorized_instance_ids: [w.other.msp.id] });
    });
  });

  describe('authentication and scope', () => {
    it('answers a missing token with a nested 401', async () => {
      const res = await search(t.url, undefined, { instance_ids: [A], module: 'flows' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(nested(401, 'authentication_error', 'Authentication required', { reason: 'missing_token' }));
    });

    it('answers a bad token with a nested 401', async () => {
      const res = await search(t.url, 'not.a.jwt', { instance_ids: [A], module: 'flows' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(nested(401, 'authentication_error', 'Access token is invalid', { reason: 'invalid_token' }));
    });

    it('answers an expired token as wire.md 2.4 shows', async () => {
      const expired = await expiredToken(t.app, A, w.tree.childACaller.clientId);
      const res = await search(t.url, expired, { instance_ids: [A], module: 'flows' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(nested(401, 'authentication_error', 'Access token expired', { reason: 'token_expired' }));
    });

    it('answers a token without the search scope as wire.md 2.4 shows', async () => {
      const caller = await seedCaller(t.app, A, [Scopes.nodeApi, Scopes.deploymentApi]);
      const res = await search(t.url, caller.token, { instance_ids: [A], module: 'flows' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(
        nested(403, 'authorization_error', 'Token is missing the required scope', { reason: 'insufficient_scope', required_scope: 'p.token.scope.search_api' }),
      );
    });

    it('checks the scope before reading the body', async () => {
      const caller = await seedCaller(t.app, A, [Scopes.nodeApi]);
      const res = await search(t.url, caller.token, { nonsense: true });
      expect(res.status).toBe(403);
    });
  });

  describe('bad bodies', () => {
    const base = () => ({ instance_ids: [A], module: 'flows' });
    const cases: Array<[string, () => unknown, string | RegExp, Record<string, unknown>]> = [
      ['an empty body', () => undefined, /module is required/, { field: 'module' }],
      ['no module', () => ({ instance_ids: [A] }), "module is required and must be 'flows'", { field: 'module' }],
      ['another module', () => ({ ...base(), module: 'events' }), "module must be 'flows'", { field: 'module' }],
      ['module as a number', () => ({ ...base(), module: 1 }), "module must be 'flows'", { field: 'module' }],
      ['no instance_ids', () => ({ module: 'flows' }), 'instance_ids is required', { field: 'instance_ids' }],
      ['instance_ids empty', () => ({ ...base(), instance_ids: [] }), /non-empty array/, { field: 'instance_ids' }],
      ['instance_ids a string', () => ({ ...base(), instance_ids: A }), /non-empty array/, { field: 'instance_ids' }],
      ['instance_ids with a number', () => ({ ...base(), instance_ids: [A, 5] }), /non-empty strings/, { field: 'instance_ids' }],
      ['instance_ids with an empty string', () => ({ ...base(), instance_ids: [''] }), /non-empty strings/, { field: 'instance_ids' }],
      ['an unknown key', () => ({ ...base(), sizee: 10 }), /Unknown field 'sizee'/, { field: 'sizee' }],
      ['sentence a number', () => ({ ...base(), sentence: 5 }), 'sentence must be a string', { field: 'sentence' }],
      ['sort an object', () => ({ ...base(), sort: { field: 'bytes' } }), /sort must be an array/, { field: 'sort' }],
      ['sort without field', () => ({ ...base(), sort: [{ order: 'asc' }] }), /sort field must be a string/, { field: 'sort[0].field' }],
      ['sort on an unknown field', () => ({ ...base(), sort: [{ field: 'nope' }] }), /unknown sort field 'nope'/, { field: 'sort[0].field' }],
      ['sort order up', () => ({ ...base(), sort: [{ field: 'bytes', order: 'up' }] }), /asc' or 'desc/, { field: 'sort[0].order' }],
      ['sort a list of strings', () => ({ ...base(), sort: ['bytes'] }), /sort items must be objects/, { field: 'sort[0]' }],
      [
        'sort order in a list',
        () => ({ ...base(), sort: [{ field: 'bytes', order: ['asc'] }] }),
        "sort[0].order must be 'asc' or 'desc'",
        { field: 'sort[0].order' },
      ],
      [
        'a sort item with another key',
        () => ({ ...base(), sort: [{ field: 'bytes', missing: 'first' }] }),
        /Unknown field 'missing' in sort\[0\]/,
        { field: 'sort[0].missing' },
      ],
      ['a field of 257 characters', () => ({ ...base(), fields: ['src.ip', 'a'.repeat(257)] }), /at most 256 characters/, { field: 'fields[1]' }],
      [
        '513 fields',
        () => ({ ...base(), fields: Array.from({ length: 512 }, (_, i) => `f${i}.a.b.c`).concat('one.more') }),
        /at most 512 fields/,
        { field: 'fields' },
      ],
      [
        'fields of 2,050 segments in all',
        () => ({ ...base(), fields: Array.from({ length: 410 }, (_, i) => `f${i}.a.b.c.d`) }),
        /at most 2048 dotted path segments/,
        { field: 'fields' },
      ],
      [
        'a key 5,000 characters long',
        () => ({ ...base(), ['k'.repeat(5_000)]: 1 }),
        `Unknown field '${'k'.repeat(79)}…'; the body may have instance_ids, module, sentence, start, end, sort, fields, size, page, timeseries`,
        { field: `${'k'.repeat(79)}…` },
      ],
      ['fields a string', () => ({ ...base(), fields: 'src.ip' }), /fields must be an array/, { field: 'fields' }],
      ['fields with a number', () => ({ ...base(), fields: [1] }), /non-empty strings/, { field: 'fields[0]' }],
      ['start a string', () => ({ ...base(), start: '2025-01-01' }), /start must be an object/, { field: 'start' }],
      ['start empty', () => ({ ...base(), start: {} }), /exactly one of/, { field: 'start' }],
      ['start with two forms', () => ({ ...base(), start: { now: true, relative: { value: 1, unit: 'hours' } } }), /exactly one of/, { field: 'start' }],
      ['now false', () => ({ ...base(), end: { now: false } }), /end.now must be true/, { field: 'end.now' }],
      ['relative value 0', () => ({ ...base(), start: { relative: { value: 0, unit: 'hours' } } }), /positive integer/, { field: 'start.relative.value' }],
      [
        'relative unit years',
        () => ({ ...base(), start: { relative: { value: 1, unit: 'years' } } }),
        /minutes, hours, days, weeks/,
        { field: 'start.relative.unit' },
      ],
      [
        'relative unit constructor',
        () => ({ ...base(), start: { relative: { value: 1, unit: 'constructor' } } }),
        /minutes, hours, days, weeks/,
        { field: 'start.relative.unit' },
      ],
      [
        'a relative start before year 0001',
        () => ({ ...base(), start: { relative: { value: 1e12, unit: 'days' } } }),
        /reaches before year 0001/,
        { field: 'start.relative.value' },
      ],
      ['an absolute non-date', () => ({ ...base(), start: { absolute: { date: 'yesterday' } } }), /not a valid ISO 8601/, { field: 'start.absolute.date' }],
      [
        'an absolute date as a number',
        () => ({ ...base(), start: { absolute: { date: 1700000000000 } } }),
        /ISO 8601 string/,
        { field: 'start.absolute.date' },
      ],
      ['timeseries a string', () => ({ ...base(), timeseries: '5m' }), 'timeseries must be an object', { field: 'timeseries' }],
      ['a timeseries interval of 0', () => ({ ...base(), timeseries: { interval: '0m' } }), /interval/, { field: 'timeseries.interval' }],
      [
        'a timeseries metric of text',
        () => ({ ...base(), timeseries: { interval: '1m', metric: 'sum:app_name' } }),
        /numeric field/,
        { field: 'timeseries.metric' },
      ],
      [
        'too many timeseries buckets',
        () => ({ ...base(), start: { relative: { value: 30, unit: 'days' } }, timeseries: { interval: '1s' } }),
        /at most 10000/,
        { field: 'timeseries.interval' },
      ],
    ];
    it.each(cases)('answers %s with 400 validation_error naming the field', async (_name, body, message, details) => {
      const res = await call(t.url, 'POST', RECORDS, { token, ...(body() === undefined ? {} : { body: body() }) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', message, details));
    });

    it.each([
      ['text that is not JSON', '{"instance_ids": ['],
      ['a JSON string', '"flows"'],
      ['a JSON number', '42'],
      ['null', 'null'],
      ['an array', '[{"instance_ids": ["x"], "module": "flows"}]'],
    ])('answers %s with a nested 400 from the body reader', async (_name, rawBody) => {
      const res = await call(t.url, 'POST', RECORDS, { token, rawBody });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'invalid_json', /^Request body (is not valid JSON|must be a JSON object)$/, {}));
    });

    it('answers another method with a nested 405 naming the one it takes', async () => {
      const res = await call(t.url, 'GET', RECORDS, { token });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body).toEqual(nested(405, 'method_not_allowed', `Use POST on ${RECORDS}`, {}));
    });

    it('reads a JSON body sent with a form content type, as curl -d labels it', async () => {
      const res = await call(t.url, 'POST', RECORDS, {
        token,
        rawBody: JSON.stringify({ ...base(), ...windowOf(w.base), size: 1 }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(200);
      expect(res.body[A]).toMatchObject({ returned: 1, found: 10 });
    });

    it('answers a body over 1 MiB with a nested 413', async () => {
      const res = await call(t.url, 'POST', RECORDS, { token, body: { ...base(), sentence: 'x'.repeat(1024 * 1024) } });
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({ code: 413 });
    });

    it('refuses a sentence longer than 16 KiB', async () => {
      const res = await records({ sentence: `app_name eq ${'x'.repeat(20_000)}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(nested(400, 'validation_error', /longer than/, { field: 'sentence' }));
    });

    it('names every foreign id of a long list', async () => {
      const res = await search(t.url, w.tree.mspCaller.token, {
        module: 'flows',
        instance_ids: Array.from({ length: 101 }, (_, i) => `${w.tree.msp.id}-${i}`),
      });
      expect(res.status).toBe(403);
    });
  });
});
