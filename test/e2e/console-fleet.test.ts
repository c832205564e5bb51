import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { type TestBrowser, openBrowser, seriousAxeViolations, screenshotPath } from '../kit/browser.js';
import { openSignedIn } from '../kit/console-page.js';
import { FakeCollector } from '../kit/fake-collector.js';
import { call, graphql } from '../kit/http.js';
import { type Person, seedPerson } from '../kit/people.js';
import { seedTenant, seedTree } from '../kit/seed.js';

const START = `mutation($hostname: String, $machineId: String) { startDeviceAuthorization(hostname: $hostname, machineId: $machineId) { deviceCode userCode } }`;
const POLL = `mutation($code: String) { pollDeviceAuthorization(deviceCode: $code) { status accessKey } }`;

describe('the console fleet pages in a browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let admin: Person;
  let viewer: Person;

  let connected: FakeCollector;

  /** A collector enrolled into `customerId` with a provisioned key, as the installer would; left connected. */
  async function enrol(customerId: string, machineId: string): Promise<FakeCollector> {
    const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
      token: tree.mspCaller.token,
      body: { customer_id: customerId, machine_id: machineId },
    });
    const token = await FakeCollector.exchange(t.url, provisioned.body.access_key);
    return FakeCollector.connect(t.url, token, { machine_id: machineId, hostname: machineId, os: 'linux', arch: 'amd64', collector_version: '0.0.1' });
  }

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), openBrowser({ width: 1280, height: 900 })]);
    tree = await seedTree(t.app);
    admin = await seedPerson(t.app, tree.msp.id, 'admin');
    viewer = await seedPerson(t.app, tree.msp.id, 'viewer');
    connected = await enrol(tree.msp.id, 'msp-sensor');
    await (await enrol(tree.childA.id, 'child-a-sensor')).close();
  }, 120_000);
  afterAll(async () => {
    await connected?.close();
    await browser?.close();
    await t?.stop();
  });

  const nodeNames = (page: Page) => page.locator('table.nodes tbody tr td:first-child').allTextContents();

  it("lists the chosen tenant's nodes: an MSP switching to a child sees only the child's", async () => {
    const { page, elsewhere, problems } = await openSignedIn(browser, t.url, admin, '/fleet');
    await expect.poll(() => nodeNames(page), { timeout: 15_000 }).toEqual(['msp-sensor']);
    expect(await page.locator('table.nodes tbody td:nth-child(2)').allTextContents()).toEqual(['active']);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-nodes'), fullPage: true });

    await page.getByLabel('Tenant').selectOption(tree.childA.id);
    await expect.poll(() => nodeNames(page), { timeout: 15_000 }).toEqual(['child-a-sensor']);
    await page.getByRole('link', { name: 'child-a-sensor' }).click();
    await page.getByRole('heading', { name: 'child-a-sensor' }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('linux / amd64');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-node'), fullPage: true });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await page.getByLabel('Tenant').selectOption(tree.msp.id);
    await page.close();
  });

  it('updates a connected node and fetches its diagnostics and recent logs from its collector (admin)', async () => {
    const commands: Array<{ command: string; args: Record<string, unknown> }> = [];
    connected.answer = (command) => {
      commands.push({ command: command.name, args: command.args });
      if (command.name === 'update') return { ok: true, data: { version: command.args.version } };
      return {
        ok: true,
        data: { diagnostics: { uptime_s: 42, asked: command.args.log_lines }, recent_logs: ['capture started on eth0', 'spooler flushed 3 files'] },
      };
    };
    await t.app.services.collector.publish({ file: Buffer.from('binary 9.0.0'), version: '9.0.0', channel: 'stable', os: 'linux', arch: 'amd64' });
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/fleet');
    await page.getByRole('link', { name: 'msp-sensor' }).click();
    await page.getByText('Update available: 9.0.0').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Update msp-sensor' }).click();
    await page.getByText('Update to 9.0.0 sent.').waitFor({ timeout: 15_000 });
    expect(commands.map((c) => [c.command, c.args.version])).toEqual([['update', '9.0.0']]);

    await page.getByRole('button', { name: 'Fetch diagnostics' }).click();
    await page.getByText('The last 2 log lines').waitFor({ timeout: 15_000 });
    expect(await page.locator('pre.logs').textContent()).toBe('capture started on eth0\nspooler flushed 3 files');
    expect(await page.locator('pre.copyable', { hasText: 'uptime_s' }).textContent()).toContain('"asked": 200');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-diagnostics'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('approves a device while its enrolment waits, the user code shown and the status live', async () => {
    const grant = (await graphql(t.url, START, { hostname: 'lab-box', machineId: 'lab-box-1' })).data.startDeviceAuthorization;
    // The device polls as it would, until decided (bounded: 60 polls, ~30 s).
    const decided = (async () => {
      for (let i = 0; i < 60; i++) {
        const polled = (await graphql(t.url, POLL, { code: grant.deviceCode })).data.pollDeviceAuthorization;
        if (polled.status !== 'pending') return polled;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error('the device was never decided');
    })();

    const { page, problems } = await openSignedIn(browser, t.url, admin, '/fleet/devices');
    await page.getByLabel('Code shown by the device').fill(grant.userCode.toLowerCase());
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'lab-box' }).waitFor();
    expect(await page.locator('.user-code').textContent()).toBe(grant.userCode);
    expect(await page.getByTestId('device-status').textContent()).toBe('pending');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-device'), fullPage: true });
    await page.getByRole('button', { name: 'Approve lab-box' }).click();
    await expect.poll(() => page.getByTestId('device-status').textContent()).toBe('approved');
    expect(await decided).toMatchObject({ status: 'approved', accessKey: expect.stringMatching(/\./) });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('provisions a collector, creates and deletes a profile and a deployment (admin)', async () => {
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/fleet/provision');
    await page.getByLabel('Description').fill('branch sensor');
    await page.getByRole('button', { name: 'Create the install command' }).click();
    const command = await page.getByTestId('install-command').textContent({ timeout: 10_000 });
    expect(command).toMatch(new RegExp(`^curl -fsSL ${t.url}/rest/collector/install/1.0 \\| sudo bash -s -- \\S+\\.\\S+$`));
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'Profiles' }).click();
    await page.getByLabel('Name').fill('Edge sensors');
    await page.getByLabel('NetFlow / IPFIX').check();
    await page.getByRole('button', { name: 'Create profile' }).click();
    const row = page.locator('table.data tr', { hasText: 'Edge sensors' });
    await expect.poll(() => row.textContent()).toContain('Packet capture, NetFlow / IPFIX');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-profiles'), fullPage: true });
    await page.getByRole('button', { name: 'Delete profile Edge sensors' }).click();
    await page.getByRole('button', { name: 'Yes, delete profile Edge sensors' }).click();
    await expect.poll(() => row.count()).toBe(0);

    await page.getByRole('link', { name: 'Deployments' }).click();
    await page.getByLabel('Name').fill('Branch Office');
    await page.getByLabel(/^Handle/).fill(`branch_${Date.now()}`);
    await page.getByRole('button', { name: 'Create deployment' }).click();
    const child = page.locator('table.data tr', { hasText: 'Branch Office' });
    await expect.poll(() => child.count(), { timeout: 10_000 }).toBe(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath('console-fleet-deployments'), fullPage: true });
    await page.getByRole('button', { name: 'Delete deployment Branch Office' }).click();
    await page.getByRole('button', { name: 'Yes, delete deployment Branch Office' }).click();
    await expect.poll(() => child.count(), { timeout: 10_000 }).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('hides the actions a viewer may not take', async () => {
    const { page } = await openSignedIn(browser, t.url, viewer, '/fleet/profiles');
    await page.getByRole('heading', { name: 'Profiles' }).waitFor();
    await page
      .getByText(/has no profiles|Name/)
      .first()
      .waitFor();
    expect(await page.getByRole('button', { name: 'Create profile' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Provision a collector' }).click();
    await page.getByText('Your role, viewer, may not provision collectors').waitFor();
    await page.close();
  });

  it('pages a tenant of more than 500 nodes, oldest first', async () => {
    const big = await seedTenant(t.app, { parentId: tree.msp.id, name: 'Big fleet' });
    const base = Date.UTC(2026, 0, 1);
    await t.app.db.prisma.node.createMany({
      data: Array.from({ length: 501 }, (_, i) => ({
        id: `node_page${String(i).padStart(4, '0')}`,
        customerId: big.id,
        machineId: `big-${i}`,
        hostname: `big-${String(i).padStart(4, '0')}`,
        status: 'active',
        createdAt: new Date(base + i * 1000),
      })),
    });
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/fleet');
    await page.getByLabel('Tenant').selectOption(big.id);
    await expect.poll(async () => (await nodeNames(page)).length, { timeout: 15_000 }).toBe(500);
    expect((await nodeNames(page))[0]).toBe('big-0000');
    await page.getByText('Nodes 1 to 500, oldest first').waitFor();
    await page.getByRole('button', { name: 'Next 500' }).click();
    await expect.poll(() => nodeNames(page), { timeout: 15_000 }).toEqual(['big-0500']);
    await page.getByText('Nodes 501 to 501, oldest first').waitFor();
    expect(await page.getByRole('button', { name: 'Next 500' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous 500' }).click();
    await expect.poll(async () => (await nodeNames(page)).length, { timeout: 15_000 }).toBe(500);
    expect(problems).toEqual([]);
    await page.getByLabel('Tenant').selectOption(tree.msp.id);
    await page.close();
  });

  it('pages an MSP of more than 500 child deployments', async () => {
    const msp = await seedTenant(t.app, { msp: true, name: 'Big MSP' });
    for (let i = 0; i < 501; i++) {
      await t.app.services.tenants.create({ name: `Child ${String(i).padStart(4, '0')}`, handle: `big-child-${i}`, parentId: msp.id });
    }
    const mspAdmin = await seedPerson(t.app, msp.id, 'admin');
    const { page, problems } = await openSignedIn(browser, t.url, mspAdmin, '/fleet/deployments');
    const names = () => page.locator('table.data tbody tr td:first-child').allTextContents();
    await expect.poll(async () => (await names()).length, { timeout: 15_000 }).toBe(500);
    expect((await names())[0]).toBe('Child 0000');
    await page.getByText('Deployments 1 to 500, oldest first').waitFor();
    await page.getByRole('button', { name: 'Next 500' }).click();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['Child 0500']);
    await page.getByRole('button', { name: 'Previous 500' }).click();
    await expect.poll(async () => (await names()).length, { timeout: 15_000 }).toBe(500);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("asks the server for the chosen tenant's nodes and profiles only, never the whole tree", async () => {
    const CREATE = 'mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { profileId } } }';
    for (const [name, customerId] of [
      ['Parent sensors', tree.msp.id],
      ['Child A sensors', tree.childA.id],
    ]) {
      expect((await graphql(t.url, CREATE, { input: { name, customerId } }, tree.mspCaller.token)).errors).toBeUndefined();
    }
    const { page, problems } = await openSignedIn(browser, t.url, admin, '/fleet');
    // What each list query asked for and which tenants' rows came back.
    const answered: Array<{ operation: string; customerId: unknown; owners: string[] }> = [];
    page.on('response', async (response) => {
      const sent = JSON.parse(response.request().postData() ?? '{}') as { query?: string; variables?: { customerId?: string } };
      const operation = /\bquery (ConsoleNodes|ConsoleProfiles)\b/.exec(sent.query ?? '')?.[1];
      if (!operation) return;
      const { data } = (await response.json()) as { data: Record<string, { edges: Array<{ node: { customerId: string } }> }> };
      const list = data[operation === 'ConsoleNodes' ? 'collectorNodes' : 'profiles'];
      answered.push({ operation, customerId: sent.variables?.customerId, owners: list.edges.map((e) => e.node.customerId) });
    });
    await expect.poll(() => nodeNames(page), { timeout: 15_000 }).toEqual(['msp-sensor']);
    await page.getByLabel('Tenant').selectOption(tree.childA.id);
    await expect.poll(() => nodeNames(page), { timeout: 15_000 }).toEqual(['child-a-sensor']);
    await page.getByRole('link', { name: 'Profiles' }).click();
    const profileNames = () => page.locator('table.data tbody tr td:first-child').allTextContents();
    await expect.poll(profileNames, { timeout: 15_000 }).toEqual(['Child A sensors']);
    await expect.poll(() => answered.filter((a) => a.customerId === tree.childA.id).map((a) => a.operation)).toEqual(['ConsoleNodes', 'ConsoleProfiles']);
    for (const a of answered) expect(new Set(a.owners)).toEqual(new Set(a.owners.length ? [a.customerId] : []));
    await page.getByLabel('Tenant').selectOption(tree.msp.id);
    await expect.poll(profileNames, { timeout: 15_000 }).toEqual(['Parent sensors']);
    expect(problems).toEqual([]);
    await page.close();
  });
});
