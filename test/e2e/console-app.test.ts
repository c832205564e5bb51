import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser } from '../kit/browser.js';

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir();
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Issue #31's budget for the first load of /console, gzipped. */
const INITIAL_DOWNLOAD_LIMIT = 300 * 1024;

/** The bytes a browser that takes gzip receives for `url`. */
async function gzippedBytes(url: string): Promise<number> {
  const res = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
  expect(res.status, url).toBe(200);
  return Number(res.headers.get('content-length'));
}

describe('the console app (/console) in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1200, height: 900 })]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('serves its page uncached and its hashed assets for a year, under a CSP with no inline code or other origin', async () => {
    const res = await fetch(`${t.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    const page = await res.text();
    expect(page).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const assets = [...page.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/console\/assets\/[\w-]+\.(js|css)$/);
      const file = await fetch(t.url + asset);
      expect(file.headers.get('cache-control'), asset).toBe('public, max-age=31536000, immutable');
      expect(file.headers.get('content-type'), asset).toMatch(/^text\/(javascript|css); charset=utf-8$/);
    }
    // A page of the app is index.html whatever its path, so a link to it can be opened directly.
    expect(await (await fetch(`${t.url}/console/investigations/inv_1`)).text()).toBe(page);
  });

  /** Opens /console with every request to another origin refused; returns what it asked this server for. */
  async function open(): Promise<{ page: Page; requested: string[]; elsewhere: string[]; problems: string[] }> {
    const context = browser.context;
    const requested: string[] = [];
    const elsewhere: string[] = [];
    const problems: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${t.url}/`)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    expect((await page.goto(`${t.url}/console`))?.status()).toBe(200);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor({ timeout: 20_000 });
    return { page, requested, elsewhere, problems };
  }

  it('renders the shell and the sign-in page from this server alone, within the download budget', async () => {
    const { page, requested, elsewhere, problems } = await open();
    await expect.poll(() => page.locator('.shell-header').textContent()).toContain('Breach detection');
    expect(await page.getByLabel('Email').count()).toBe(1);
    expect(await page.getByLabel('Password').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-sign-in.png') });
    expect(elsewhere).toEqual([]);
    // Without the identity work the schema has no `me`: the server's refusal is a 400 the page explains.
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);

    const files = [...new Set(requested)].filter((url) => !url.endsWith('/graphql'));
    let total = 0;
    for (const url of files) total += await gzippedBytes(url);
    console.log(`console: first load ${files.length} files, ${(total / 1024).toFixed(1)} KB gzipped (limit ${INITIAL_DOWNLOAD_LIMIT / 1024} KB)`);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(INITIAL_DOWNLOAD_LIMIT);
    await page.close();
  });

  it('has no serious or critical axe-core violations, and the keyboard reaches the sign-in form', async () => {
    const { page } = await open();
    // Evaluated through the DevTools protocol, which the page's CSP does not govern.
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const { violations } = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
    });
    expect(violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
    const reached: string[] = [];
    for (let i = 0; i < 6 && !reached.includes('sign-in-email'); i++) {
      await page.keyboard.press('Tab');
      reached.push(await focusedId());
    }
    expect(reached).toContain('sign-in-email');
    await page.keyboard.type('analyst@example.com');
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('sign-in-password');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    // The server's refusal (before the identity work: no `signIn`; after it: invalid_credentials) is announced.
    await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 }).not.toBe('');
    await page.screenshot({ path: join(SCREENSHOTS, 'console-sign-in-refused.png') });
    await page.close();
  });
});
