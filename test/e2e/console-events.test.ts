import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, seriousAxeViolations, screenshotPath } from '../kit/browser.js';
import { openSignedIn } from '../kit/console-page.js';
import { type Person, seedPerson, signedIn } from '../kit/people.js';
import { seedTenant } from '../kit/seed.js';

describe('the console events and automation pages in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let admin: Person;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1280, height: 900 })]);
    admin = await personOfNewTenant('admin');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  // A test that starts from no rules has a tenant of its own: a rule another test left behind
  // (it failed before deleting it) cannot fail it too.
  const personOfNewTenant = async (role: 'admin' | 'viewer') => seedPerson(t.app, (await seedTenant(t.app)).id, role);
  const ruleRow = (page: Page, name: string) => page.locator('table.rules > tbody > tr', { hasText: name }).first();

  it('shows topics and their records: the sign-in just made is there', async () => {
    const { page, elsewhere, problems } = await openSignedIn(browser, t.url, admin, '/events');
    await page.getByRole('link', { name: 'sign_ins' }).click();
    await expect.poll(() => page.locator('table.records tbody tr td:nth-child(2)').allTextContents(), { timeout: 15_000 }).toContain('signed_in');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-events'), fullPage: true });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('creates, edits, disables and enables a rule, shows its runs, and deletes it after asking', async () => {
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/events/automation');
    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Sign-in watch');
    await page.getByLabel('Topic').selectOption('sign_ins');
    await page.getByLabel('signed_in', { exact: true }).check();
    await page.getByLabel('Action').selectOption('collector_update');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await expect.poll(() => ruleRow(page, 'Sign-in watch').textContent(), { timeout: 10_000 }).toMatch(/sign_ins: signed_in.*Update the collector.*on/);

    await page.getByRole('button', { name: 'Edit Sign-in watch' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Sign-in audit');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await ruleRow(page, 'Sign-in audit').waitFor();
    await page.getByRole('button', { name: 'Disable Sign-in audit' }).click();
    await expect.poll(() => ruleRow(page, 'Sign-in audit').locator('td').nth(3).textContent()).toBe('off');
    await page.getByRole('button', { name: 'Enable Sign-in audit' }).click();
    await expect.poll(() => ruleRow(page, 'Sign-in audit').locator('td').nth(3).textContent()).toBe('on');

    // A sign-in elsewhere matches the rule: a run (it names no node, so it fails at once).
    await signedIn(t.url, admin);
    const runs = page.getByRole('button', { name: 'Runs of Sign-in audit' });
    await expect
      .poll(
        async () => {
          if ((await runs.getAttribute('aria-expanded')) === 'true') await runs.click();
          await runs.click();
          return page.locator('table.runs tbody tr td:nth-child(2)').allTextContents();
        },
        // A loaded machine once took longer than 15 s between the sign-in and the run's row.
        { timeout: 30_000 },
      )
      .toEqual([expect.stringMatching(/^(pending|running|retrying|failed)$/)]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-automation'), fullPage: true });

    await page.getByRole('button', { name: 'Delete rule Sign-in audit' }).click();
    await page.getByRole('button', { name: 'Yes, delete rule Sign-in audit' }).click();
    await expect.poll(() => page.getByText('No rules yet.').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a viewer the rules without the actions to change them', async () => {
    const { page } = await openSignedIn(browser, t.url, await personOfNewTenant('viewer'), '/events/automation');
    await page.getByRole('heading', { name: 'Automation rules' }).waitFor();
    await page.getByText('No rules yet.').waitFor();
    expect(await page.getByRole('button', { name: 'New rule' }).count()).toBe(0);
    await page.close();
  });

  it("edits a rule's conditions: adds, changes and removes rows, with the server's refusal beside the row it names", async () => {
    const { page, problems } = await openSignedIn(browser, t.url, await personOfNewTenant('admin'), '/events/automation');
    await page.getByRole('button', { name: 'New rule' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Conditional');
    await page.getByLabel('Topic').selectOption('sign_ins');
    await page.getByLabel('Action').selectOption('collector_update');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    await page.getByLabel('Field 1').fill('method');
    await page.getByLabel('Value 1').fill('password');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    await page.getByLabel('Field 2').fill('role');
    await page.getByLabel('Operator 2').selectOption('in');
    await page.getByLabel('Value 2').fill('admin, analyst');
    await page.getByRole('button', { name: 'Create rule' }).click();
    const conditions = () => ruleRow(page, 'Conditional').locator('td').nth(1).locator('.note').textContent();
    await expect.poll(conditions, { timeout: 10_000 }).toBe('method eq "password"; role in ["admin","analyst"]');

    await page.getByRole('button', { name: 'Edit Conditional' }).click();
    expect(await page.getByLabel('Value 2').inputValue()).toBe('admin, analyst');
    await page.getByLabel('Operator 1').selectOption('gte');
    await page.getByLabel('Value 1').fill('lots');
    await page.getByRole('button', { name: 'Save rule' }).click();
    // Refused: the message shows beside the first condition, whose inputs are marked invalid.
    const refusal = page.getByRole('group', { name: 'Condition 1' }).locator('.condition-problem');
    await expect.poll(() => refusal.textContent(), { timeout: 10_000 }).toContain('match.conditions[0].value must be a number for gte');
    expect(await page.getByLabel('Value 1').getAttribute('aria-invalid')).toBe('true');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-automation-conditions'), fullPage: true });

    await page.getByLabel('Value 1').fill('2');
    await page.getByRole('button', { name: 'Remove condition 2' }).click();
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(conditions, { timeout: 10_000 }).toBe('method gte 2');

    await page.getByRole('button', { name: 'Edit Conditional' }).click();
    await page.getByRole('button', { name: 'Remove condition 1' }).click();
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => ruleRow(page, 'Conditional').locator('td').nth(1).locator('.note').count(), { timeout: 10_000 }).toBe(0);
    await page.getByRole('button', { name: 'Delete rule Conditional' }).click();
    await page.getByRole('button', { name: 'Yes, delete rule Conditional' }).click();
    await expect.poll(() => page.getByText('No rules yet.').count()).toBe(1);
    // The browser logs the refused save; nothing else went wrong.
    expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await page.close();
  });
});
