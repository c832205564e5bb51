import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, seriousAxeViolations, screenshotPath } from '../kit/browser.js';
import { openSignedIn } from '../kit/console-page.js';
import { graphql } from '../kit/http.js';
import { type Person, asPerson, seedPerson, signedIn } from '../kit/people.js';
import { seedCaller, seedTenant } from '../kit/seed.js';
import { Scopes } from '../../src/auth/scopes.js';

const CREATE_PROFILE = 'mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { profileId } } }';

describe('the console audit log page in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let customerId: string;
  let admin: Person;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1300, height: 900 })]);
    customerId = (await seedTenant(t.app)).id;
    admin = await seedPerson(t.app, customerId, 'admin');
    // A person who named themself, and a script that created a profile and was refused another.
    const cookie = await signedIn(t.url, admin);
    await asPerson(t.url, cookie, 'mutation { setMyName(name: "Ada Admin") { name } }');
    const script = await seedCaller(t.app, customerId, [Scopes.nodeApi]);
    await t.app.db.prisma.apiClient.update({ where: { id: script.clientId }, data: { description: 'nightly profile sync' } });
    await graphql(t.url, CREATE_PROFILE, { input: { customerId, name: 'Audited profile' } }, script.token);
    await graphql(t.url, CREATE_PROFILE, { input: { customerId: 'cus_elsewhere', name: 'Refused' } }, script.token);
    await t.app.services.audit.flush();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('shows who changed what, by name, filters by who and result, and finds no serious accessibility problem', async () => {
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: /^Audit log of/ }).waitFor();
    const rows = page.locator('table.audit tbody tr');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    const text = await rows.allTextContents();
    expect(text.some((row) => row.includes('Ada Admin') && row.includes('setMyName') && row.includes('Done'))).toBe(true);
    expect(text.some((row) => row.includes('nightly profile sync') && row.includes('createProfile') && row.includes('Done'))).toBe(true);
    expect(text.some((row) => row.includes('nightly profile sync') && row.includes('Refused: unauthorized'))).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-audit'), fullPage: true });

    await page.getByLabel('Who').selectOption('CLIENT');
    await page.getByLabel('Result').selectOption('error');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(async () => (await rows.allTextContents()).length, { timeout: 15_000 }).toBe(1);
    expect(await rows.first().textContent()).toContain('Refused: unauthorized');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('is for admins only: an analyst has no link, and the page says why', async () => {
    const analyst = await seedPerson(t.app, customerId, 'analyst');
    const { page } = await openSignedIn(browser, t.url, analyst, '/audit');
    await page.getByText('Only admins read the audit log.').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await page.close();
  });
});
