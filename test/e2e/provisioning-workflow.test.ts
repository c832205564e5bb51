import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMember, readTarGz } from '../../src/modules/collector/tarball.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { FakeCollector } from '../kit/fake-collector.js';
import { call, fetchDocumented } from '../kit/http.js';
import { seedCaller, seedTenant } from '../kit/seed.js';
import { startCollector } from '../../tools/collector/index.js';

/** wire.md 11.4: UUIDv5 in the URL namespace of `prophet-node:<cpu id>`. */
function deriveMachineId(cpuId: string): string {
  const namespace = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');
  const hash = createHash('sha1')
    .update(Buffer.concat([namespace, Buffer.from(`prophet-node:${cpuId}`, 'utf8')]))
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The factory provisioning workflow of wire.md section 14, as the SDK performs it: one-time setup
 * per customer, then per unit provision → download → gate on the node being active and connected.
 */
describe('factory provisioning workflow (wire.md 14)', () => {
  let t: TestApp;
  let token: string;
  let parentId: string;
  const stateDir = mkdtempSync(join(tmpdir(), 'bd-unit-'));

  beforeAll(async () => {
    t = await startTestApp();
    const msp = await seedTenant(t.app, { msp: true });
    const caller = await seedCaller(t.app, msp.id);
    const minted = await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: caller.clientId, client_secret: caller.clientSecret } });
    token = minted.body.access_token;
    parentId = decodeJwt(token).aud as string;
    await t.app.services.collector.publish({ file: Buffer.from('#!/bin/sh\necho prophet\n'), version: '0.3.0', channel: 'stable', os: 'linux', arch: 'arm7' });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('builds a unit end to end', async () => {
    expect(deriveMachineId('0xABC')).toBe('bc43bcea-37a7-5c97-9815-727fba52b452');

    // One-time setup per end customer.
    const created = await call(t.url, 'POST', '/rest/deployments/1.0', { token, body: { name: 'Acme Retail', handle: 'acme-retail', parent_id: parentId } });
    expect([200, 201]).toContain(created.status);
    const deploymentId = created.body.deployment.customer.customer_id;
    const profile = await call(t.url, 'POST', '/rest/profiles/1.0', {
      token,
      body: {
        name: 'Acme Retail fleet',
        update_channel: 'stable',
        fleet_staging: false,
        services: {
          packet: { enabled: true, interface_patterns: ['eth*'], inspection: false, payload: false, lightweight: true, process_ids: false, num_workers: 1 },
        },
      },
    });
    expect([200, 201]).toContain(profile.status);
    const profileId = profile.body.profile.profile_id;

    // Per unit.
    const machineId = deriveMachineId('0x1122334455667788');
    const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
      token,
      body: { customer_id: deploymentId, machine_id: machineId, description: 'SN-0042', profile_id: profileId },
    });
    expect([200, 201]).toContain(provisioned.status);
    expect(provisioned.body).toMatchObject({ customer_id: deploymentId, machine_id: machineId, profile_id: profileId });

    const download = await fetchDocumented(`${t.url}/rest/collector/download/1.0?os=linux&arch=arm7&channel=stable`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('prophet_collector_v0.3.0_linux_arm7.tar.gz');
    const binary = findMember(readTarGz(Buffer.from(await download.arrayBuffer())), 'prophet');
    expect(binary?.content.toString()).toContain('echo prophet');

    // The key's token speaks for the child with the ingest scope; no node exists until the unit boots.
    const collectorToken = await FakeCollector.exchange(t.url, provisioned.body.access_key);
    expect(decodeJwt(collectorToken)).toMatchObject({ aud: deploymentId, scopes: expect.arrayContaining(['p.token.scope.ingest']) });
    const before = await call(t.url, 'GET', '/rest/nodes/1.0', { token });
    expect(before.body.nodes.find((n: { machine_id: string }) => n.machine_id === machineId)).toBeUndefined();

    // The unit boots: the reference collector registers on the control channel and ships flows.
    const collector = await startCollector({
      baseUrl: t.url,
      accessKey: provisioned.body.access_key,
      machineId,
      hostname: 'SN-0042',
      stateDir,
      flowsPerSecond: 20,
      log: null,
    });

    // The gate: poll GET /rest/nodes/1.0 until the node is active and connected.
    await expect
      .poll(async () => {
        const nodes = (await call(t.url, 'GET', '/rest/nodes/1.0', { token })).body.nodes as Array<Record<string, any>>;
        const node = nodes.find((n) => n.machine_id === machineId);
        return node?.status === 'active' && node.connection.control_plane === true;
      })
      .toBe(true);
    await expect
      .poll(async () => (await call(t.url, 'GET', `/rest/nodes/1.0/${collector.nodeId}`, { token })).body.connection.ingest, { timeout: 15_000 })
      .toBe(true);
    await collector.stop();

    // Clean-up as the SDK's simulation does: profile, then deployment (cascading to the node).
    expect((await call(t.url, 'DELETE', `/rest/profiles/1.0/${profileId}`, { token, headers: { 'content-length': '0' } })).status).toBe(200);
    expect((await call(t.url, 'DELETE', '/rest/deployments/1.0', { token, body: { customer_id: deploymentId, parent_id: parentId } })).status).toBe(200);
    // The node goes with the deployment's rows, once the deletion worker has removed its flows.
    await expect.poll(() => t.app.db.prisma.node.count({ where: { machineId } }), { timeout: 20_000 }).toBe(0);
  });
});
