import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedInvestigation } from '../../src/modules/investigations/investigations.fixtures.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, openConsolePage, seriousAxeViolations, signInOnPage, tabTo, screenshotPath } from '../kit/browser.js';
import { type Person, seedPerson } from '../kit/people.js';
import { graphql } from '../kit/http.js';
import { seedCaller, seedTenant } from '../kit/seed.js';

/** Investigations and their triage in the console, against a real server with planted investigations. */
describe('the console investigations pages in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let customerId: string;
  let analyst: Person;
  let viewer: Person;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1400, height: 1000 })]);
    customerId = (await seedTenant(t.app)).id;
    [analyst, viewer] = await Promise.all([seedPerson(t.app, customerId, 'analyst'), seedPerson(t.app, customerId, 'viewer')]);
    for (const source of ['10.20.1.1', '10.20.1.2']) await seedInvestigation(t.app.db.prisma, customerId, { source });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** An investigation written as a detection run writes one, and its event, which the list listens for. */
  async function plant(source: string): Promise<string> {
    const id = await seedInvestigation(t.app.db.prisma, customerId, { source, severity: 90 });
    await t.app.services.events.record({ customerId, topic: 'investigations', kind: 'investigation_opened', subject: id, data: { id } });
    return id;
  }

  async function signedInPage(person: Person, path: string): Promise<Page> {
    const { page } = await openConsolePage(browser, t.url, path);
    await signInOnPage(page, person.email, person.password);
    await page.locator('.shell-person').waitFor({ timeout: 20_000 });
    return page;
  }

  const rowOf = (page: Page, source: string) => page.locator('table.investigations tbody tr', { hasText: source });
  /** A person's name as the console shows it to analysts and viewers: their email's local part. */
  const nameOf = (person: Person) => person.email.split('@')[0]!;

  it('shows a planted investigation live, is answered "authorized", leaves the open list and shows its suppression', async () => {
    // The list opens on the open investigations (any triage status but RESOLVED).
    const page = await signedInPage(analyst, '/console/investigations');
    await rowOf(page, '10.20.1.1').waitFor();
    expect(await page.locator('select[name="triageStatus"]').inputValue()).toBe('open');
    expect(await page.locator('table.investigations thead').textContent()).toMatch(/Severity.*Detector.*Verdict.*Source.*Destination.*Triage.*Assignee/);
    expect(await seriousAxeViolations(page)).toEqual([]);
    // The keyboard reaches the filters and the first investigation.
    expect(await tabTo(page, 'select[name="triageStatus"]')).toBe(true);
    expect(await tabTo(page, 'table.investigations tbody a')).toBe(true);

    // Planted after the page loaded: it appears without a reload.
    await page.evaluate(() => ((window as any).notReloaded = true));
    await plant('10.66.6.6');
    await rowOf(page, '10.66.6.6').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true);
    expect(await rowOf(page, '10.66.6.6').textContent()).toContain('New');
    await page.screenshot({ path: screenshotPath('console-investigations'), fullPage: true });

    await rowOf(page, '10.66.6.6').getByRole('link').click();
    await page.getByRole('heading', { name: 'Triage' }).waitFor();
    for (const section of ['Verdict', 'Key findings', 'Provenance', 'Open questions', 'Recommended actions', 'History']) {
      expect(await page.getByRole('heading', { name: section, exact: true }).count(), section).toBe(1);
    }
    expect(await page.locator('.lineage .leg').count()).toBeGreaterThan(0);
    expect(await page.locator('.leg-stage').first().textContent()).toBe('Access');
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(await tabTo(page, 'input[name="answer"]', 80)).toBe(true);

    await page.getByRole('radio', { name: /^Authorized/ }).check();
    await page.getByLabel(/^Note/).fill('the nightly backup to our provider');
    await page.getByRole('button', { name: 'Record answer' }).click();
    await expect.poll(() => page.locator('.triage .facts').textContent(), { timeout: 10_000 }).toContain('Resolved — Authorized');
    const suppression = page.getByRole('region', { name: 'Suppression' });
    await expect.poll(() => suppression.textContent(), { timeout: 10_000 }).toContain('In force');
    expect(await suppression.textContent()).toContain('the nightly backup to our provider');
    expect(await page.locator('.history').textContent()).toMatch(/answered authorized.*moved it from new to resolved/s);

    await page.getByLabel('Add a comment').fill('Checked with the backup team.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await expect.poll(() => page.locator('.comments').textContent()).toContain('Checked with the backup team.');
    await page.getByRole('button', { name: 'Assign to me' }).click();
    await expect.poll(() => page.locator('.triage .facts').textContent()).toMatch(/Assigned toYou/);
    await page.screenshot({ path: screenshotPath('console-investigation'), fullPage: true });

    await page.getByRole('link', { name: '← All investigations' }).click();
    await page.goto(`${t.url}/console/investigations`);
    await rowOf(page, '10.20.1.1').waitFor();
    expect(await rowOf(page, '10.66.6.6').count()).toBe(0);
    // Resolved, so outside the default (open) view: "any" status.
    await page.goto(`${t.url}/console/investigations?answer=AUTHORIZED&triageStatus=any`);
    await rowOf(page, '10.66.6.6').waitFor();

    await rowOf(page, '10.66.6.6').getByRole('link').click();
    await page.getByRole('button', { name: 'Revoke suppression' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Suppression' }).textContent()).toContain('Revoked');
    await page.close();
  });

  it('lets a viewer read the triage but offers no control to change it', async () => {
    const id = await plant('10.77.7.7');
    const page = await signedInPage(viewer, `/console/investigations/${id}`);
    await page.getByRole('heading', { name: 'Triage' }).waitFor();
    expect(await page.locator('.triage').textContent()).toContain('Your role (viewer) can read the triage but not change it');
    for (const control of ['Record answer', 'Change status', 'Assign to me', 'Comment']) {
      expect(await page.getByRole('button', { name: control, exact: true }).count(), control).toBe(0);
    }
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-investigation-viewer'), fullPage: true });
    await page.close();
  });

  it('lets an admin assign an investigation to an analyst, named by email in the detail and the list', async () => {
    const id = await plant('10.88.8.8');
    const page = await signedInPage(await seedPerson(t.app, customerId, 'admin'), `/console/investigations/${id}`);
    await page.getByRole('heading', { name: 'Triage' }).waitFor();
    const assignTo = page.getByLabel('Assign to');
    // Offered by name (the email's local part).
    await expect.poll(() => assignTo.locator('option').allTextContents()).toContain(nameOf(analyst));
    // Viewers cannot be assigned, so they are not offered.
    expect(await assignTo.locator('option').allTextContents()).not.toContain(nameOf(viewer));
    await assignTo.selectOption(analyst.userId);
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    await expect.poll(() => page.locator('.triage .facts').textContent()).toContain(`Assigned to${analyst.email}`);
    expect(await page.locator('.history').textContent()).toContain(`assigned it to ${analyst.email}`);
    await page.goto(`${t.url}/console/investigations?sort=assignee`);
    await expect.poll(() => rowOf(page, '10.88.8.8').textContent()).toContain(analyst.email);
    await page.close();
  });

  it("switches an MSP's person to a child tenant, whose investigations alone the list then shows", async () => {
    const msp = await seedTenant(t.app, { msp: true, name: 'The MSP' });
    const child = await seedTenant(t.app, { parentId: msp.id, name: 'The child' });
    await seedInvestigation(t.app.db.prisma, msp.id, { source: '10.1.1.1' });
    await seedInvestigation(t.app.db.prisma, child.id, { source: '10.2.2.2' });
    const page = await signedInPage(await seedPerson(t.app, msp.id, 'analyst'), '/console/investigations');
    await rowOf(page, '10.1.1.1').waitFor();
    expect(await rowOf(page, '10.2.2.2').count()).toBe(0);
    await page.getByLabel('Tenant').selectOption(child.id);
    await rowOf(page, '10.2.2.2').waitFor();
    expect(await rowOf(page, '10.1.1.1').count()).toBe(0);
    await page.screenshot({ path: screenshotPath('console-investigations-child') });
    await page.close();
  });

  it('drops an investigation from the open list, live, once someone else answers it authorized', async () => {
    const id = await plant('10.55.5.5');
    const page = await signedInPage(analyst, '/console/investigations');
    await rowOf(page, '10.55.5.5').waitFor();
    await page.evaluate(() => ((window as any).notReloaded = true));
    const caller = await seedCaller(t.app, customerId);
    const answered = await graphql(t.url, 'mutation ($id: String!) { answerInvestigation(id: $id, answer: AUTHORIZED) { id } }', { id }, caller.token);
    expect(answered.errors).toBeUndefined();
    await expect.poll(() => rowOf(page, '10.55.5.5').count(), { timeout: 10_000 }).toBe(0);
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true);
    // "Resolved" (or "Any") still lists it.
    await page.locator('select[name="triageStatus"]').selectOption('RESOLVED');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => rowOf(page, '10.55.5.5').textContent(), { timeout: 10_000 }).toContain('Resolved');
    expect(page.url()).toContain('triageStatus=RESOLVED');
    await page.close();
  });

  it('lets an analyst assign by name, and shows the name to analysts and viewers in the list and the detail', async () => {
    const id = await plant('10.44.4.4');
    const colleague = await seedPerson(t.app, customerId, 'analyst');
    const page = await signedInPage(analyst, `/console/investigations/${id}`);
    await page.getByRole('heading', { name: 'Triage' }).waitFor();
    const assignTo = page.getByLabel('Assign to');
    await expect.poll(() => assignTo.locator('option').allTextContents()).toContain(nameOf(colleague));
    expect(await assignTo.locator('option').allTextContents()).toContain(`${nameOf(analyst)} (you)`);
    await assignTo.selectOption({ label: nameOf(colleague) });
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    await expect.poll(() => page.locator('.triage .facts').textContent()).toContain(`Assigned to${nameOf(colleague)}`);
    expect(await page.locator('.history').textContent()).toContain(`assigned it to ${nameOf(colleague)}`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.close();

    const asViewer = await signedInPage(viewer, '/console/investigations');
    await expect.poll(() => rowOf(asViewer, '10.44.4.4').textContent(), { timeout: 10_000 }).toContain(nameOf(colleague));
    await rowOf(asViewer, '10.44.4.4').getByRole('link').click();
    await expect.poll(() => asViewer.locator('.triage .facts').textContent()).toContain(`Assigned to${nameOf(colleague)}`);
    // The history names who acted for a viewer too, who may not list the tenant's people.
    expect(await asViewer.locator('.history').textContent()).toContain(`${nameOf(analyst)} assigned it to ${nameOf(colleague)}`);
    await asViewer.close();
  });
});
