import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';
import type { Person } from './people.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Where the browser tests write screenshots for a reviewer: `SCREENSHOT_DIR`, else a temporary directory. */
export const screenshotPath = (name: string) => join(process.env.SCREENSHOT_DIR ?? tmpdir(), `${name}.png`);

export interface ConsolePage {
  page: Page;
  /** Requests to other origins, every one refused. */
  elsewhere: string[];
  /** Page errors and console errors. */
  problems: string[];
}

/**
 * A new tab on `path` under /console, every request to another origin refused, signed in as
 * `person` through the sign-in page (the browser's earlier cookies cleared first).
 */
export async function openSignedIn(browser: TestBrowser, baseUrl: string, person: Person, path = '/'): Promise<ConsolePage> {
  await browser.context.clearCookies();
  const elsewhere: string[] = [];
  const problems: string[] = [];
  const page = await browser.context.newPage();
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${baseUrl}/`)) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.goto(`${baseUrl}/console${path}`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const signOut = page.getByRole('button', { name: 'Sign out' });
  // The sign-in answer can fail on `user.customer` (resolved before the new session is in force) while
  // the cookie is set: the reloaded page then finds the person by `me`.
  await Promise.race([signOut.waitFor({ timeout: 20_000 }), page.getByText('Authentication required').waitFor({ timeout: 20_000 })]);
  if (!(await signOut.isVisible())) {
    await page.reload();
    problems.length = 0;
  }
  await signOut.waitFor({ timeout: 20_000 }).catch(async (error: Error) => {
    throw new Error(`not signed in: ${error.message}; the page says: ${await page.locator('main').textContent()}; ${problems.join('; ')}`);
  });
  return { page, elsewhere, problems };
}

/** axe-core's serious and critical violations on the page as it stands (evaluated over DevTools: the CSP does not govern it). */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const { violations } = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
  return violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
}
