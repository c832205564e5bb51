import { describe, expect, it } from 'vitest';
import { ATTACKS, DEFAULT_PLAN, SCENARIO_NAMES, WORKSTATIONS, expectedInvestigations, randomPlanOf } from './scenarios.js';

describe('lab plans', () => {
  it('the same seed gives the same plan, another seed another', () => {
    expect(randomPlanOf(7)).toEqual(randomPlanOf(7));
    expect(randomPlanOf(7)).not.toEqual(randomPlanOf(8));
  });

  it('random plans stay within what the detectors are built to find', () => {
    for (let seed = 0; seed < 300; seed++) {
      const plan = randomPlanOf(seed);
      for (const attack of ATTACKS) {
        expect(WORKSTATIONS).toContain(plan.attackers[attack]);
        expect(plan.startDelaySecs[attack]).toBeGreaterThanOrEqual(0);
        expect(plan.startDelaySecs[attack]).toBeLessThanOrEqual(20);
      }
      expect(plan.beacon.sessions).toBeGreaterThanOrEqual(13);
      expect(plan.beacon.sessions).toBeLessThanOrEqual(15);
      expect(plan.beacon.gapMs).toBeGreaterThanOrEqual(10_500);
      expect(plan.beacon.gapMs * (1 - plan.beacon.jitter)).toBeGreaterThan(8_000);
      expect(plan.beacon.jitter).toBeLessThanOrEqual(0.2);
      expect(plan.scanPorts).toBeGreaterThanOrEqual(60);
      expect(plan.exfilBytes).toBeGreaterThan(200 * 2 ** 20);
      expect(plan.tunnelBytes).toBeGreaterThanOrEqual(300 * 1024);
    }
    // Over many seeds every workstation plays every attack.
    const hosts = new Set(Array.from({ length: 100 }, (_, seed) => randomPlanOf(seed).attackers.beacon));
    expect([...hosts].sort()).toEqual(WORKSTATIONS);
  });

  it('expects one investigation per attack, from the planned host', () => {
    const plan = { ...DEFAULT_PLAN, attackers: { ...DEFAULT_PLAN.attackers, exfil: 'ws4' } };
    const expected = expectedInvestigations(SCENARIO_NAMES, plan);
    expect(expected.map((e) => e.detector)).toEqual([...ATTACKS]);
    expect(expected.find((e) => e.detector === 'exfil')).toEqual({ detector: 'exfil', sourceHost: 'ws4', source: '10.10.0.14', destination: 'Files Drop' });
    expect(expectedInvestigations(['benign'], plan)).toEqual([]);
  });
});
