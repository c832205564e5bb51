import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, seriousAxeViolations, screenshotPath } from '../kit/browser.js';
import { openSignedIn } from '../kit/console-page.js';
import { call, graphql } from '../kit/http.js';
import { type Person, seedPerson } from '../kit/people.js';
import { seedTree } from '../kit/seed.js';

/** The REST token endpoint, as an SDK calls it with the two halves of an access key. */
const exchange = (url: string, accessKey: string) => {
  const dot = accessKey.indexOf('.');
  return call(url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: accessKey.slice(0, dot), client_secret: accessKey.slice(dot + 1) } });
};

/** The shell's tenant switcher (the page's "node_api: Manage the fleet and the tenant…" box is labelled with the word too). */
const tenantSwitch = (page: Page) => page.getByRole('combobox', { name: /^Tenant/ });

describe('the console API clients page in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let admin: Person;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1280, height: 900 })]);
    tree = await seedTree(t.app);
    admin = await seedPerson(t.app, tree.msp.id, 'admin');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("creates a client for the chosen tenant, shows its key once, and revoking it refuses the key and the key's token", async () => {
    const { page, elsewhere, problems } = await openSignedIn(browser, t.url, admin, '/fleet/api-clients');
    await tenantSwitch(page).selectOption(tree.childA.id);
    await page.getByRole('heading', { name: /^API clients of/ }).waitFor();
    // The tree's seeded caller of the child, and only the child's clients.
    const rows = page.locator('table.api-clients tbody tr');
    await expect.poll(() => rows.locator('td:nth-child(2)').allTextContents(), { timeout: 15_000 }).toEqual([tree.childACaller.clientId]);

    await page.getByLabel(/^Description/).fill('  nightly export  ');
    await page.getByLabel('node_api:').check();
    await page.getByRole('button', { name: 'Create API client' }).click();
    const key = page.getByRole('textbox', { name: 'Access key' });
    await key.waitFor({ timeout: 15_000 });
    const accessKey = await key.inputValue();
    expect(accessKey).toMatch(/^cl_[a-z2-7]+\.[A-Za-z0-9_-]{43}$/);
    const row = page.locator('table.api-clients tbody tr', { hasText: 'nightly export' });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      'nightly export',
      accessKey.split('.')[0],
      'search_api, node_api',
      'API',
      expect.any(String),
      'Active',
      'Revoke nightly export',
    ]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-api-clients'), fullPage: true });

    const issued = await exchange(t.url, accessKey);
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    expect((await graphql(t.url, '{ viewerTenant { customerId } }', {}, token)).data).toEqual({ viewerTenant: { customerId: tree.childA.id } });

    // Never shown again: not after a reload, and not in the list.
    await page.reload();
    await row.waitFor({ timeout: 15_000 });
    expect(await page.getByRole('textbox', { name: 'Access key' }).count()).toBe(0);
    expect(await page.content()).not.toContain(accessKey.split('.')[1]);

    await row.getByRole('button', { name: 'Revoke nightly export' }).click();
    await row.getByRole('button', { name: 'Yes, revoke nightly export' }).click();
    // The first view holds the active clients only: the revoked one leaves it, and the view with the revoked ones shows it.
    await row.waitFor({ state: 'detached', timeout: 15_000 });
    await page.getByLabel('Show').selectOption('api');
    await expect.poll(() => row.locator('td:nth-child(6)').textContent(), { timeout: 15_000 }).toMatch(/^Revoked /);
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-api-clients-revoked'), fullPage: true });
    expect(await exchange(t.url, accessKey)).toMatchObject({ status: 401, body: { code: 'invalid_credentials' } });
    expect((await graphql(t.url, '{ viewerTenant { customerId } }', {}, token)).errors?.[0]?.extensions?.code).toBe('authentication_error');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await tenantSwitch(page).selectOption(tree.msp.id);
    await page.close();
  });

  it.each(['viewer', 'analyst'] as const)('gives a %s none of the actions', async (role) => {
    const person = await seedPerson(t.app, tree.msp.id, role);
    const { page } = await openSignedIn(browser, t.url, person, '/fleet');
    await page.getByRole('link', { name: 'API clients' }).click();
    await page.getByText(`Your role, ${role}, may not manage API clients`).waitFor();
    expect(await page.getByRole('button', { name: 'Create API client' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.close();
  });
});
