// The collector CLI as an e2e test runs it inside a test namespace: a node provisioned on the real
// service for the seeded child tenant, and the process reaching the service through a loopback
// bridge (netns.ts) with that node's key, in a state directory under `dir`.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { TestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import type { seedTree } from '../../../test/kit/seed.js';
import { type CliProcess, spawnCli } from './cli-process.js';
import { bridgeLoopback, type NamespaceEnd } from './netns.js';

export interface CliInNamespace {
  cli: CliProcess;
  machineId: string;
  /** The bridge's port inside the namespace: the collector's connections to the service go to it. */
  bridgePort: number;
}

/** Runs `collector run ARGS` inside `end`'s namespace against `t`; everything it starts is in `cleanups`. */
export async function startCliInNamespace(options: {
  t: TestApp;
  tree: Awaited<ReturnType<typeof seedTree>>;
  end: NamespaceEnd;
  dir: string;
  args: string[];
  cleanups: Array<() => unknown>;
}): Promise<CliInNamespace> {
  const { t, tree, end, dir, args, cleanups } = options;
  const bridge = await bridgeLoopback(end, Number(new URL(t.url).port), join(dir, 'service.sock'));
  cleanups.push(() => bridge.close());
  const machineId = `ns-${randomUUID()}`;
  const provisioned = await call(t.url, 'POST', '/rest/nodes/provision/1.0', {
    token: tree.mspCaller.token,
    body: { customer_id: tree.childA.id, machine_id: machineId, description: 'collector in a test namespace' },
  });
  if (provisioned.status !== 201) throw new Error(`provision answered ${provisioned.status}: ${JSON.stringify(provisioned.body)}`);
  const credentials = [
    '--base-url',
    `http://127.0.0.1:${bridge.port}`,
    '--access-key',
    provisioned.body.access_key,
    '--machine-id',
    machineId,
    '--state-dir',
    join(dir, 'state'),
  ];
  const cli = spawnCli(['run', ...args, ...credentials], cleanups, { prefix: end.exec });
  return { cli, machineId, bridgePort: bridge.port };
}
