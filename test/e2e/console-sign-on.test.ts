import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OIDC_CALLBACK_PATH } from '../../src/modules/users/oidc.service.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, openConsolePage, screenshotPath } from '../kit/browser.js';
import { type TestOidcProvider, startOidcProvider } from '../kit/oidc-provider.js';
import { asPerson, seedPerson, signedIn } from '../kit/people.js';
import { seedTenant } from '../kit/seed.js';

/** Single sign-on from the console's sign-in page, through a real OpenID provider on loopback, back to the console signed in. */
describe('the console signs a person on with OpenID Connect in a browser', () => {
  let t: TestApp;
  let idp: TestOidcProvider;
  let browser: TestBrowser;
  let customerId: string;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp({ env: { OIDC_ALLOW_PRIVATE_ISSUERS: 'true' } }), openBrowser({ width: 1200, height: 900 })]);
    idp = await startOidcProvider(`${t.url}${OIDC_CALLBACK_PATH}`);
    customerId = (await seedTenant(t.app)).id;
    const admin = await signedIn(t.url, await seedPerson(t.app, customerId, 'admin'));
    const configured = await asPerson(
      t.url,
      admin,
      'mutation($c: String!, $i: SingleSignOnInput!) { configureSingleSignOn(customerId: $c, input: $i) { startUrl } }',
      {
        c: customerId,
        i: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, roleRules: [{ emailDomain: 'example.org', role: 'analyst' }] },
      },
    );
    expect(configured.errors).toBeUndefined();
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.stop();
    await t?.stop();
  });

  it('goes from the customer id to the provider and lands in the console as the new person', async () => {
    idp.accounts.set('olga', { email: 'olga@example.org' });
    const { page, elsewhere } = await openConsolePage(browser, t.url, '/console', [idp.issuer]);
    await page.getByLabel("Your organization's customer id").fill(customerId);
    await page.getByRole('button', { name: 'Continue with your organization' }).click();
    // The provider's own (development) sign-in and consent forms.
    await page.waitForURL((url) => url.href.startsWith(idp.issuer));
    await page.locator('input[name="login"]').fill('olga');
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click(); // consent
    await page.locator('.shell-person').waitFor({ timeout: 20_000 });
    expect(page.url()).toBe(`${t.url}/console/`);
    expect(await page.locator('.shell-person').textContent()).toContain('olga@example.org');
    await page.getByRole('heading', { name: 'Investigations' }).waitFor();
    await page.screenshot({ path: screenshotPath('console-after-sign-on') });
    // The test provider's development forms ask for a web font (refused); nothing else went out.
    expect(elsewhere.filter((url) => !url.startsWith('https://fonts.googleapis.com/'))).toEqual([]);
    await page.close();
  });
});
