import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call, graphql } from '../../test/kit/http.js';
import { burst, earlyInWindow, expectRateLimited } from '../../test/kit/rate-limits.js';
import { seedCaller, seedTenant } from '../../test/kit/seed.js';
import { addressKey, clientAddress } from './client-address.js';

const TOKEN = '/rest/oauth2/token/1.0';
const START = '/rest/oauth2/device/1.0';
const INFO = '/rest/oauth2/device/approve/1.0';
const POLL = '/rest/oauth2/device/poll/1.0';

describe('rate limits of the anonymous endpoints, with the documented defaults', () => {
  let t: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ defaultRateLimits: true });
    // A second server process on the same database: the limits are shared, not per process.
    second = await startTestApp({ defaultRateLimits: true, databaseUrl: t.config.databaseUrl });
  });
  afterAll(async () => {
    await second?.stop();
    await t?.stop();
  });

  it('has the documented defaults', () => {
    expect(t.config.rateLimits).toEqual({
      windowSeconds: 60,
      doors: {
        token: { perAddress: 120, perClient: 30 },
        device_start: { perAddress: 20, perClient: 0 },
        device_lookup: { perAddress: 30, perClient: 0 },
        device_poll: { perAddress: 300, perClient: 0 },
        sign_in: { perAddress: 30, perClient: 0 },
      },
    });
  });

  it('token: 30 a minute per client_id, then 120 a minute per address, each refused with 429 and Retry-After', async () => {
    const tenant = await seedTenant(t.app);
    const victim = await seedCaller(t.app, tenant.id);
    await earlyInWindow();
    // Guessing one client's secret: the 31st guess is refused, even with the right secret.
    await burst(30, (i) => call((i % 2 ? second : t).url, 'POST', TOKEN, { body: { client_id: victim.clientId, client_secret: `guess-${i}` } }));
    expectRateLimited(await call(t.url, 'POST', TOKEN, { body: { client_id: victim.clientId, client_secret: victim.clientSecret } }), 'client_id');
    // The same address naming other clients: up to 120 requests in all, then the address is refused.
    await burst(89, (i) => call(t.url, 'POST', TOKEN, { body: { client_id: `cl_other${i}`, client_secret: 'x' } }));
    expectRateLimited(await call(second.url, 'POST', TOKEN, { body: { client_id: 'cl_fresh', client_secret: 'x' } }), 'address');
    // GraphQL is the same door, with the same status and Retry-After.
    const viaGraphql = await call(t.url, 'POST', '/graphql', {
      body: { query: 'mutation { issueToken(clientId: "cl_a", clientSecret: "b") { accessToken } }' },
    });
    expect(viaGraphql.status).toBe(429);
    expect(Number(viaGraphql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(viaGraphql.body.errors?.[0].extensions?.code).toBe('rate_limited');
  });

  it('device start: 20 a minute per address, across processes and over GraphQL', async () => {
    await earlyInWindow();
    await burst(20, (i) => call((i % 2 ? second : t).url, 'POST', START, { body: { hostname: `h${i}`, machine_id: `m${i}` } }));
    expectRateLimited(await call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: 'm' } }), 'address');
    const viaGraphql = await graphql(second.url, 'mutation { startDeviceAuthorization(hostname: "h", machineId: "m") { userCode } }');
    expect(viaGraphql.errors?.[0].extensions?.code).toBe('rate_limited');
    // X-Forwarded-For is the client's own word unless TRUSTED_PROXIES says otherwise.
    expectRateLimited(
      await call(second.url, 'POST', START, { headers: { 'x-forwarded-for': '203.0.113.9' }, body: { hostname: 'h', machine_id: 'm' } }),
      'address',
    );
    // A process that has seen the door shut keeps it shut without asking the database again.
    const hits = async () => (await t.app.db.pool.query(`SELECT hits FROM rate_limit_counters WHERE bucket LIKE 'device_start:a:%'`)).rows[0].hits;
    const before = await hits();
    for (let i = 0; i < 5; i++) expectRateLimited(await call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: 'm' } }), 'address');
    expect(await hits()).toBe(before);
  });

  it('device lookups (info, approve, subscription): 30 a minute per address, so user codes cannot be guessed', async () => {
    await earlyInWindow();
    const consonants = 'BCDFGHJKLMNPQRSTVWXZ';
    const guess = (i: number) => `${consonants[i % 20]}${consonants[Math.floor(i / 20) % 20]}BB-BBBB`;
    await burst(30, (i) => call(t.url, 'GET', `${INFO}?user_code=${guess(i)}`));
    expectRateLimited(await call(t.url, 'GET', `${INFO}?user_code=${guess(31)}`), 'address');
    const caller = await seedCaller(t.app, (await seedTenant(t.app)).id);
    expectRateLimited(await call(t.url, 'POST', INFO, { token: caller.token, body: { user_code: guess(32) } }), 'address');
    const viaGraphql = await graphql(second.url, `query { deviceAuthorization(userCode: "${guess(33)}") { status } }`);
    expect(viaGraphql.errors?.[0].extensions?.code).toBe('rate_limited');
  });

  it('device polls: 300 a minute per address', async () => {
    await earlyInWindow();
    await burst(300, (i) => call((i % 2 ? second : t).url, 'POST', POLL, { body: { device_code: `unknown-${i}` } }));
    expectRateLimited(await call(t.url, 'POST', POLL, { body: { device_code: 'unknown' } }), 'address');
  });
});

describe('rate limits behind a trusted reverse proxy (TRUSTED_PROXIES)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ defaultRateLimits: true, env: { TRUSTED_PROXIES: '192.0.2.1, 127.0.0.1' } });
  });
  afterAll(() => t?.stop());

  it('counts each client the proxy names, and ignores what the client wrote left of it', async () => {
    const start = (forwardedFor: string) =>
      call(t.url, 'POST', START, { headers: { 'x-forwarded-for': forwardedFor }, body: { hostname: 'h', machine_id: 'm' } });
    await earlyInWindow();
    await burst(20, (i) => start(`10.9.9.${i}, 198.51.100.7`));
    expectRateLimited(await start('198.51.100.7'), 'address');
    expectRateLimited(await start('10.0.0.1, 198.51.100.7, 192.0.2.1'), 'address');
    expect((await start('198.51.100.8')).status).toBe(200);
  });
});

describe('the address a request is counted under', () => {
  const request = (peer: string, forwardedFor?: string) => ({
    socket: { remoteAddress: peer } as never,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  const trusted = new Set(['10.0.0.1', '10.0.0.2']);

  it.each([
    ['an untrusted peer, whatever it forwards', request('198.51.100.1', '203.0.113.5'), '198.51.100.1'],
    ['a trusted peer without the header', request('10.0.0.1'), '10.0.0.1'],
    ['a trusted peer: the rightmost untrusted entry', request('::ffff:10.0.0.1', '1.1.1.1, 203.0.113.5, 10.0.0.2'), '203.0.113.5'],
    ['a trusted peer forwarding garbage', request('10.0.0.1', 'not-an-address'), '10.0.0.1'],
    ['a trusted peer forwarding IPv6', request('10.0.0.1', '2001:db8:7:8::1'), '2001:db8:7:8::/64'],
  ])('takes %s', (_name, req, key) => {
    expect(clientAddress(req, trusted)).toBe(key);
  });

  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s counts as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
