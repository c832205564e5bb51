import { afterAll, beforeAll, describe, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { expectRuleLimitHeldUnderRace } from './automation.fixtures.js';

// Its own file (so its own process): embedded mode owns per-process engines.
describe('automation in embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(() => t?.stop());

  it('keeps the rule limit under concurrent creates', () => expectRuleLimitHeldUnderRace(t));
});
