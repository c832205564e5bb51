import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, screenshotPath } from '../kit/browser.js';

describe('the API reference page (/rest/docs) in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let context: BrowserContext;

  beforeAll(async () => {
    browser = await openBrowser({ width: 1200, height: 900 });
    context = browser.context;
    t = await startTestApp();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('renders every path from this server alone: no request leaves its origin', async () => {
    const elsewhere: string[] = [];
    const problems: string[] = [];
    // Anything bound for another origin is recorded and refused, so a page that needs the network fails here.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${t.url}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const response = await page.goto(`${t.url}/rest/docs`);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 20_000 }).toBeGreaterThan(40);
    expect(await page.locator('.opblock-summary-path', { hasText: '/rest/nodes/1.0/{node_id}/diagnostics' }).count()).toBe(1);
    expect(await page.locator('.opblock-summary-path', { hasText: '/search/records/1.0' }).count()).toBe(1);
    // Opening an operation shows its parameters from the document.
    await page.locator('.opblock-summary-path', { hasText: '/rest/investigations/1.0/{id}' }).click();
    await expect.poll(() => page.locator('.parameters').first().textContent()).toContain('id');
    await page.screenshot({ path: screenshotPath('api-reference') });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
