import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFlowBatch } from '../../flowstore/index.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { BASE, WINDOW, flow } from '../explore/explore.fixtures.js';
import { OWN_NETWORK_LIMITS } from './networks.service.js';

const replace = `mutation($networks: [OwnNetworkInput!]!) { replaceOwnNetworks(networks: $networks) { networks { cidr } } }`;
const add = `mutation($networks: [OwnNetworkInput!]!) { addOwnNetworks(networks: $networks) { networks { cidr } } }`;

// Its own file (so its own process): embedded mode owns per-process engines (PGlite and chDB).
describe('own networks in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(() => t?.stop());

  it('applies a change to the next explore request, and holds the limit under concurrent adds', async () => {
    const tenant = await seedTenant(t.app);
    const { token } = await seedCaller(t.app, tenant.id);
    await insertFlowBatch(t.app.flows, {
      customerId: tenant.id,
      nodeId: 'n1',
      batchId: 'lab',
      flows: [flow({ at: BASE, src: '10.0.0.5', dst: '10.99.0.7', up: 100, down: 200, types: false })],
    });
    const list = () => call(t.url, 'GET', '/rest/explore/1.0/egress/organizations', { token, body: { instance_ids: [tenant.id], ...WINDOW } });
    expect((await list()).body.coverage.total_flows).toBe(0);
    expect((await graphql(t.url, replace, { networks: [{ cidr: '10.99.0.0/16', name: 'Lab Internet', kind: 'EXTERNAL' }] }, token)).errors).toBeUndefined();
    expect((await list()).body.organizations).toEqual([{ name: 'Lab Internet', bytes: 300, upload: 100, download: 200, flows: 1, sources: 1 }]);

    const filler = Array.from({ length: OWN_NETWORK_LIMITS.perTenant - 3 }, (_, i) => ({
      cidr: `172.16.${i >> 8}.${i & 255}/32`,
      name: `host ${i}`,
      kind: 'INTERNAL',
    }));
    expect((await graphql(t.url, replace, { networks: filler }, token)).errors).toBeUndefined();
    const adds = await Promise.all(
      Array.from({ length: 6 }, (_, i) => graphql(t.url, add, { networks: [{ cidr: `172.31.0.${i}/32`, name: `racer ${i}`, kind: 'INTERNAL' }] }, token)),
    );
    expect(adds.filter((r) => !r.errors).length).toBe(3);
    expect(adds.filter((r) => r.errors).map((r) => r.errors![0]!.extensions?.code)).toEqual(Array(3).fill('own_network_limit_reached'));
    expect(await t.app.db.prisma.ownNetwork.count({ where: { customerId: tenant.id } })).toBe(OWN_NETWORK_LIMITS.perTenant);
  }, 120_000);
});
