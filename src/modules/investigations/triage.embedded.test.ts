import { afterAll, beforeAll, describe, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { expectOneAnswerWinsTheRace } from './triage.fixtures.js';

// Its own file (so its own process): embedded mode owns per-process engines.
describe('triage in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(() => t?.stop());

  it('serializes racing answers on one investigation', () => expectOneAnswerWinsTheRace(t));
});
