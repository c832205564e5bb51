import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { base32Decode, hotp, totpStep } from '../../src/modules/users/totp.js';
import { type ConsolePage, type TestBrowser, openBrowser, openConsolePage, seriousAxeViolations, signInOnPage, tabTo, screenshotPath } from '../kit/browser.js';
import { PASSWORD, asPerson, linkToken, seedPerson, signedIn } from '../kit/people.js';
import { seedTenant } from '../kit/seed.js';

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

  /** Opens /console, signed out, and waits for the sign-in page. */
  async function open(): Promise<ConsolePage> {
    const opened = await openConsolePage(browser, t.url);
    await opened.page.getByRole('heading', { name: 'Sign in' }).waitFor({ timeout: 20_000 });
    return opened;
  }

  it('renders the shell and the sign-in page from this server alone, within the download budget', async () => {
    const { page, requested, elsewhere, problems } = await open();
    await expect.poll(() => page.locator('.shell-header').textContent()).toContain('Breach detection');
    expect(await page.getByLabel('Email').count()).toBe(1);
    expect(await page.getByLabel('Password').count()).toBe(1);
    await page.screenshot({ path: screenshotPath('console-sign-in') });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);

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
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(await tabTo(page, '#sign-in-email', 6)).toBe(true);
    await page.keyboard.type('analyst@example.com');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('sign-in-password');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 }).toContain('were not accepted');
    await page.screenshot({ path: screenshotPath('console-sign-in-refused') });
    await page.close();
  });

  it('signs a person in with their password, shows the console, and signs them out', async () => {
    const tenant = await seedTenant(t.app);
    const person = await seedPerson(t.app, tenant.id, 'analyst');
    const { page, problems } = await open();
    await signInOnPage(page, person.email, person.password);
    await page.getByRole('heading', { name: 'Investigations' }).waitFor({ timeout: 10_000 });
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Investigations' }).getAttribute('aria-current')).toBe('page');
    expect(await page.locator('.shell-person').textContent()).toContain(person.email);
    const cookies = await browser.context.cookies(t.url);
    expect(cookies.find((c) => c.name === 'bd_session')?.httpOnly).toBe(true);
    await page.screenshot({ path: screenshotPath('console-signed-in') });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The session is over at the server: a reload shows the sign-in page again.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('leads back to sign-in, saying why, when the session ends while the page is open', async () => {
    const tenant = await seedTenant(t.app);
    const person = await seedPerson(t.app, tenant.id, 'viewer');
    const { page } = await open();
    await signInOnPage(page, person.email, person.password);
    await page.getByRole('heading', { name: 'Investigations' }).waitFor({ timeout: 10_000 });
    const session = (await browser.context.cookies(t.url)).find((c) => c.name === 'bd_session')!;
    // Ended elsewhere (another tab, an admin): the page's next request is refused.
    expect((await asPerson(t.url, `bd_session=${session.value}`, 'mutation { signOut }')).data.signOut).toBe(true);
    await page.locator('.shell-person a').click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor({ timeout: 10_000 });
    expect(await page.getByRole('alert').first().textContent()).toBe('Your session has ended. Sign in again.');
    await page.close();
  });

  it('asks for the authenticator code when the person has two-factor sign-in', async () => {
    const tenant = await seedTenant(t.app);
    const person = await seedPerson(t.app, tenant.id, 'viewer');
    const cookie = await signedIn(t.url, person);
    const { secret } = (await asPerson(t.url, cookie, 'mutation { startTotpEnrolment { secret } }')).data.startTotpEnrolment;
    const code = (step = 0n) => hotp(base32Decode(secret), totpStep(Date.now()) + step);
    expect((await asPerson(t.url, cookie, 'mutation($c: String!) { confirmTotpEnrolment(code: $c) }', { c: code() })).data.confirmTotpEnrolment).toHaveLength(
      10,
    );

    const { page } = await open();
    await signInOnPage(page, person.email, person.password);
    const codeField = page.getByLabel(/Code from your authenticator app/);
    await codeField.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('sign-in-code');
    await page.screenshot({ path: screenshotPath('console-sign-in-code') });
    // The next step's code: the one confirming the enrolment is spent (docs/users.md).
    await codeField.fill(code(1n));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Investigations' }).waitFor({ timeout: 10_000 });
    await page.close();
  });

  it('sets a password from a link whose token stays in the page, then signs in with it', async () => {
    const tenant = await seedTenant(t.app);
    const email = `new-${Date.now()}@example.com`;
    const { link } = await t.app.services.users.createForOperator({ customerId: tenant.id, email, role: 'viewer' });
    const token = linkToken(link.url);
    const { page, requested, problems } = await openConsolePage(browser, t.url, `/console/set-password#token=${token}`);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor({ timeout: 20_000 });
    // Read once, then wiped from the address bar (and so from history and any later Referer).
    expect(page.url()).toBe(`${t.url}/console/set-password`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByLabel('New password').fill('short');
    await page.getByLabel('The same password again').fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    // The browser's own check holds it back: at least 12 characters.
    expect(await page.getByLabel('New password').evaluate((input: HTMLInputElement) => input.validity.tooShort || input.validity.valid === false)).toBe(true);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password set' }).waitFor();
    await page.screenshot({ path: screenshotPath('console-set-password') });
    expect(requested.filter((url) => url.includes(token))).toEqual([]);
    expect(problems).toEqual([]);

    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInOnPage(page, email, PASSWORD);
    await page.getByRole('heading', { name: 'Investigations' }).waitFor({ timeout: 10_000 });
    await page.close();

    // A spent link says so and what to do.
    const again = await openConsolePage(browser, t.url, `/console/set-password#token=${token}`);
    await again.page.getByLabel('New password').fill(PASSWORD);
    await again.page.getByLabel('The same password again').fill(PASSWORD);
    await again.page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => again.page.getByRole('alert').textContent()).toContain('Ask an admin');
    await again.page.close();
  });
});
