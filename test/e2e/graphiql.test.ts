import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, screenshotPath } from '../kit/browser.js';
import { seedCaller, seedTenant } from '../kit/seed.js';

describe('GraphiQL at /graphql, offline', () => {
  let t: TestApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1200, height: 900 })]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const html = { accept: 'text/html,application/xhtml+xml' };

  it("answers a browser with a page naming only this server's files, under a CSP with no inline script", async () => {
    const res = await fetch(`${t.url}/graphql`, { headers: html });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self';/);
    expect(csp).toMatch(/connect-src 'self';/);
    const page = await res.text();
    expect(page).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}/i); // no absolute URL, so no other host
    expect(page).toContain('/rest/oauth2/token/1.0'); // the note on getting a token
    const urls = [...page.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(urls).toHaveLength(4);
    for (const url of urls) {
      expect(url).toMatch(/^\/graphql\/graphiql\/[\w.-]+$/);
      const asset = await fetch(t.url + url, { headers: { 'accept-encoding': 'gzip' } });
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(0);
    }
    expect((await fetch(`${t.url}/graphql/graphiql/nope.js`)).status).toBe(404);
    expect((await fetch(`${t.url}/graphql/graphiql/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it('leaves every other /graphql request to GraphQL', async () => {
    const { token } = await seedCaller(t.app, (await seedTenant(t.app)).id);
    const query = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ viewer { customerId } }')}`, {
      headers: { accept: 'application/json', authorization: `Bearer ${token}` },
    });
    expect(query.status).toBe(200);
    expect(((await query.json()) as any).data.viewer.customerId).toMatch(/^cus_/);
  });

  it('renders in Chromium with every request to another origin refused, and runs a query', async () => {
    const elsewhere: string[] = [];
    const problems: string[] = [];
    const context = browser.context;
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${t.url}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    expect((await page.goto(`${t.url}/graphql`))?.status()).toBe(200);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('.graphiql-query-editor').textContent(), { timeout: 30_000 }).toContain('WhoAmI');
    await page.locator('.graphiql-execute-button').click();
    // No token: the server's own answer, an authentication error, shows in the result pane.
    await expect.poll(() => page.locator('.graphiql-response').textContent(), { timeout: 30_000 }).toContain('"errors"');
    await page.screenshot({ path: screenshotPath('graphiql') });
    expect(elsewhere).toEqual([]);
    // The query without a token is refused with 401, which Chromium logs as a failed resource.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
  });
});
