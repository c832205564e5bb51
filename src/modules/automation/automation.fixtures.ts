/**
 * Test material shared by the automation tests (not server code): it seeds and counts rules
 * straight in the table, where going through the API would take a hundred requests.
 */
import { expect } from 'vitest';
import type { TestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { RULE_LIMITS } from './automation.service.js';

/**
 * Test scenario, run on PostgreSQL (automation.test.ts) and on PGlite (automation.embedded.test.ts):
 * a tenant three rules short of the limit gets eight concurrent creates; exactly three may win.
 */
export async function expectRuleLimitHeldUnderRace(t: TestApp): Promise<void> {
  const tenant = await seedTenant(t.app);
  const caller = await seedCaller(t.app, tenant.id);
  const limit = RULE_LIMITS.rulesPerTenant;
  await t.app.db.prisma.automationRule.createMany({
    data: Array.from({ length: limit - 3 }, (_, i) => ({
      id: `rule_race${i}_${tenant.id}`,
      customerId: tenant.id,
      name: 'n',
      topic: 'detections',
      action: 'collector_update',
    })),
  });
  const body = { name: 'racer', match: { topic: 'detections' }, action: { type: 'collector_update' } };
  const results = await Promise.all(Array.from({ length: 8 }, () => call(t.url, 'POST', '/rest/automation/1.0', { token: caller.token, body })));
  expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 409, 409, 409, 409, 409]);
  expect(results.filter((r) => r.status === 409).map((r) => r.body.code)).toEqual(Array(5).fill('rule_limit_reached'));
  expect(await t.app.db.prisma.automationRule.count({ where: { customerId: tenant.id } })).toBe(limit);
}
