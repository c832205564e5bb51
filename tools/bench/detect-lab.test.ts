import { describe, expect, it } from 'vitest';
import type { Found, Outcome } from '../lab/report.js';
import { LabBenchUsageError, MAX_LAB_RUNS, formatLabTally, parseLabBenchArgs, tallyLabRuns } from './detect-lab.js';

describe('bench:detect -- --lab arguments', () => {
  it('runs three times by default from the pid as seed', () => {
    expect(parseLabBenchArgs(['--lab'])).toEqual({ runs: 3, seed: process.pid, report: undefined });
    expect(parseLabBenchArgs(['--lab', '--runs', '5', '--seed', '42', '--report', 'r.json'])).toEqual({ runs: 5, seed: 42, report: 'r.json' });
  });

  it('refuses runs out of 1..20, bad seeds, unknown flags and a missing --lab', () => {
    for (const runs of ['0', String(MAX_LAB_RUNS + 1), '2.5', 'x'])
      expect(() => parseLabBenchArgs(['--lab', '--runs', runs])).toThrow(/--runs must be an integer from 1 to 20/);
    expect(() => parseLabBenchArgs(['--lab', '--seed', '1e400'])).toThrow(/--seed must be an integer/);
    expect(() => parseLabBenchArgs(['--lab', '--frobnicate'])).toThrow(LabBenchUsageError);
    expect(() => parseLabBenchArgs(['--runs', '2'])).toThrow(/--lab is required/);
  });
});

const found = (detector: string, source = '10.10.0.11'): Found => ({
  id: `${detector}-${source}-${Math.random()}`,
  detector,
  source,
  sourceHost: 'ws1',
  destination: 'x',
  disposition: 'malicious',
  confidence: 0.8,
  process: 'curl',
  headline: '',
});
const outcome = (detector: Outcome['expected']['detector'], matches: number): Outcome => ({
  expected: { detector, sourceHost: 'ws1', source: '10.10.0.11', destination: 'x' },
  matches: Array.from({ length: matches }, () => found(detector)),
});

describe('the recall and false-positive tally', () => {
  it('counts an attack found once as found, missed as not, found twice as found plus a false positive', () => {
    const tally = tallyLabRuns([
      { outcomes: [outcome('scan', 1), outcome('beacon', 0), outcome('exfil', 2)], unexpected: [] },
      { outcomes: [outcome('scan', 1), outcome('beacon', 1), outcome('exfil', 1)], unexpected: [found('scan', '10.10.0.12'), found('bruteforce')] },
    ]);
    expect(tally.scan).toEqual({ played: 2, found: 2, falsePositives: 1 });
    expect(tally.beacon).toEqual({ played: 2, found: 1, falsePositives: 0 });
    expect(tally.exfil).toEqual({ played: 2, found: 2, falsePositives: 1 });
    expect(tally.bruteforce).toEqual({ played: 0, found: 0, falsePositives: 1 });
    expect(tally.total).toEqual({ played: 6, found: 5, falsePositives: 3 });
    expect(formatLabTally(tally)).toContain('beacon      recall    1/2  (50%)  false positives 0');
    expect(formatLabTally(tally)).toContain('total       recall    5/6  (83%)  false positives 3');
  });

  it('counts an investigation of a detector the lab does not play in the total only', () => {
    const tally = tallyLabRuns([{ outcomes: [], unexpected: [found('ransomware')] }]);
    expect(tally.total.falsePositives).toBe(1);
    expect(formatLabTally(tally)).toContain('dns-tunnel  recall    0/0      -  false positives 0');
  });
});
