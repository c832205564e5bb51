import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { seedTenant } from '../../../test/kit/seed.js';
import { IngestClaimsStore } from './ingest-claims.store.js';

describe('ingest claims across server processes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.stop());

  it('lets one process at a time hold a batch, and a lapsed claim be taken over', async () => {
    const tenant = await seedTenant(t.app);
    const prisma = t.app.db.prisma;
    // Two stores are two processes: each has its own instance id.
    const [first, second] = [new IngestClaimsStore(prisma), new IngestClaimsStore(prisma)];
    const [a, b, c] = ['a', 'b', 'c'].map((id) => ({ customerId: tenant.id, token: `${tenant.id}:n1:${id}` }));

    expect([...(await first.claim([a, b]))].sort()).toEqual([a.token, b.token]);
    expect([...(await second.claim([b, c]))]).toEqual([c.token]);
    // Claiming again what it holds renews it.
    expect([...(await first.claim([a]))]).toEqual([a.token]);

    await first.release([b]);
    expect([...(await second.claim([b]))]).toEqual([b.token]);
    // A release by a process that does not hold the claim changes nothing.
    await first.release([b]);
    expect([...(await first.claim([b]))]).toEqual([]);

    // The holder died: its claim lapses.
    await prisma.ingestClaim.updateMany({ where: { customerId: tenant.id, token: a.token }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect([...(await second.claim([a]))]).toEqual([a.token]);
  });

  it('goes with its tenant', async () => {
    const tenant = await seedTenant(t.app);
    const store = new IngestClaimsStore(t.app.db.prisma);
    await store.claim([{ customerId: tenant.id, token: `${tenant.id}:n1:x` }]);
    await t.app.db.prisma.tenant.delete({ where: { id: tenant.id } });
    expect(await t.app.db.prisma.ingestClaim.count({ where: { customerId: tenant.id } })).toBe(0);
  });
});
