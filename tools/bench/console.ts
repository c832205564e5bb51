/**
 * `npm run bench:console`: the console's investigations list in a real browser (headless
 * Chromium, every request to another origin refused) with 10,000 investigations in the tenant:
 * the time from opening /console/investigations to its first page of rows on screen (issue #31's
 * target: ≤ 1 s), then to the last page after a page-number jump. The app is built first, so it
 * measures the code as it is.
 *
 * Environment: BENCH_INVESTIGATIONS (10000), BENCH_RUNS (5). Uses TEST_DATABASE_URL when set,
 * otherwise a throwaway PostgreSQL cluster as the tests do.
 */
import { startTestApp } from '../../test/kit/app.js';
import { openBrowser, openConsolePage, signInOnPage } from '../../test/kit/browser.js';
import { seedPerson } from '../../test/kit/people.js';
import { seedTenant } from '../../test/kit/seed.js';
import { testPostgres } from '../../test/kit/throwaway-postgres.js';
import { investigationRow } from '../../src/modules/investigations/investigations.fixtures.js';
import { buildConsole } from '../build-console.js';
import { median } from './stats.js';

const investigations = Number(process.env.BENCH_INVESTIGATIONS ?? 10_000);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const TARGET_MS = 1000;
const PAGE_SIZE = 50;

await buildConsole();
const postgres = await testPostgres();
const t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
const browser = await openBrowser({ width: 1400, height: 1000 });
try {
  const tenant = await seedTenant(t.app);
  const person = await seedPerson(t.app, tenant.id, 'analyst');
  const kinds = ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'] as const;
  const now = Date.now();
  for (let i = 0; i < investigations; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, investigations - i) }, (_, j) => {
      const n = i + j;
      return investigationRow(tenant.id, {
        detector: kinds[n % kinds.length],
        source: `10.20.${(n >> 8) & 255}.${n & 255}`,
        severity: (n * 37) % 100,
        createdAt: new Date(now - n * 60_000),
      });
    });
    await t.app.db.prisma.investigation.createMany({ data: rows });
  }

  const { page } = await openConsolePage(browser, t.url);
  await signInOnPage(page, person.email, person.password);
  await page.locator('.shell-person').waitFor({ timeout: 20_000 });
  const rows = page.locator('table.investigations tbody tr');
  const pager = page.getByRole('navigation', { name: 'Pages' });

  /** Milliseconds from `start` until a full page of rows and the pager's `text` are on screen. */
  async function timed(start: () => Promise<unknown>, text: string): Promise<number> {
    const started = performance.now();
    await start();
    await page.waitForFunction(
      ([size, expected]) =>
        document.querySelectorAll('table.investigations tbody tr').length >= Number(size) &&
        document.querySelector('nav.pager')?.textContent?.includes(String(expected)),
      [String(Math.min(PAGE_SIZE, investigations)), text],
      { timeout: 30_000 },
    );
    return performance.now() - started;
  }

  const total = `of ${investigations}`;
  const lastPage = Math.ceil(investigations / PAGE_SIZE);
  const first: number[] = [];
  const last: number[] = [];
  await timed(() => page.goto(`${t.url}/console/investigations`), total); // warm-up: code and caches
  for (let run = 0; run < runs; run++) {
    // A fresh load each time: the page, its scripts (from the cache), `me`, then the list.
    first.push(await timed(() => page.goto(`${t.url}/console/investigations`), total));
    last.push(
      await timed(
        async () => {
          await pager.getByLabel('Page').fill(String(lastPage));
          await pager.getByRole('button', { name: 'Go' }).click();
        },
        `${(lastPage - 1) * PAGE_SIZE + 1}–`,
      ),
    );
  }
  if ((await rows.count()) === 0) throw new Error('no rows rendered');
  const show = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`console investigations list: ${investigations} investigations in one tenant, ${runs} runs, headless Chromium`);
  console.log(`  first page rendered (page load to ${PAGE_SIZE} rows): median ${median(first).toFixed(0)} ms [${show(first)}] (target ≤ ${TARGET_MS} ms)`);
  console.log(`  jump to page ${lastPage} rendered:                 median ${median(last).toFixed(0)} ms [${show(last)}]`);
  if (median(first) > TARGET_MS) process.exitCode = 1;
} finally {
  await browser.close();
  await t.stop();
  postgres.stop();
}
