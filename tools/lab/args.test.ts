import { describe, expect, it } from 'vitest';
import { UsageError, parseLabArgs } from './args.js';

describe('lab arguments', () => {
  it('plays every scenario by default, in one order, with a 10 ms internet delay', () => {
    expect(parseLabArgs([])).toMatchObject({ scenarios: ['benign', 'scan', 'bruteforce', 'dns-tunnel', 'beacon', 'exfil'], keep: false, wanDelayMs: 10 });
  });

  it('takes scenarios repeated and comma-separated, once each', () => {
    expect(parseLabArgs(['--scenario', 'exfil,scan', '--scenario', 'scan', '--keep', '--seed', '7', '--randomize'])).toMatchObject({
      scenarios: ['scan', 'exfil'],
      keep: true,
      seed: 7,
      randomize: true,
    });
    expect(parseLabArgs([])).toMatchObject({ randomize: false });
  });

  it('refuses unknown scenarios, out-of-range delays, bad seeds and unknown flags', () => {
    expect(() => parseLabArgs(['--scenario', 'ransomware'])).toThrow(new UsageError('unknown scenario "ransomware"'));
    expect(() => parseLabArgs(['--wan-delay-ms', '501'])).toThrow(/from 0 to 500/);
    expect(() => parseLabArgs(['--wan-delay-ms=-1'])).toThrow(/from 0 to 500/);
    expect(() => parseLabArgs(['--wan-delay-ms', '2.5'])).toThrow(/from 0 to 500/);
    expect(() => parseLabArgs(['--seed', 'x'])).toThrow(/--seed must be an integer/);
    expect(() => parseLabArgs(['--frobnicate'])).toThrow(/Unknown option/);
  });

  it('asks for the usage on --help', () => {
    expect(() => parseLabArgs(['--help'])).toThrow(new UsageError(''));
  });
});
