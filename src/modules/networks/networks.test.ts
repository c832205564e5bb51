import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { OWN_NETWORK_LIMITS } from './networks.service.js';

const fields = 'customerId cidr name kind';
const list = `query($customerId: String) { ownNetworks(customerId: $customerId) { ${fields} } }`;
const replace = `mutation($customerId: String, $networks: [OwnNetworkInput!]!) { replaceOwnNetworks(customerId: $customerId, networks: $networks) { customerId networks { ${fields} } } }`;
const add = `mutation($customerId: String, $networks: [OwnNetworkInput!]!) { addOwnNetworks(customerId: $customerId, networks: $networks) { customerId networks { ${fields} } } }`;
const remove = `mutation($customerId: String, $cidrs: [String!]!) { removeOwnNetworks(customerId: $customerId, cidrs: $cidrs) { customerId networks { ${fields} } } }`;

type Net = { cidr: string; name: string; kind: 'INTERNAL' | 'EXTERNAL' };
const lab: Net[] = [
  { cidr: '198.51.100.0/24', name: 'Partner Bank', kind: 'EXTERNAL' },
  { cidr: '10.0.0.0/8', name: 'Corp', kind: 'INTERNAL' },
  { cidr: '10.20.0.0/16', name: 'Lab', kind: 'INTERNAL' },
  { cidr: '2001:db8::/32', name: 'Partner v6', kind: 'EXTERNAL' },
];

describe('own networks through GraphQL', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let other: Awaited<ReturnType<typeof seedTree>>;
  const gql = (query: string, variables: Record<string, unknown>, token = tree.childACaller.token) => graphql(t.url, query, variables, token);
  const error = (res: { errors?: Array<{ message: string; extensions?: Record<string, any> }> }) => ({
    code: res.errors?.[0]?.extensions?.code,
    field: res.errors?.[0]?.extensions?.details?.field,
    message: res.errors?.[0]?.message,
  });

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    other = await seedTree(t.app);
  });
  afterAll(() => t.stop());

  it('replaces, lists by address (wider first), adds and removes; CIDRs come back canonical', async () => {
    const replaced = await gql(replace, { networks: lab });
    expect(replaced.errors).toBeUndefined();
    expect(replaced.data.replaceOwnNetworks.customerId).toBe(tree.childA.id);
    expect(replaced.data.replaceOwnNetworks.networks.map((n: Net) => `${n.cidr} ${n.name} ${n.kind}`)).toEqual([
      '10.0.0.0/8 Corp INTERNAL',
      '10.20.0.0/16 Lab INTERNAL',
      '198.51.100.0/24 Partner Bank EXTERNAL',
      '2001:db8::/32 Partner v6 EXTERNAL',
    ]);
    // An IPv4-mapped spelling is the IPv4 network; IPv6 is compressed and lower case.
    const added = await gql(add, {
      networks: [
        { cidr: '::FFFF:203.0.113.0/120', name: '  Branch  ', kind: 'INTERNAL' },
        { cidr: '2001:0DB8:0001:0000::/64', name: 'Partner lab', kind: 'EXTERNAL' },
      ],
    });
    expect(added.errors).toBeUndefined();
    expect(added.data.addOwnNetworks.networks.map((n: Net) => n.cidr)).toEqual([
      '10.0.0.0/8',
      '10.20.0.0/16',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '2001:db8::/32',
      '2001:db8:1::/64',
    ]);
    expect(added.data.addOwnNetworks.networks.find((n: Net) => n.cidr === '203.0.113.0/24').name).toBe('Branch');
    const removed = await gql(remove, { cidrs: ['::ffff:203.0.113.0/120', '2001:db8:1::/64'] });
    expect(removed.errors).toBeUndefined();
    expect(removed.data.removeOwnNetworks.networks).toHaveLength(4);
    const listed = await gql(list, {});
    expect(listed.data.ownNetworks.map((n: Net) => n.cidr)).toEqual(['10.0.0.0/8', '10.20.0.0/16', '198.51.100.0/24', '2001:db8::/32']);
    // Replacing with a renamed network keeps it, with the new name.
    const renamed = await gql(replace, { networks: [{ ...lab[0]!, name: 'Partner Bank EU' }] });
    expect(renamed.data.replaceOwnNetworks.networks).toEqual([
      { customerId: tree.childA.id, cidr: '198.51.100.0/24', name: 'Partner Bank EU', kind: 'EXTERNAL' },
    ]);
  });

  it('refuses bad CIDRs, names and repeats with a 400 naming the field, changing nothing', async () => {
    await gql(replace, { networks: lab });
    const cases: [Net[], string, RegExp][] = [
      [[{ cidr: '10.0.0.1/8', name: 'x', kind: 'INTERNAL' }], 'networks[0].cidr', /host bits set \(the network is 10\.0\.0\.0\/8\)/],
      [[{ cidr: '10.0.0.0', name: 'x', kind: 'INTERNAL' }], 'networks[0].cidr', /not in CIDR notation/],
      [[{ cidr: '10.0.0.0/33', name: 'x', kind: 'INTERNAL' }], 'networks[0].cidr', /prefix length that is not a number from 0 to 32/],
      [[{ cidr: '2001:db8::/129', name: 'x', kind: 'INTERNAL' }], 'networks[0].cidr', /from 0 to 128/],
      [[{ cidr: 'acme.example/24', name: 'x', kind: 'INTERNAL' }], 'networks[0].cidr', /IPv4 or IPv6 address/],
      [
        [lab[0]!, { cidr: '198.51.100.0/24', name: 'Again', kind: 'EXTERNAL' }],
        'networks[1].cidr',
        /198\.51\.100\.0\/24 is given twice \(also networks\[0\]\)/,
      ],
      [[lab[1]!, { cidr: '::ffff:10.0.0.0/104', name: 'Same', kind: 'INTERNAL' }], 'networks[1].cidr', /10\.0\.0\.0\/8 is given twice/],
      [[{ cidr: '10.0.0.0/8', name: '   ', kind: 'INTERNAL' }], 'networks[0].name', /is required/],
      [[{ cidr: '10.0.0.0/8', name: 'x'.repeat(OWN_NETWORK_LIMITS.name + 1), kind: 'INTERNAL' }], 'networks[0].name', /at most 200 characters/],
      [[{ cidr: '10.0.0.0/8', name: 'bad\u0007bell', kind: 'INTERNAL' }], 'networks[0].name', /control characters/],
      [[{ cidr: '10.0.0.0/8', name: 'zero\u200bwidth', kind: 'INTERNAL' }], 'networks[0].name', /invisible formatting/],
    ];
    for (const [networks, field, message] of cases) {
      const res = await gql(replace, { networks });
      expect(error(res), JSON.stringify(networks)).toMatchObject({ code: 'validation_error', field });
      expect(error(res).message).toMatch(message);
    }
    const unknownKind = await gql(replace, { networks: [{ cidr: '10.0.0.0/8', name: 'x', kind: 'SOMEWHERE' }] });
    expect(unknownKind.errors?.[0]?.message).toMatch(/OwnNetworkKind/);
    expect((await gql(list, {})).data.ownNetworks).toHaveLength(lab.length);
  });

  it('refuses adding a network the tenant has (409) and removing one it has not (404), atomically', async () => {
    await gql(replace, { networks: lab });
    const again = await gql(add, {
      networks: [
        { cidr: '203.0.113.0/24', name: 'New', kind: 'EXTERNAL' },
        { cidr: '10.20.0.0/16', name: 'Lab 2', kind: 'INTERNAL' },
      ],
    });
    expect(error(again)).toMatchObject({
      code: 'own_network_exists',
      field: 'networks[1].cidr',
      message: 'networks[1].cidr: 10.20.0.0/16 is already mapped to Lab; remove it first, or replace the list',
    });
    const missing = await gql(remove, { cidrs: ['10.0.0.0/8', '10.30.0.0/16'] });
    expect(error(missing)).toMatchObject({ code: 'own_network_not_found', message: "Not among the tenant's networks: 10.30.0.0/16" });
    expect((await gql(list, {})).data.ownNetworks.map((n: Net) => n.cidr)).toEqual(['10.0.0.0/8', '10.20.0.0/16', '198.51.100.0/24', '2001:db8::/32']);
  });

  it(`holds ${OWN_NETWORK_LIMITS.perTenant} networks per tenant, counting what the tenant has`, async () => {
    const many = (n: number, from = 0) =>
      Array.from({ length: n }, (_, i) => ({ cidr: `172.${16 + ((i + from) >> 8)}.${(i + from) & 255}.0/24`, name: `site ${i + from}`, kind: 'INTERNAL' }));
    const full = await gql(replace, { networks: many(OWN_NETWORK_LIMITS.perTenant) });
    expect(full.errors).toBeUndefined();
    expect(full.data.replaceOwnNetworks.networks).toHaveLength(OWN_NETWORK_LIMITS.perTenant);
    const over = await gql(add, { networks: many(1, OWN_NETWORK_LIMITS.perTenant) });
    expect(error(over)).toMatchObject({ code: 'own_network_limit_reached', message: 'A tenant may have at most 1000 networks (this change would leave 1001)' });
    const tooLong = await gql(replace, { networks: many(OWN_NETWORK_LIMITS.perTenant + 1) });
    expect(error(tooLong)).toMatchObject({ code: 'validation_error', field: 'networks', message: 'at most 1000 networks per tenant' });
    expect((await gql(list, {})).data.ownNetworks).toHaveLength(OWN_NETWORK_LIMITS.perTenant);
    await gql(replace, { networks: [] });
    expect((await gql(list, {})).data.ownNetworks).toEqual([]);
  });

  it('lets a parent MSP manage its children, and nobody reach outside their tree', async () => {
    const msp = tree.mspCaller.token;
    const child = tree.childB.id;
    const set = await gql(replace, { customerId: child, networks: [lab[0]!] }, msp);
    expect(set.data.replaceOwnNetworks.customerId).toBe(child);
    expect((await gql(list, { customerId: child }, msp)).data.ownNetworks).toHaveLength(1);
    // The parent's tree-wide list holds its children's networks; a child sees only its own.
    const all = (await gql(list, {}, msp)).data.ownNetworks.map((n: { customerId: string }) => n.customerId);
    expect(all).toContain(child);
    expect((await gql(list, {}, tree.childACaller.token)).data.ownNetworks.every((n: { customerId: string }) => n.customerId === tree.childA.id)).toBe(true);
    for (const [token, customerId] of [
      [tree.childACaller.token, child],
      [other.mspCaller.token, child],
      [tree.childBCaller.token, tree.msp.id],
    ] as const) {
      expect(error(await gql(list, { customerId }, token))).toMatchObject({ code: 'not_found' });
      expect(error(await gql(replace, { customerId, networks: [] }, token))).toMatchObject({ code: 'not_found' });
      expect(error(await gql(remove, { customerId, cidrs: ['198.51.100.0/24'] }, token))).toMatchObject({ code: 'not_found' });
    }
    expect((await gql(list, { customerId: child }, msp)).data.ownNetworks).toHaveLength(1);
  });

  it('needs node_api', async () => {
    const searchOnly = await seedCaller(t.app, tree.childA.id, [Scopes.searchApi]);
    expect(error(await gql(list, {}, searchOnly.token))).toMatchObject({ code: 'authorization_error' });
    expect(error(await gql(replace, { networks: [] }, searchOnly.token))).toMatchObject({ code: 'authorization_error' });
    // Before looking at the request.
    expect(error(await gql(replace, { networks: [{ cidr: 'nonsense', name: '', kind: 'INTERNAL' }] }, searchOnly.token))).toMatchObject({
      code: 'authorization_error',
    });
  });
});
