import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { burst, earlyInWindow, expectRateLimited } from '../../test/kit/rate-limits.js';

const START = '/rest/oauth2/device/1.0';

describe('rate limits in embedded mode (one process: counted in memory)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true, defaultRateLimits: true });
  });
  afterAll(() => t?.stop());

  it('refuses the 21st device start of a minute from one address, and purges ended windows', async () => {
    await earlyInWindow();
    await burst(20, (i) => call(t.url, 'POST', START, { body: { hostname: `h${i}`, machine_id: `m${i}` } }));
    expectRateLimited(await call(t.url, 'POST', START, { body: { hostname: 'h', machine_id: 'm' } }), 'address');
    expect((await t.app.db.pool.query('SELECT count(*)::int AS n FROM rate_limit_counters')).rows[0].n).toBe(0);
  });
});
