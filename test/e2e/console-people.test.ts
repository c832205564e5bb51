import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, hotp, totpStep } from '../../src/modules/users/totp.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, openConsolePage, seriousAxeViolations, signInOnPage, tabTo, screenshotPath } from '../kit/browser.js';
import { type Person, seedPerson, signedIn } from '../kit/people.js';
import { seedTenant } from '../kit/seed.js';

/** The people page (admins) and the person's own account, against a real server. */
describe('the console people and account pages in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let customerId: string;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1300, height: 1000 })]);
    customerId = (await seedTenant(t.app)).id;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function signedInPage(person: Person): Promise<Page> {
    const { page } = await openConsolePage(browser, t.url);
    await signInOnPage(page, person.email, person.password);
    await page.getByRole('heading', { name: 'Investigations' }).waitFor({ timeout: 20_000 });
    return page;
  }

  it('lets an admin invite a person (a one-time link to copy), change their role and disable them', async () => {
    const admin = await seedPerson(t.app, customerId, 'admin');
    const page = await signedInPage(admin);
    expect(await tabTo(page, 'nav a[href="/console/people"]')).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /^People of/ }).waitFor();

    const email = `invited-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name (optional)').fill('  Ines Invited ');
    await page.getByLabel('Role', { exact: true }).selectOption('analyst');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = page.getByLabel('One-time link');
    await link.waitFor();
    expect(await link.inputValue()).toMatch(/\/console\/set-password#token=[\w-]+$/);
    const row = page.locator('table.people tbody tr', { hasText: email });
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('Ines Invited');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-people'), fullPage: true });

    await row.getByLabel(`Role of ${email}`).selectOption('viewer');
    await expect.poll(() => row.getByLabel(`Role of ${email}`).inputValue()).toBe('viewer');
    await expect.poll(async () => (await t.app.db.prisma.user.findFirst({ where: { email } }))?.role).toBe('viewer');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: `Disable ${email}` }).click();
    await expect.poll(() => row.textContent()).toContain('disabled');
    await page.close();
  });

  it('hides the people page from an analyst', async () => {
    const analyst = await seedPerson(t.app, customerId, 'analyst');
    const page = await signedInPage(analyst);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).count()).toBe(0);
    await page.close();
  });

  it("turns on the person's two-factor sign-in with recovery codes, and signs out another of their sessions", async () => {
    const person = await seedPerson(t.app, customerId, 'viewer');
    await signedIn(t.url, person); // another browser's session
    const page = await signedInPage(person);
    await page.locator('.shell-person a').click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const sessions = page.getByRole('region', { name: 'Your sessions' }).locator('tbody tr');
    await expect.poll(() => sessions.count()).toBe(2);
    expect(await seriousAxeViolations(page)).toEqual([]);

    // Their name: saved, then shown in the header in place of their email; a bad one is refused and named.
    expect(await page.locator('.shell-person a').textContent()).toBe(person.email);
    await page.getByLabel(/^Your name/).fill('Vera Viewer');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Your name is saved.').waitFor();
    await expect.poll(() => page.locator('.shell-person a').textContent()).toBe('Vera Viewer');
    await page.getByLabel(/^Your name/).fill('Vera\u202eViewer');
    await page.getByRole('button', { name: 'Save name' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Name' }).getByRole('alert').textContent()).toMatch(/name must not contain/);
    expect((await t.app.db.prisma.user.findUniqueOrThrow({ where: { id: person.userId } })).name).toBe('Vera Viewer');

    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = await page.getByLabel('Key').inputValue();
    await page.getByLabel('Code from the app').fill(hotp(base32Decode(secret), totpStep(Date.now())));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByLabel('Recovery codes');
    await codes.waitFor();
    expect((await codes.inputValue()).split('\n')).toHaveLength(10);
    await page.getByText('On: signing in asks for a code').waitFor();
    await page.screenshot({ path: screenshotPath('console-account'), fullPage: true });

    await page.getByRole('button', { name: 'Sign out this session' }).click();
    await expect.poll(() => sessions.count()).toBe(1);
    expect(await sessions.textContent()).toContain('This session');
    await page.close();
  });
});
