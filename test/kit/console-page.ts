import { type ConsolePage, type TestBrowser, openConsolePage, signInOnPage } from './browser.js';
import type { Person } from './people.js';

/**
 * A new tab on `path` under /console (every request to another origin refused, as
 * `openConsolePage` does), signed in as `person` through the sign-in page.
 */
export async function openSignedIn(browser: TestBrowser, baseUrl: string, person: Person, path = '/'): Promise<ConsolePage> {
  const opened = await openConsolePage(browser, baseUrl, `/console${path}`);
  const { page, problems } = opened;
  await signInOnPage(page, person.email, person.password);
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
  return opened;
}
