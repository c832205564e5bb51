import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFlowBatch } from '../../flowstore/index.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { ACME, BASE, BEAT, WINDOW, flow, instanceAFlows } from '../explore/explore.fixtures.js';

const LIST = '/rest/explore/1.0/egress/organizations';
const org = (name: string, view = '') => `${LIST}/${encodeURIComponent(name)}${view ? `/${view}` : ''}`;
const replace = `mutation($customerId: String, $networks: [OwnNetworkInput!]!) { replaceOwnNetworks(customerId: $customerId, networks: $networks) { networks { cidr } } }`;

/** Instance A's own networks: a partner over the dataset's Google, an internal DMZ, and nested ranges (the /32 wins). */
const A_NETWORKS = [
  { cidr: '8.8.8.0/24', name: 'Partner DNS', kind: 'EXTERNAL' },
  { cidr: '192.0.2.0/24', name: 'HQ DMZ', kind: 'INTERNAL' },
  { cidr: '9.9.0.0/16', name: 'Lab Internet', kind: 'EXTERNAL' },
  { cidr: '9.9.9.9/32', name: 'Lab resolver', kind: 'EXTERNAL' },
  // The collector named 1.1.1.1 "My DNS": what the collector names stays first.
  { cidr: '1.1.1.0/24', name: 'Not shown', kind: 'EXTERNAL' },
];

describe('own networks in explore', () => {
  let t: TestApp;
  let second: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let a: string;
  let b: string;
  const get = (path: string, body: Record<string, unknown>, token = tree.childACaller.token, app = t) => call(app.url, 'GET', path, { token, body });
  const names = (res: { body: { organizations: { name: string }[] } }) => res.body.organizations.map((o) => o.name);
  const setNetworks = async (customerId: string, networks: unknown[], app = t) => {
    const res = await graphql(app.url, replace, { customerId, networks }, tree.mspCaller.token);
    expect(res.errors).toBeUndefined();
  };

  beforeAll(async () => {
    t = await startTestApp();
    // A second server process on the same database (and flow store): what one writes, the other reads at once.
    second = await startTestApp({ databaseUrl: t.config.databaseUrl });
    tree = await seedTree(t.app);
    a = tree.childA.id;
    b = tree.childB.id;
    const insert = (customerId: string, flows: Record<string, unknown>[]) =>
      insertFlowBatch(t.app.flows, { customerId, nodeId: 'n1', batchId: `own-${customerId}`, flows });
    await insert(a, instanceAFlows());
    // B reaches the same addresses; A's networks must not rename them.
    await insert(b, [
      flow({ at: BASE + 2_000, src: '10.9.0.1', dst: '8.8.8.8', up: 7, down: 7 }),
      flow({ at: BASE + 3_000, src: '10.9.0.1', dst: '192.0.2.1', up: 3, down: 3 }),
    ]);
    await t.app.services.explore.dataset.ensure();
    await second.app.services.explore.dataset.ensure();
    expect(t.app.services.explore.dataset.status().state).toBe('ready');
  }, 300_000);
  afterAll(async () => {
    await second.stop();
    await t.stop();
  });

  it("names addresses by the tenant's networks before the dataset, most specific first, and drops internal ones", async () => {
    const before = await get(LIST, { instance_ids: [a], ...WINDOW });
    expect(names(before)).toEqual([ACME, BEAT, 'Geo Only Inc', 'Google LLC', 'Quad9', 'My DNS']);
    // Networks that only name public addresses: the rollups answer, the names joined on top.
    await setNetworks(
      a,
      A_NETWORKS.filter((n) => n.kind === 'EXTERNAL'),
    );
    const named = await get(LIST, { instance_ids: [a], ...WINDOW });
    expect(names(named)).toEqual([ACME, BEAT, 'Geo Only Inc', 'Partner DNS', 'Lab resolver', 'My DNS']);
    expect(named.body.coverage).toEqual({ classified_in_page: 30, total_flows: 31 });
    expect((await get(org('Partner DNS'), { instance_ids: [a], ...WINDOW })).body).toMatchObject({ upload: 20, download: 40, sources: 2, endpoints: 1 });
    // An internal network on public addresses (the DMZ) changes which flows are egress: A's flows are read row by row.
    await setNetworks(a, A_NETWORKS);
    const res = await get(LIST, { instance_ids: [a], ...WINDOW });
    expect(res.status).toBe(200);
    expect(res.body.organizations).toEqual([
      { name: ACME, bytes: 6600, upload: 600, download: 6000, flows: 3, sources: 2 },
      { name: BEAT, bytes: 4400, upload: 2200, download: 2200, flows: 22, sources: 1 },
      { name: 'Geo Only Inc', bytes: 100, upload: 50, download: 50, flows: 1, sources: 1 },
      { name: 'Partner DNS', bytes: 60, upload: 20, download: 40, flows: 2, sources: 2 },
      { name: 'Lab resolver', bytes: 40, upload: 20, download: 20, flows: 1, sources: 1 },
      { name: 'My DNS', bytes: 10, upload: 5, download: 5, flows: 1, sources: 1 },
    ]);
    // The flow to the internal DMZ (192.0.2.1, unattributed before) is no longer egress.
    expect(res.body).toMatchObject({ total_orgs: 6, coverage: { classified_in_page: 30, total_flows: 30 } });
  });

  it("answers every per-organization view of an own-network name, and nothing under the dataset's name", async () => {
    await setNetworks(a, A_NETWORKS);
    const header = await get(org('Partner DNS'), { instance_ids: [a], ...WINDOW });
    expect(header.body).toMatchObject({ org: 'Partner DNS', upload: 20, download: 40, sources: 2, endpoints: 1 });
    const reach = await get(org('Partner DNS', 'reach'), { instance_ids: [a], ...WINDOW });
    expect(reach.body.sources.map((s: { ip: string }) => s.ip).sort()).toEqual(['10.0.0.1', '10.0.0.4']);
    const temporal = await get(org('Lab resolver', 'temporal'), { instance_ids: [a], ...WINDOW });
    expect(temporal.body.total).toBe(1);
    expect((await get(org('Lab Internet'), { instance_ids: [a], ...WINDOW })).body).toMatchObject({ upload: 0, download: 0, endpoints: 0 });
    expect((await get(org('Google LLC'), { instance_ids: [a], ...WINDOW })).body).toMatchObject({ upload: 0, download: 0, sources: 0 });
    expect((await get(org('HQ DMZ'), { instance_ids: [a], ...WINDOW })).body).toMatchObject({ upload: 0, download: 0, sources: 0 });
  });

  it("never lets one tenant's networks change another's answers, alone or merged", async () => {
    await setNetworks(a, A_NETWORKS);
    const alone = await get(LIST, { instance_ids: [b], ...WINDOW }, tree.childBCaller.token);
    expect(alone.body.organizations).toEqual([{ name: 'Google LLC', bytes: 14, upload: 7, download: 7, flows: 1, sources: 1 }]);
    expect(alone.body.coverage).toEqual({ classified_in_page: 1, total_flows: 2 });
    // The parent over both: A's flows to 8.8.8.8 are Partner DNS, B's are Google LLC.
    const merged = await get(LIST, { instance_ids: [a, b], ...WINDOW, size: 25 }, tree.mspCaller.token);
    expect(merged.body.organizations.filter((o: { name: string }) => ['Partner DNS', 'Google LLC'].includes(o.name))).toEqual([
      { name: 'Partner DNS', bytes: 60, upload: 20, download: 40, flows: 2, sources: 2 },
      { name: 'Google LLC', bytes: 14, upload: 7, download: 7, flows: 1, sources: 1 },
    ]);
    expect(merged.body.coverage.total_flows).toBe(32);
    const google = await get(org('Google LLC', 'reach'), { instance_ids: [a, b], ...WINDOW }, tree.mspCaller.token);
    expect(google.body.sources).toEqual([{ ip: '10.9.0.1', upload: 7, download: 7, flows: 1 }]);
    const partner = await get(org('Partner DNS'), { instance_ids: [a, b], ...WINDOW }, tree.mspCaller.token);
    expect(partner.body).toMatchObject({ upload: 20, download: 40, sources: 2 });
  });

  it('reclassifies flows: a lab\'s private "internet" is egress, a public branch is internal, a public DMZ is not egress', async () => {
    const lab = await seedTenant(t.app, { parentId: tree.msp.id });
    const token = (await seedCaller(t.app, lab.id)).token;
    await insertFlowBatch(t.app.flows, {
      customerId: lab.id,
      nodeId: 'n1',
      batchId: 'own-lab',
      flows: [
        flow({ at: BASE + 1_000, src: '10.0.0.5', dst: '10.99.0.7', up: 100, down: 200, types: false }),
        flow({ at: BASE + 2_000, src: '10.0.0.5', dst: '10.0.0.9', up: 1, down: 1, types: false }),
        flow({ at: BASE + 3_000, src: '198.18.5.5', dst: '8.8.8.8', up: 10, down: 30, types: false }),
        flow({ at: BASE + 4_000, src: '10.0.0.6', dst: '203.0.113.50', up: 5, down: 5, org: ACME }),
      ],
    });
    const before = await get(LIST, { instance_ids: [lab.id], ...WINDOW }, token);
    expect(names(before)).toEqual([ACME]);
    expect(before.body.coverage.total_flows).toBe(1);
    await setNetworks(lab.id, [
      { cidr: '10.99.0.0/16', name: 'Lab Internet', kind: 'EXTERNAL' },
      { cidr: '198.18.0.0/15', name: 'Branch', kind: 'INTERNAL' },
      { cidr: '203.0.113.0/24', name: 'DMZ', kind: 'INTERNAL' },
    ]);
    const res = await get(LIST, { instance_ids: [lab.id], ...WINDOW }, token);
    expect(res.body.organizations).toEqual([
      { name: 'Lab Internet', bytes: 300, upload: 100, download: 200, flows: 1, sources: 1 },
      { name: 'Google LLC', bytes: 40, upload: 10, download: 30, flows: 1, sources: 1 },
    ]);
    expect(res.body.coverage).toEqual({ classified_in_page: 2, total_flows: 2 });
    expect((await get(org('Lab Internet'), { instance_ids: [lab.id], ...WINDOW }, token)).body).toMatchObject({
      upload: 100,
      download: 200,
      sources: 1,
      endpoints: 1,
    });
    expect((await get(org('Google LLC', 'reach'), { instance_ids: [lab.id], ...WINDOW }, token)).body.sources.map((r: { ip: string }) => r.ip)).toEqual([
      '198.18.5.5',
    ]);
    expect((await get(org(ACME), { instance_ids: [lab.id], ...WINDOW }, token)).body).toMatchObject({ upload: 0, download: 0, sources: 0 });
    // Merged with a tenant read from the rollups, each keeps its own classification.
    const merged = await get(LIST, { instance_ids: [lab.id, b], ...WINDOW }, tree.mspCaller.token);
    expect(merged.body.organizations).toEqual([
      { name: 'Lab Internet', bytes: 300, upload: 100, download: 200, flows: 1, sources: 1 },
      { name: 'Google LLC', bytes: 54, upload: 17, download: 37, flows: 2, sources: 2 },
    ]);
    expect(merged.body.coverage.total_flows).toBe(4);
  });

  it('takes effect on the next query, in another server process too, without a restart', async () => {
    await setNetworks(a, A_NETWORKS, second);
    expect(names(await get(LIST, { instance_ids: [a], ...WINDOW }))).toContain('Partner DNS');
    await setNetworks(a, [], second);
    expect(names(await get(LIST, { instance_ids: [a], ...WINDOW }))).toEqual([ACME, BEAT, 'Geo Only Inc', 'Google LLC', 'Quad9', 'My DNS']);
    await setNetworks(a, [{ cidr: '8.8.8.8/32', name: 'Renamed', kind: 'EXTERNAL' }]);
    expect(names(await get(LIST, { instance_ids: [a], ...WINDOW }, tree.childACaller.token, second))).toContain('Renamed');
  });
});
