import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFlowBatch } from '../../src/flowstore/index.js';
import { ACME, BEAT, instanceAFlows } from '../../src/modules/explore/explore.fixtures.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser } from '../kit/browser.js';
import { openSignedIn, screenshotPath, seriousViolations } from '../kit/console-page.js';
import { type Person, seedPerson } from '../kit/people.js';
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
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('draws the organizations ranking and, per organization, the heatmap, cadence CDF, transfer, reach and access', async () => {
    const { page, elsewhere, problems } = await openSignedIn(browser, t.url, person, '/explore');
    await page.getByTestId('chart-organizations').locator('svg').waitFor({ timeout: 20_000 });
    expect(await page.locator('table.data tbody tr td:first-child').allTextContents()).toEqual([ACME, BEAT, 'Geo Only Inc', 'My DNS']);
    // Four organizations (the collector's or geo names), a bar each for upload and for download.
    expect(await marks(page, 'chart-organizations', MARK)).toBe(4);
    expect(await marks(page, 'chart-organizations', MARK_2)).toBe(4);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-explore-organizations'), fullPage: true });

    await page.getByRole('link', { name: BEAT }).click();
    await page.getByRole('heading', { name: BEAT, level: 1 }).waitFor();
    await page.getByTestId('chart-cadence').locator('svg').waitFor({ timeout: 20_000 });
    // 22 flows in one hour: one heatmap cell.
    expect(await marks(page, 'chart-temporal', MARK)).toBe(1);
    // The CDF's five quantile points, each a filled symbol.
    expect(await marks(page, 'chart-cadence', MARK)).toBe(5);
    expect(await page.locator('#cadence + p + div, #cadence ~ p').last().textContent()).toMatch(/10 flows from 1 sources flagged as beacons, every 30 s/);
    expect(await marks(page, 'chart-transfer', MARK)).toBe(1);
    expect(await marks(page, 'chart-transfer', MARK_2)).toBe(1);
    expect(await marks(page, 'chart-reach', MARK)).toBe(1);
    expect(await marks(page, 'chart-access-ports', MARK)).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-explore-organization'), fullPage: true });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
