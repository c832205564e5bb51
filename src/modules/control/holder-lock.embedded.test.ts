import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../../../test/kit/app.js';
import { FakeCollector } from '../../../test/kit/fake-collector.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

/** The single embedded server (PGlite in DATA_DIR): its own file, as chDB opens one directory per process. */
describe('control channels across a restart of the embedded server', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bd-embedded-control-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('are released when the previous incarnation died holding them', { timeout: 180_000 }, async () => {
    const first = await startTestApp({ embedded: true, dataDir, env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    const tree = await seedTree(first.app);
    let nodeId: string;
    try {
      const provisioned = await call(first.url, 'POST', '/rest/nodes/provision/1.0', {
        token: tree.mspCaller.token,
        body: { customer_id: tree.childA.id, machine_id: 'embedded-crash' },
      });
      const token = await FakeCollector.exchange(first.url, provisioned.body.access_key);
      const collector = await FakeCollector.connect(first.url, token, { machine_id: 'embedded-crash', os: 'linux', arch: 'amd64' });
      nodeId = collector.welcome.node_id;
      const held = await first.app.db.prisma.node.findUniqueOrThrow({ where: { id: nodeId } });
      await collector.close();
      await expect.poll(async () => (await first.app.db.prisma.node.findUniqueOrThrow({ where: { id: nodeId } })).controlSession).toBeNull();
      // What SIGKILL leaves behind (the process never closes the channel): the row still names it.
      // Last heard from minutes ago, as reported, so only the channel made the node connected.
      await first.app.db.prisma.node.update({
        where: { id: nodeId },
        data: { controlSession: held.controlSession, controlConnectedAt: new Date(), lastSeenAt: new Date(Date.now() - 5 * 60_000) },
      });
    } finally {
      await first.stop();
    }

    const restarted = await startTestApp({ embedded: true, dataDir, env: { COMMAND_TIMEOUT_SCALE: '0.2' } });
    try {
      const node = await call(restarted.url, 'GET', `/rest/nodes/1.0/${nodeId}`, { token: tree.mspCaller.token });
      expect(node.body).toMatchObject({ connection: { control_plane: false }, health: { status: 'degraded' } });
      const diagnostics = await call(restarted.url, 'GET', `/rest/nodes/1.0/${nodeId}/diagnostics`, { token: tree.mspCaller.token });
      expect(diagnostics.status).toBe(409);
      expect(diagnostics.body.code).toBe('not_connected');
    } finally {
      await restarted.stop();
    }
  });
});
