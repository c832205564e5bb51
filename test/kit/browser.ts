import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the browser tests write screenshots for a reviewer: `SCREENSHOT_DIR`, else a temporary directory. */
export const screenshotPath = (name: string) => join(process.env.SCREENSHOT_DIR ?? tmpdir(), `${name}.png`);

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium in a throwaway profile, quiet: no background fetches of its own (updates,
 * sync), so every request a test sees comes from the page under test.
 */
export async function openBrowser(viewport = { width: 900, height: 900 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is needed at ${CHROMIUM} for the browser tests: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  const userDataDir = mkdtempSync(join(tmpdir(), 'bd-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface ConsolePage {
  page: Page;
  /** Every URL the page asked for. */
  requested: string[];
  /** Requests to another origin, refused. */
  elsewhere: string[];
  /** Page errors and console errors. */
  problems: string[];
}

/**
 * A new tab on `path` of the server at `baseUrl`, signed out (the profile's cookies cleared), with
 * every request to another origin refused (the console must work with no internet access);
 * records what it asked for and what went wrong. `alsoAllowed`: origins the test itself serves
 * (an OpenID provider on loopback).
 */
export async function openConsolePage(browser: TestBrowser, baseUrl: string, path = '/console', alsoAllowed: string[] = []): Promise<ConsolePage> {
  await browser.context.clearCookies();
  const requested: string[] = [];
  const elsewhere: string[] = [];
  const problems: string[] = [];
  await browser.context.route('**/*', (route) => {
    const url = route.request().url();
    if ([baseUrl, ...alsoAllowed].some((origin) => url.startsWith(`${origin}/`))) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  const page = await browser.context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  const response = await page.goto(baseUrl + path);
  if (response?.status() !== 200) throw new Error(`${path} answered ${response?.status()}`);
  return { page, requested, elsewhere, problems };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations of the page as it is now. */
export async function seriousAxeViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const { violations } = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
  return violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
}

/** Presses Tab until the focused element matches `selector` (at most `limit` presses); whether it got there. */
export async function tabTo(page: Page, selector: string, limit = 40): Promise<boolean> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return true;
  }
  return false;
}

/** Signs in through the console's sign-in page (already open) with a password. */
export async function signInOnPage(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
