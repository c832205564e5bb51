import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFlowBatch } from '../../src/flowstore/index.js';
import { ACME, BEAT, instanceAFlows } from '../../src/modules/explore/explore.fixtures.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, seriousAxeViolations, screenshotPath } from '../kit/browser.js';
import { openSignedIn } from '../kit/console-page.js';
import { type Person, seedPerson } from '../kit/people.js';
import { flow } from '../kit/ingest.js';
import { seedTenant } from '../kit/seed.js';

/** The chart marks' colours (src/console/app/explore/Chart.tsx), as the SVG renderer writes them. */
const MARK = /^(#0b5fd6|rgb\(11,\s*95,\s*214\))$/i;
const MARK_2 = /^(#e0a100|rgb\(224,\s*161,\s*0\))$/i;

/** Filled shapes of a colour inside the chart `testId` (bars, heatmap cells, line symbols). */
async function marks(page: Page, testId: string, colour: RegExp): Promise<number> {
  const fills = await page
    .getByTestId(testId)
    .locator('svg path')
    .evaluateAll((paths) => paths.map((p) => p.getAttribute('fill') ?? ''));
  return fills.filter((fill) => colour.test(fill)).length;
}

describe('the console explore pages in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let person: Person;

  beforeAll(async () => {
    // Collector- and geo-named organizations only (Acme, Beat Co, Geo Only Inc, My DNS): no IP-organization dataset to load.
    [t, browser] = await Promise.all([startTestApp({ env: { IP_ORG_DATASET: 'off' } }), openBrowser({ width: 1280, height: 900 })]);
    const tenant = await seedTenant(t.app);
    person = await seedPerson(t.app, tenant.id, 'viewer');
    await insertFlowBatch(t.app.flows, { customerId: tenant.id, nodeId: 'n1', batchId: 'console-explore', flows: instanceAFlows() });
    // The last minutes, for search: 30 flows to port 443 and 10 to port 80.
    const recent = Array.from({ length: 40 }, (_, i) => flow(i + 1, i < 30 ? {} : { dst: { ip: '93.184.216.34', port: 80 } }));
    await insertFlowBatch(t.app.flows, { customerId: tenant.id, nodeId: 'n1', batchId: 'console-search', flows: recent });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('draws the organizations ranking and, per organization, the heatmap, cadence CDF, transfer, reach and access', async () => {
    const { page, elsewhere, problems } = await openSignedIn(browser, t.url, person, '/explore');
    await page.getByTestId('chart-organizations').locator('svg').waitFor({ timeout: 60_000 });
    expect(await page.locator('table.data tbody tr td:first-child').allTextContents()).toEqual([ACME, BEAT, 'Geo Only Inc', 'My DNS']);
    // Four organizations (the collector's or geo names), a bar each for upload and for download.
    expect(await marks(page, 'chart-organizations', MARK)).toBe(4);
    expect(await marks(page, 'chart-organizations', MARK_2)).toBe(4);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-explore-organizations'), fullPage: true });

    await page.getByRole('link', { name: BEAT }).click();
    await page.getByRole('heading', { name: BEAT, level: 1 }).waitFor();
    await page.getByTestId('chart-cadence').locator('svg').waitFor({ timeout: 60_000 });
    // 22 flows in one hour: one heatmap cell.
    expect(await marks(page, 'chart-temporal', MARK)).toBe(1);
    // The CDF's five quantile points, each a filled symbol.
    expect(await marks(page, 'chart-cadence', MARK)).toBe(5);
    expect(await page.locator('#cadence + p + div, #cadence ~ p').last().textContent()).toMatch(/10 flows from 1 sources flagged as beacons, every 30 s/);
    expect(await marks(page, 'chart-transfer', MARK)).toBe(1);
    expect(await marks(page, 'chart-transfer', MARK_2)).toBe(1);
    expect(await marks(page, 'chart-reach', MARK)).toBe(1);
    expect(await marks(page, 'chart-access-ports', MARK)).toBe(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-explore-organization'), fullPage: true });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it('searches flows: a syntax error at its position, then counts, terms and records, a row opening the whole record', async () => {
    const { page, problems } = await openSignedIn(browser, t.url, person, `/search?q=${encodeURIComponent('dst.port eqq 443')}`);
    const error = page.getByTestId('query-error');
    await error.waitFor({ timeout: 60_000 });
    // The server puts the error at `eqq` (character 10, 0-based 9); the page marks the rest from there.
    expect(await page.getByRole('alert').first().textContent()).toMatch(/near 'eqq'.*at character 10/);
    expect(await error.locator('mark').textContent()).toBe('eqq 443');
    expect(await page.getByLabel('Query').evaluate((input: HTMLInputElement) => [document.activeElement === input, input.selectionStart])).toEqual([true, 9]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-search-error'), fullPage: true });

    await page.getByLabel('Query').fill('dst.port eq 443');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByTestId('chart-terms').locator('svg').waitFor({ timeout: 60_000 });
    expect(await page.getByText(/^30 of 40 flows match/).count()).toBe(1);
    expect(await page.locator('table.flows tbody tr').count()).toBe(30);
    expect(await marks(page, 'chart-terms', MARK)).toBe(1);
    expect(await marks(page, 'chart-timeseries', MARK)).toBeGreaterThan(0);
    expect(new URL(page.url()).searchParams.get('q')).toBe('dst.port eq 443');
    await page.locator('table.flows tbody tr').first().getByRole('button', { name: 'Open' }).click();
    const record = JSON.parse((await page.getByTestId('flow-record').textContent())!);
    expect(record).toMatchObject({ dst: { ip: '93.184.216.34', port: 443 } });
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-search'), fullPage: true });
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    await page.close();
  }, 180_000);
});
