import { decodeJwt } from 'jose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, screenshotPath } from '../kit/browser.js';
import { call } from '../kit/http.js';
import { type Person, seedPerson } from '../kit/people.js';
import { seedTree } from '../kit/seed.js';

/** The device side: polls at the advertised interval until it holds a key or gives up. */
async function pollForKey(url: string, deviceCode: string, intervalSeconds: number, timeoutMs = 20_000) {
  const statuses: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await call(url, 'POST', '/rest/oauth2/device/poll/1.0', { body: { device_code: deviceCode } });
    statuses.push(res.body.status);
    if (res.body.access_key || res.body.status !== 'pending') return { statuses, accessKey: res.body.access_key as string | undefined };
    await new Promise((r) => setTimeout(r, intervalSeconds * 1000));
  }
  return { statuses, accessKey: undefined };
}

describe('device approval console in a browser', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let people: { mspAnalyst: Person; childAAnalyst: Person; childBAdmin: Person; childBViewer: Person };
  let browser: TestBrowser;
  let context: BrowserContext;
  const problems: string[] = [];

  const watchProblems = (page: Page) => {
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  };

  beforeAll(async () => {
    browser = await openBrowser();
    context = browser.context;
    t = await startTestApp({ env: { DEVICE_POLL_INTERVAL_SECONDS: '1' } });
    tree = await seedTree(t.app);
    people = {
      mspAnalyst: await seedPerson(t.app, tree.msp.id, 'analyst'),
      childAAnalyst: await seedPerson(t.app, tree.childA.id, 'analyst'),
      childBAdmin: await seedPerson(t.app, tree.childB.id, 'admin'),
      childBViewer: await seedPerson(t.app, tree.childB.id, 'viewer'),
    };
  });

  /** Signs in on the page's form with the keyboard: the labelled fields, then Enter. */
  const signInOn = async (page: Page, person: Person) => {
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByLabel('Password').press('Enter');
  };
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('shows the device, signs an analyst in, approves (recording who), and the device and a second viewer see it live', async () => {
    const grant = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'sensor-берлин-01', machine_id: 'c0ffee-1234' } })).body;
    expect(grant.auth_url).toBe(`${t.url}/console/device?user_code=${grant.user_code}`);
    const device = pollForKey(t.url, grant.device_code, grant.poll_interval);

    // A second tab, never signed in, only watching.
    const watcher = await context.newPage();
    watchProblems(watcher);
    await watcher.goto(grant.auth_url);

    const page = await context.newPage();
    watchProblems(page);
    const response = await page.goto(grant.auth_url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");

    await expect.poll(() => page.locator('#hostname').textContent()).toBe('sensor-берлин-01');
    // The code to compare with the device's screen, shown large; the device code appears nowhere.
    expect(await page.getByLabel('Code', { exact: true }).textContent()).toBe(grant.user_code);
    expect(await page.content()).not.toContain(grant.device_code);
    await expect.poll(() => page.locator('#machine-id').textContent()).toBe('c0ffee-1234');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Waiting for approval');
    await expect.poll(() => page.locator('#live').textContent()).toBe('Status updates live.');
    await expect.poll(() => watcher.getByRole('status').textContent()).toContain('Waiting for approval');
    expect(await page.locator('#decide').isHidden()).toBe(true);
    await page.screenshot({ path: screenshotPath('device-console-signin'), fullPage: true });

    // Keyboard only: type into the labelled fields, submit with Enter.
    await signInOn(page, people.mspAnalyst);
    await expect.poll(() => page.locator('#who-tenant').textContent()).toContain(tree.msp.id);
    expect(await page.locator('#who-person').textContent()).toBe(people.mspAnalyst.email);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('decide-heading');
    // The session is an HttpOnly cookie: nothing a script on the page can read or keep.
    expect(await page.evaluate(() => document.cookie + JSON.stringify(sessionStorage) + JSON.stringify(localStorage))).not.toContain('bd_session');
    const [cookie] = await context.cookies(t.url);
    expect(cookie).toMatchObject({ name: 'bd_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    await page.screenshot({ path: screenshotPath('device-console-pending'), fullPage: true });

    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('approve');
    await page.keyboard.press('Enter');

    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved');
    await expect.poll(() => watcher.getByRole('status').textContent(), { timeout: 5000 }).toContain('Approved');
    expect(await page.getByRole('button', { name: 'Approve device' }).isDisabled()).toBe(true);
    await page.screenshot({ path: screenshotPath('device-console-approved'), fullPage: true });
    const decided = await t.app.db.prisma.deviceAuthorization.findFirstOrThrow({ where: { machineId: 'c0ffee-1234' } });
    expect(decided).toMatchObject({ customerId: tree.msp.id, decidedBy: people.mspAnalyst.userId, decidedByKind: 'user' });

    const { statuses, accessKey } = await device;
    expect(statuses[0]).toBe('pending');
    expect(statuses.at(-1)).toBe('approved');
    expect(accessKey).toMatch(/^cl_[a-z2-7]+\..+$/);
    const dot = accessKey!.indexOf('.');
    const token = await call(t.url, 'POST', '/rest/oauth2/token/1.0', {
      body: { client_id: accessKey!.slice(0, dot), client_secret: accessKey!.slice(dot + 1) },
    });
    expect(decodeJwt(token.body.access_token).aud).toBe(tree.msp.id);

    expect(problems).toEqual([]);
  });

  it('shows a denial made elsewhere live, and says so for an unknown code', async () => {
    const grant = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'h', node_id: 'node-9' } })).body;
    const page = await context.newPage();
    watchProblems(page);
    await page.goto(grant.auth_url);
    await expect.poll(() => page.locator('#node-id').textContent()).toBe('node-9');
    await expect.poll(() => page.locator('#live').textContent()).toBe('Status updates live.');
    await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', { token: tree.childACaller.token, body: { device_code: grant.device_code, action: 'deny' } });
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Denied');
    expect(await page.locator('#signin').isHidden()).toBe(true);

    expect(problems).toEqual([]);

    await page.goto(`${t.url}/console/device?user_code=BBBB-BBBB`);
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'unknown' }).count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toContain('Unknown code');
    // The lookup's GraphQL answer is a 404, which Chromium logs; nothing else may appear.
    expect(problems.filter((p) => !p.includes('status of 404'))).toEqual([]);
  });

  it('warns a signed-in operator when the machine id is already a node of their tenant', async () => {
    problems.length = 0;
    await context.clearCookies();
    const machineId = `enrolled-${Math.random().toString(36).slice(2)}`;
    const first = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'original-host', machine_id: machineId } })).body;
    await call(t.url, 'POST', '/rest/oauth2/device/approve/1.0', { token: tree.childACaller.token, body: { user_code: first.user_code } });
    const key = (await call(t.url, 'POST', '/rest/oauth2/device/poll/1.0', { body: { device_code: first.device_code } })).body.access_key as string;
    const dot = key.indexOf('.');
    const deviceToken = (await t.app.services.auth.issueToken(key.slice(0, dot), key.slice(dot + 1))).access_token;
    const node = await t.app.services.nodes.register((await t.app.services.auth.authenticate(`Bearer ${deviceToken}`))!, {
      machineId,
      hostname: 'original-host',
    });

    const second = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'impostor', machine_id: machineId } })).body;
    const page = await context.newPage();
    watchProblems(page);
    await page.goto(second.auth_url);
    await expect.poll(() => page.getByLabel('Code', { exact: true }).textContent()).toBe(second.user_code);
    // Signed out, nothing is said about any tenant's nodes.
    expect(await page.locator('#enrolled-warning').isHidden()).toBe(true);
    await signInOn(page, people.childAAnalyst);
    const warning = page.getByRole('alert').filter({ hasText: 'already enrolled' });
    await expect.poll(() => warning.count()).toBe(1);
    expect(await warning.textContent()).toContain(node.id);
    expect(await warning.textContent()).toContain('original-host');
    expect(await warning.textContent()).toContain(machineId);
    await page.screenshot({ path: screenshotPath('device-console-already-enrolled'), fullPage: true });

    // Another tenant has no such node: no warning there.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInOn(page, people.childBAdmin);
    await expect.poll(() => page.locator('#who-tenant').textContent()).toContain(tree.childB.id);
    expect(await page.locator('#enrolled-warning').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });

  it('lets a viewer look but not decide, and says whom to ask', async () => {
    problems.length = 0;
    await context.clearCookies();
    const grant = (await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'viewer-sees', machine_id: 'viewer-sees-1' } })).body;
    const page = await context.newPage();
    watchProblems(page);
    await page.goto(grant.auth_url);
    await expect.poll(() => page.locator('#hostname').textContent()).toBe('viewer-sees');
    await page.getByLabel('Email').fill(people.childBViewer.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByLabel('Password').press('Enter');
    await expect.poll(() => page.locator('#signin-error').textContent()).toBe('The email or password is wrong');
    await signInOn(page, people.childBViewer);
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'may look but not decide' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve device' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Deny' }).isDisabled()).toBe(true);
    expect(await page.getByRole('status').textContent()).toContain('Waiting for approval');
    // The wrong password's answer is a 401, which Chromium logs; nothing else may appear.
    expect(problems.filter((p) => !p.includes('status of 401'))).toEqual([]);
  });
});
