/**
 * Test material shared by the triage tests (not server code), run on PostgreSQL (triage.test.ts)
 * and on embedded PGlite (triage.embedded.test.ts), whose single connection takes row locks and
 * transactions its own way.
 */
import { expect } from 'vitest';
import type { TestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { seedInvestigation } from './investigations.fixtures.js';

/** Four AUTHORIZED answers race on one investigation: one wins, one suppression and one answer are stored. */
export async function expectOneAnswerWinsTheRace(t: TestApp): Promise<void> {
  const tenant = await seedTenant(t.app);
  const caller = await seedCaller(t.app, tenant.id);
  const id = await seedInvestigation(t.app.db.prisma, tenant.id);
  const answer = 'mutation ($id: String!) { answerInvestigation(id: $id, answer: AUTHORIZED) { id } }';
  const results = await Promise.all(Array.from({ length: 4 }, () => graphql(t.url, answer, { id }, caller.token)));
  expect(results.filter((r) => !r.errors)).toHaveLength(1);
  expect(results.map((r) => r.errors?.[0]?.extensions?.code).filter(Boolean)).toEqual(Array(3).fill('invalid_transition'));
  expect(await t.app.db.prisma.suppression.count({ where: { investigationId: id } })).toBe(1);
  expect(await t.app.db.prisma.investigationActivity.count({ where: { investigationId: id, kind: 'answered' } })).toBe(1);
}
