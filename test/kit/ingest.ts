import type { TestApp } from './app.js';
import { FakeCollector } from './fake-collector.js';
import { call } from './http.js';
import type { seedTree } from './seed.js';

export const flow = (i: number, extra: Record<string, unknown> = {}) => ({
  '@timestamp': Date.now() - i * 1000,
  src: { ip: `10.0.0.${i % 250}`, port: 40000 + i },
  dst: { ip: '93.184.216.34', port: 443 },
  transport: { proto: 'TCP', proto_num: 6 },
  ...extra,
});

export async function enrolledCollector(t: TestApp, tree: Awaited<ReturnType<typeof seedTree>>, machineId: string) {
  const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
    token: tree.mspCaller.token,
    body: { customer_id: tree.childA.id, machine_id: machineId },
  });
  const token = await FakeCollector.exchange(t.url, provisioned.body.access_key);
  const collector = await FakeCollector.connect(t.url, token, { machine_id: machineId, hostname: machineId, os: 'linux', arch: 'amd64' });
  await collector.close();
  return { token, nodeId: collector.welcome.node_id as string };
}

export const countFlows = async (t: TestApp, nodeId: string) =>
  (await t.app.flows.query<{ n: number }>('/* test_count */ SELECT count() AS n FROM flows FINAL WHERE node_id = {n:String}', { n: nodeId }))[0].n;
