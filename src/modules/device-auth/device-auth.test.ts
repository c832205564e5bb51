import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { type Caller, seedCaller, seedTree } from '../../../test/kit/seed.js';

const START = '/rest/oauth2/device/1.0';
const INFO = '/rest/oauth2/device/approve/1.0';
const APPROVE = '/rest/oauth2/device/approve/1.0';
const POLL = '/rest/oauth2/device/poll/1.0';
const TOKEN = '/rest/oauth2/token/1.0';
const iso = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const unique = () => Math.random().toString(36).slice(2);

describe('device authorization over REST', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  const start = async (body: Record<string, unknown> = { hostname: `host-${unique()}`, machine_id: `m-${unique()}` }) => {
    const res = await call(t.url, 'POST', START, { body });
    expect(res.status).toBe(200);
    return res.body as { device_code: string; user_code: string; auth_url: string; poll_interval: number; expires_in: number };
  };
  const approve = (code: string, caller: Caller = tree.mspCaller, action?: unknown) =>
    call(t.url, 'POST', APPROVE, { token: caller.token, body: { device_code: code, ...(action !== undefined && { action }) } });
  const poll = (code: unknown) => call(t.url, 'POST', POLL, { body: { device_code: code } });
  const info = (code: string) => call(t.url, 'GET', `${INFO}?device_code=${encodeURIComponent(code)}`);

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  describe('POST /rest/oauth2/device/1.0 (start)', () => {
    it('answers a 160-bit device code, a user code, the console URL for the user code, the poll interval and the lifetime', async () => {
      const grant = await start({ hostname: 'sensor-1', machine_id: 'machine-1' });
      expect(grant).toEqual({
        device_code: expect.stringMatching(/^[a-z2-7]{32}$/),
        user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
        auth_url: `${t.url}/console/device?user_code=${grant.user_code}`,
        poll_interval: 5,
        expires_in: 600,
      });
    });

    it('stores both codes only as SHA-256', async () => {
      const grant = await start();
      const hash = createHash('sha256').update(grant.device_code).digest();
      const { rows } = await t.app.db.pool.query('SELECT * FROM device_authorizations WHERE code_hash = $1', [hash]);
      expect(rows).toHaveLength(1);
      const stored = JSON.stringify(rows[0]);
      expect(stored).not.toContain(grant.device_code);
      expect(stored).not.toContain(grant.user_code.replace('-', ''));
      expect(rows[0].user_code_hash).toEqual(
        createHash('sha256')
          .update(`user:${grant.user_code.replace('-', '')}`)
          .digest(),
      );
    });

    it('issues a different code every time', async () => {
      const grants = await Promise.all(Array.from({ length: 20 }, () => start()));
      expect(new Set(grants.map((g) => g.device_code)).size).toBe(20);
      expect(new Set(grants.map((g) => g.user_code)).size).toBe(20);
    });

    it('takes node_id as an alias for machine_id (and wins over it)', async () => {
      const grant = await start({ hostname: 'h', node_id: 'node-7', machine_id: 'ignored' });
      const res = await info(grant.device_code);
      expect(res.body).toMatchObject({ node_id: 'node-7', hostname: 'h' });
      const { rows } = await t.app.db.pool.query('SELECT machine_id FROM device_authorizations WHERE node_id = $1', ['node-7']);
      expect(rows[0].machine_id).toBe('node-7');
    });

    it.each([
      ['an empty body', {}],
      ['no machine id', { hostname: 'h' }],
      ['no hostname', { machine_id: 'm' }],
      ['a blank hostname', { hostname: '   ', machine_id: 'm' }],
      ['null machine_id', { hostname: 'h', machine_id: null }],
      ['an empty node_id and no machine_id', { hostname: 'h', node_id: '' }],
    ])('answers 400 `error` naming both fields for %s', async (_name, body) => {
      const res = await call(t.url, 'POST', START, { body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'error', code: 'error', message: 'machine_id (or node_id) and hostname are required' });
    });

    it.each([
      ['a numeric hostname', { hostname: 5, machine_id: 'm' }],
      ['an array machine_id', { hostname: 'h', machine_id: ['m'] }],
      ['an object node_id', { hostname: 'h', node_id: { a: 1 } }],
      ['a boolean hostname', { hostname: true, machine_id: 'm' }],
      ['an oversize hostname', { hostname: 'h'.repeat(256), machine_id: 'm' }],
      ['an oversize machine_id', { hostname: 'h', machine_id: 'm'.repeat(256) }],
      ['an oversize machine_id beside node_id', { hostname: 'h', node_id: 'n', machine_id: 'm'.repeat(256) }],
      ['a hostname with a newline', { hostname: 'a\nb', machine_id: 'm' }],
      ['a machine_id with NUL', { hostname: 'h', machine_id: 'm\u0000' }],
      ['a hostname with a lone surrogate', { hostname: 'a\ud800b', machine_id: 'm' }],
      ['a hostname of 256 characters outside the BMP', { hostname: '🙂'.repeat(256), machine_id: 'm' }],
    ])('answers 400 invalid_request for %s', async (_name, body) => {
      const res = await call(t.url, 'POST', START, { body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request', message: expect.any(String) });
    });

    it('accepts unicode and shows it back verbatim', async () => {
      const grant = await start({ hostname: 'hôte-☃-東京', machine_id: 'mäschine-🙂' });
      expect((await info(grant.device_code)).body).toMatchObject({ hostname: 'hôte-☃-東京', node_id: null });
      // 255 characters, each two UTF-16 units: the limit counts characters.
      const wide = await start({ hostname: '🙂'.repeat(255), machine_id: 'm' });
      expect((await info(wide.device_code)).body).toMatchObject({ hostname: '🙂'.repeat(255) });
    });

    it('refuses malformed JSON and non-object bodies with 400', async () => {
      expect((await call(t.url, 'POST', START, { rawBody: '{"hostname":' })).status).toBe(400);
      expect((await call(t.url, 'POST', START, { rawBody: '["h"]' })).status).toBe(400);
    });
  });

  describe('GET /rest/oauth2/device/approve/1.0 (info)', () => {
    it('describes a pending code', async () => {
      const grant = await start({ hostname: 'web-01', machine_id: 'abc' });
      const res = await info(grant.device_code);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        device_code: grant.device_code,
        node_id: null,
        hostname: 'web-01',
        status: 'pending',
        createdAt: iso,
        expiresAt: iso,
      });
      expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(600_000);
    });

    it('finds a code in any letter case and with surrounding blanks', async () => {
      const grant = await start();
      const res = await info(`  ${grant.device_code.toUpperCase()} `);
      expect(res.status).toBe(200);
      expect(res.body.device_code).toBe(grant.device_code);
    });

    it('answers 400 missing_required_fields without a code', async () => {
      for (const path of [INFO, `${INFO}?device_code=`, `${INFO}?device_code=%20`]) {
        const res = await call(t.url, 'GET', path);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error: 'missing_required_fields', code: 'missing_required_fields' });
        expect(res.body.message).toContain('device_code');
      }
    });

    it.each([
      ['an unknown code', 'a'.repeat(32)],
      ['a unicode code', '☃'.repeat(10)],
      ['a short code', 'x'],
    ])('answers 404 not_found for %s', async (_name, code) => {
      const res = await info(code);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
    });

    it('answers 400 invalid_request for an oversize code', async () => {
      const res = await info('a'.repeat(129));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    });
  });

  describe('POST /rest/oauth2/device/approve/1.0', () => {
    it('answers 401 authentication_error without or with a bad token', async () => {
      const grant = await start();
      const anonymous = await call(t.url, 'POST', APPROVE, { body: { device_code: grant.device_code } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.code).toBe('authentication_error');
      const bad = await call(t.url, 'POST', APPROVE, { token: 'not.a.jwt', body: { device_code: grant.device_code } });
      expect(bad.status).toBe(401);
      expect(bad.body.code).toBe('authentication_error');
      expect((await info(grant.device_code)).body.status).toBe('pending');
    });

    it.each([
      ['no body', undefined],
      ['an empty code', { device_code: '' }],
      ['a null code', { device_code: null }],
    ])('answers 400 missing_required_fields for %s', async (_name, body) => {
      const res = await call(t.url, 'POST', APPROVE, { token: tree.mspCaller.token, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'missing_required_fields', code: 'missing_required_fields' });
    });

    it.each([
      ['a numeric code', { device_code: 5 }],
      ['an object code', { device_code: { $ne: null } }],
      ['a numeric action', { device_code: 'x', action: 1 }],
      ['an array action', { device_code: 'x', action: ['deny'] }],
      ['an oversize code', { device_code: 'a'.repeat(1000) }],
    ])('answers 400 invalid_request for %s', async (_name, body) => {
      const res = await call(t.url, 'POST', APPROVE, { token: tree.mspCaller.token, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    });

    it('answers 404 not_found for an unknown code', async () => {
      const res = await approve('b'.repeat(32));
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
    });

    it.each([
      [undefined, 'approved'],
      [null, 'approved'],
      ['', 'approved'],
      ['approve', 'approved'],
      ['anything', 'approved'],
      ['deny', 'denied'],
      ['DENY', 'denied'],
      [' Deny ', 'denied'],
    ])('action %j → %s', async (action, status) => {
      const grant = await start();
      const res = await approve(grant.device_code, tree.mspCaller, action);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status });
      expect((await info(grant.device_code)).body.status).toBe(status);
    });

    it('answers 409 not_pending with the current status for a decided code', async () => {
      const approved = await start();
      await approve(approved.device_code);
      for (const action of [undefined, 'deny']) {
        const again = await approve(approved.device_code, tree.mspCaller, action);
        expect(again.status).toBe(409);
        expect(again.body).toMatchObject({ error: 'not_pending', code: 'not_pending', current_status: 'approved' });
      }
      const denied = await start();
      await approve(denied.device_code, tree.mspCaller, 'deny');
      const after = await approve(denied.device_code);
      expect(after.status).toBe(409);
      expect(after.body.current_status).toBe('denied');
      expect((await info(denied.device_code)).body.status).toBe('denied');
    });

    it('lets exactly one of many racing decisions win', async () => {
      const grant = await start();
      const callers = [tree.mspCaller, tree.childACaller, tree.childBCaller];
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => approve(grant.device_code, callers[i % 3], i % 2 ? 'deny' : undefined)));
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(11);
      expect((await info(grant.device_code)).body.status).toBe(winners[0].body.status);
    });

    it('refuses collector credentials (403 authorization_error)', async () => {
      const first = await start();
      await approve(first.device_code);
      const key = (await poll(first.device_code)).body.access_key as string;
      const [clientId, clientSecret] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
      const token = (await call(t.url, 'POST', TOKEN, { body: { client_id: clientId, client_secret: clientSecret } })).body.access_token;
      const second = await start();
      const res = await call(t.url, 'POST', APPROVE, { token, body: { device_code: second.device_code } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'authorization_error', code: 'authorization_error' });
      expect((await info(second.device_code)).body.status).toBe('pending');
    });

    it('accepts a token of any scope', async () => {
      const bare = await seedCaller(t.app, tree.childA.id, []);
      const grant = await start();
      expect((await approve(grant.device_code, bare)).body).toEqual({ status: 'approved' });
    });
  });

  describe('the user code (RFC 8628)', () => {
    const infoByUser = (code: string) => call(t.url, 'GET', `${INFO}?user_code=${encodeURIComponent(code)}`);
    const userCodeOf = (authUrl: string) => new URL(authUrl).searchParams.get('user_code')!;

    it('keeps the device code out of auth_url, so a third party holding the link cannot take the key', async () => {
      const grant = await start({ hostname: 'victim', machine_id: `victim-${unique()}` });
      expect(grant.auth_url).not.toContain(grant.device_code);
      // The third party holds only the link: whatever it polls with, there is nothing to take.
      const link = new URL(grant.auth_url);
      const stolen = [userCodeOf(grant.auth_url), userCodeOf(grant.auth_url).replace('-', ''), link.search, grant.auth_url];
      for (const code of stolen) expect((await poll(code)).body).toEqual({ status: 'expired' });
      const approved = await call(t.url, 'POST', APPROVE, { token: tree.childACaller.token, body: { user_code: userCodeOf(grant.auth_url) } });
      expect(approved.body).toEqual({ status: 'approved' });
      for (const code of stolen) expect((await poll(code)).body).toEqual({ status: 'expired' });
      // The device, and only the device, collects its key.
      expect((await poll(grant.device_code)).body).toMatchObject({ status: 'approved', access_key: expect.any(String) });
    });

    it('describes the device by user code in any case and spacing, never revealing the device code', async () => {
      const grant = await start({ hostname: 'web-02', machine_id: 'abc-2' });
      for (const spelling of [grant.user_code, grant.user_code.toLowerCase(), ` ${grant.user_code.replace('-', ' ')} `, grant.user_code.replace('-', '')]) {
        const res = await infoByUser(spelling);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          device_code: null,
          user_code: grant.user_code,
          node_id: null,
          hostname: 'web-02',
          status: 'pending',
          createdAt: iso,
          expiresAt: iso,
        });
      }
    });

    it.each([
      ['an unknown code', 'BBBB-BBBB'],
      ['a code with letters outside the alphabet', 'AEIO-U015'],
      ['a short code', 'BCD'],
      ['the device code in the user code field', 'x'.repeat(32)],
    ])('answers 404 not_found for %s', async (_name, code) => {
      const res = await infoByUser(code);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found' });
    });

    it('approves and denies by user code', async () => {
      const grant = await start();
      const res = await call(t.url, 'POST', APPROVE, { token: tree.mspCaller.token, body: { user_code: grant.user_code.toLowerCase(), action: 'deny' } });
      expect(res.body).toEqual({ status: 'denied' });
      expect((await info(grant.device_code)).body.status).toBe('denied');
      const again = await call(t.url, 'POST', APPROVE, { token: tree.mspCaller.token, body: { user_code: grant.user_code } });
      expect(again.status).toBe(409);
    });
  });

  describe('POST /rest/oauth2/device/poll/1.0', () => {
    it('answers 400 `error` stating that device_code is required', async () => {
      for (const body of [undefined, {}, { device_code: null }, { device_code: '  ' }]) {
        const res = await call(t.url, 'POST', POLL, { body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'device_code is required', code: 'error', message: 'device_code is required' });
      }
    });

    it.each([
      ['a numeric code', 42],
      ['an array code', ['a']],
      ['an oversize code', 'a'.repeat(129)],
    ])('answers 400 invalid_request for %s', async (_name, code) => {
      const res = await poll(code);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    });

    it('answers `expired` for unknown codes, not an error', async () => {
      for (const code of ['c'.repeat(32), 'nope', '東京']) {
        const res = await poll(code);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: 'expired' });
      }
    });

    it('goes pending → approved with a one-time key that yields a token for the approving tenant', async () => {
      const grant = await start({ hostname: 'edge-1', machine_id: 'machine-edge-1' });
      expect((await poll(grant.device_code)).body).toEqual({ status: 'pending' });
      await approve(grant.device_code, tree.childACaller);

      const first = await poll(grant.device_code);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status: 'approved', access_key: expect.stringMatching(/^cl_[a-z2-7]+\.[A-Za-z0-9_-]{43}$/) });
      const second = await poll(grant.device_code);
      expect(second.body).toMatchObject({ status: 'approved' });
      expect(second.body.access_key).toBeUndefined();

      const key = first.body.access_key as string;
      const dot = key.indexOf('.');
      const token = await call(t.url, 'POST', TOKEN, { body: { client_id: key.slice(0, dot), client_secret: key.slice(dot + 1) } });
      expect(token.status).toBe(200);
      const claims = decodeJwt(token.body.access_token);
      expect(claims.aud).toBe(tree.childA.id);
      expect(claims.scopes).toEqual(['p.token.scope.ingest']);

      const { rows: clients } = await t.app.db.pool.query('SELECT customer_id, kind, scopes FROM api_clients WHERE id = $1', [key.slice(0, dot)]);
      expect(clients).toEqual([{ customer_id: tree.childA.id, kind: 'device', scopes: ['p.token.scope.ingest'] }]);
      const { rows: enrolments } = await t.app.db.pool.query('SELECT customer_id, kind, machine_id, node_id FROM enrolment_credentials WHERE client_id = $1', [
        key.slice(0, dot),
      ]);
      expect(enrolments).toEqual([{ customer_id: tree.childA.id, kind: 'device', machine_id: 'machine-edge-1', node_id: null }]);
    });

    it('carries node_id when the device gave one', async () => {
      const grant = await start({ hostname: 'h', node_id: 'node-42' });
      expect((await poll(grant.device_code)).body).toEqual({ status: 'pending', node_id: 'node-42' });
      await approve(grant.device_code);
      const res = await poll(grant.device_code);
      expect(res.body).toMatchObject({ status: 'approved', node_id: 'node-42', access_key: expect.any(String) });
    });

    it('answers denied, with no key, after a denial', async () => {
      const grant = await start();
      await approve(grant.device_code, tree.mspCaller, 'deny');
      const res = await poll(grant.device_code);
      expect(res.body).toMatchObject({ status: 'denied' });
      expect(res.body.access_key).toBeUndefined();
      const { rows } = await t.app.db.pool.query('SELECT count(*)::int AS n FROM api_clients WHERE customer_id = $1 AND kind = $2', [tree.msp.id, 'device']);
      const before = rows[0].n;
      await poll(grant.device_code);
      const { rows: after } = await t.app.db.pool.query('SELECT count(*)::int AS n FROM api_clients WHERE customer_id = $1 AND kind = $2', [
        tree.msp.id,
        'device',
      ]);
      expect(after[0].n).toBe(before);
    });

    it('hands the key to exactly one of many racing polls', async () => {
      const grant = await start();
      await approve(grant.device_code, tree.childBCaller);
      const results = await Promise.all(Array.from({ length: 12 }, () => poll(grant.device_code)));
      expect(results.every((r) => r.status === 200 && r.body.status === 'approved')).toBe(true);
      expect(results.filter((r) => r.body.access_key)).toHaveLength(1);
      const { rows } = await t.app.db.pool.query(
        `SELECT count(*)::int AS n FROM enrolment_credentials e JOIN device_authorizations d ON d.key_client_id = e.client_id
          WHERE d.code_hash = $1`,
        [createHash('sha256').update(grant.device_code).digest()],
      );
      expect(rows[0].n).toBe(1);
    });

    it('asks a device that polls sooner than poll_interval to slow down, keeping the body', async () => {
      const grant = await start();
      const first = await poll(grant.device_code);
      expect(first.body).toEqual({ status: 'pending' });
      expect(first.headers.get('retry-after')).toBeNull();
      const second = await poll(grant.device_code);
      expect(second.status).toBe(200);
      expect(second.body).toEqual({ status: 'pending', slow_down: true });
      expect(second.headers.get('retry-after')).toBe('5');
      expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    });
  });
});

describe('device authorization expiry', () => {
  let t: TestApp;
  let caller: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { DEVICE_CODE_TTL_SECONDS: '1', DEVICE_POLL_INTERVAL_SECONDS: '0' } });
    caller = (await seedTree(t.app)).mspCaller;
  });
  afterAll(() => t.stop());

  it('expires a pending code when its lifetime passes: info, poll and approve all see it', async () => {
    const grant = (await call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: 'm' } })).body;
    expect(grant).toMatchObject({ expires_in: 1, poll_interval: 0 });
    expect((await call(t.url, 'POST', POLL, { body: { device_code: grant.device_code } })).body).toEqual({ status: 'pending' });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(t.url, 'GET', `${INFO}?device_code=${grant.device_code}`)).body.status).toBe('expired');
    expect((await call(t.url, 'POST', POLL, { body: { device_code: grant.device_code } })).body).toEqual({ status: 'expired' });
    const late = await call(t.url, 'POST', APPROVE, { token: caller.token, body: { device_code: grant.device_code } });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'not_pending', current_status: 'expired' });
  });

  it('keeps an approved code approved, and its key collectable, past the lifetime', async () => {
    const grant = (await call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: 'm2' } })).body;
    await call(t.url, 'POST', APPROVE, { token: caller.token, body: { device_code: grant.device_code } });
    await new Promise((r) => setTimeout(r, 1100));
    const res = await call(t.url, 'POST', POLL, { body: { device_code: grant.device_code } });
    expect(res.body).toEqual({ status: 'approved', access_key: expect.any(String) });
  });
});

describe('the scheduled purge', () => {
  let t: TestApp;
  let caller: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { DEVICE_CODE_TTL_SECONDS: '1', PURGE_INTERVAL_SECONDS: '1' } });
    caller = (await seedTree(t.app)).mspCaller;
  });
  afterAll(() => t.stop());

  it('purges expired authorizations on its own schedule, keeping approved ones for a day after expiry', async () => {
    const begin = () => call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: `purge-${unique()}` } }).then((r) => r.body);
    const [pending, denied, approved] = await Promise.all([begin(), begin(), begin()]);
    await call(t.url, 'POST', APPROVE, { token: caller.token, body: { user_code: denied.user_code, action: 'deny' } });
    await call(t.url, 'POST', APPROVE, { token: caller.token, body: { user_code: approved.user_code } });
    const exists = async (grant: { device_code: string }) => {
      const hash = createHash('sha256').update(grant.device_code).digest();
      return (await t.app.db.pool.query('SELECT 1 FROM device_authorizations WHERE code_hash = $1', [hash])).rowCount === 1;
    };
    // No trigger: the purge runs every PURGE_INTERVAL_SECONDS by itself.
    await vi.waitFor(async () => expect([await exists(pending), await exists(denied)]).toEqual([false, false]), { timeout: 10_000, interval: 200 });
    expect(await exists(approved)).toBe(true);
    expect((await call(t.url, 'POST', POLL, { body: { device_code: pending.device_code } })).body).toEqual({ status: 'expired' });
    expect((await call(t.url, 'GET', `${INFO}?user_code=${pending.user_code}`)).status).toBe(404);

    await t.app.db.pool.query(`UPDATE device_authorizations SET expires_at = now() - interval '1 day 1 second' WHERE code_hash = $1`, [
      createHash('sha256').update(approved.device_code).digest(),
    ]);
    await vi.waitFor(async () => expect(await exists(approved)).toBe(false), { timeout: 10_000, interval: 200 });
  });

  it('purges the rate-limit counters of ended windows', async () => {
    await t.app.db.pool.query(
      `INSERT INTO rate_limit_counters (bucket, window_start, hits) VALUES ('token:a:192.0.2.1', now() - interval '2 minutes', 5), ('token:a:192.0.2.2', now() + interval '1 minute', 5)`,
    );
    await vi.waitFor(
      async () => {
        const { rows } = await t.app.db.pool.query(`SELECT bucket FROM rate_limit_counters WHERE bucket LIKE 'token:a:192.0.2.%' ORDER BY bucket`);
        expect(rows.map((r) => r.bucket)).toEqual(['token:a:192.0.2.2']);
      },
      { timeout: 10_000, interval: 200 },
    );
  });
});
