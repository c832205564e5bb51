import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTenant, seedTree } from '../../test/kit/seed.js';

/** Two server processes over one database (and one ClickHouse), as in production. */
describe('the tenant deletion worker', () => {
  let a: TestApp;
  let b: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ databaseUrl: a.config.databaseUrl });
    tree = await seedTree(a.app);
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  it('advances each job in one process at a time, from the progress last recorded', async () => {
    const children = await Promise.all(Array.from({ length: 3 }, () => seedTenant(a.app, { parentId: tree.msp.id })));
    const doomed = new Set(children.map((c) => c.id));
    let inside = 0;
    let most = 0;
    const calls: string[] = [];
    for (const [name, app] of [
      ['a', a],
      ['b', b],
    ] as const) {
      app.app.services.deletionHooks.register('probe', async (id, last) => {
        if (!doomed.has(id)) return { done: true, calls: 0 };
        inside++;
        most = Math.max(most, inside);
        calls.push(name);
        await new Promise((resolve) => setTimeout(resolve, 100));
        inside--;
        const made = Number(last?.calls ?? 0) + 1;
        return { done: made === 3, calls: made };
      });
    }
    // Queued through b; both processes' workers are woken (tenant_deletion_queued) and take turns.
    for (const child of children) {
      const res = await call(b.url, 'DELETE', '/rest/deployments/1.0', {
        token: tree.mspCaller.token,
        body: { customer_id: child.id, parent_id: tree.msp.id },
      });
      expect(res.status).toBe(200);
    }
    const finished = () => a.app.db.prisma.tenantDeletion.count({ where: { customerId: { in: [...doomed] }, state: 'deleted' } });
    await expect.poll(finished, { timeout: 30_000 }).toBe(3);
    expect(most).toBe(1);
    // Every call continued from the progress the one before it recorded: three per job, none repeated.
    expect(calls).toHaveLength(9);
    const jobs = await a.app.db.prisma.tenantDeletion.findMany({ where: { customerId: { in: [...doomed] } } });
    expect(jobs.map((j) => (j.steps as Record<string, { calls: number }>).probe.calls)).toEqual([3, 3, 3]);
    expect(await a.app.db.prisma.tenant.count({ where: { id: { in: [...doomed] } } })).toBe(0);
  });
});
