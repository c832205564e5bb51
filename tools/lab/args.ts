// The lab's command line: which scenarios, and how the run behaves.

import { parseArgs } from 'node:util';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.js';

export const USAGE = `usage: npm run lab -- [--scenario NAME]... [--keep] [--wan-delay-ms N] [--seed N] [--randomize] [--report FILE]

  --scenario NAME   benign, scan, bruteforce, dns-tunnel, beacon, exfil or all (default);
                    repeat or comma-separate
  --keep            after the summary, leave everything running until Ctrl-C
  --wan-delay-ms N  one-way delay on the internet link (tc netem), default 10; 0 = none
  --seed N          seed of the timing jitter and choices (default: the pid)
  --randomize       draw the attack hosts, start times, beacon cadence and sizes from the seed
  --report FILE     also write the result as JSON

Runs as root (network namespaces). Exit 0 when every attack played opened exactly one
investigation of its detector, source and destination, and nothing else was opened.`;

export interface LabOptions {
  scenarios: ScenarioName[];
  keep: boolean;
  wanDelayMs: number;
  seed: number;
  /** Draw the run's plan from the seed (randomPlanOf) instead of the lab's fixed one. */
  randomize: boolean;
  report?: string;
}

export function parseLabArgs(argv: string[]): LabOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string', multiple: true },
      keep: { type: 'boolean', default: false },
      'wan-delay-ms': { type: 'string', default: '10' },
      seed: { type: 'string' },
      randomize: { type: 'boolean', default: false },
      report: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) throw new UsageError('');
  const asked = (values.scenario ?? ['all']).flatMap((s) => s.split(',')).map((s) => s.trim());
  const scenarios = new Set<ScenarioName>();
  for (const name of asked) {
    if (name === 'all') for (const all of SCENARIO_NAMES) scenarios.add(all);
    else if ((SCENARIO_NAMES as readonly string[]).includes(name)) scenarios.add(name as ScenarioName);
    else throw new UsageError(`unknown scenario "${name}"`);
  }
  const wanDelayMs = Number(values['wan-delay-ms']);
  if (!Number.isInteger(wanDelayMs) || wanDelayMs < 0 || wanDelayMs > 500) throw new UsageError('--wan-delay-ms must be an integer from 0 to 500');
  const seed = values.seed === undefined ? process.pid : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed must be an integer');
  return { scenarios: SCENARIO_NAMES.filter((s) => scenarios.has(s)), keep: values.keep, wanDelayMs, seed, randomize: values.randomize, report: values.report };
}

export class UsageError extends Error {}
