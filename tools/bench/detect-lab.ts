/**
 * `npm run bench:detect -- --lab [--runs N] [--seed N] [--report FILE]`: detection quality on real
 * traffic. Runs the lab (tools/lab, docs/lab.md) N times, each with every scenario and a plan drawn
 * from its seed (attack hosts, start times, the beacon's sessions, gap and jitter, nmap's ports,
 * transfer sizes: `randomPlan`), then prints per detector how many attacks were found (recall) and
 * how many investigations no attack explains (false positives), and the totals. Needs root.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type LabResult, runLab } from '../lab/lab.js';
import { Cleanup } from '../lab/proc.js';
import { flowsSent } from '../lab/report.js';
import { ATTACKS, type Attack, SCENARIO_NAMES, randomPlanOf } from '../lab/scenarios.js';

export const LAB_BENCH_USAGE = `usage: npm run bench:detect -- --lab [--runs N] [--seed N] [--report FILE]

  --runs N       lab runs, 1 to 20 (default 3); each takes 4-5 minutes
  --seed N       seed of the first run; run i uses seed + i (default: the pid)
  --report FILE  also write every run's result and the tally as JSON`;

/** Most runs one bench may ask for: each is minutes of a busy machine. */
export const MAX_LAB_RUNS = 20;

export interface LabBenchOptions {
  runs: number;
  seed: number;
  report?: string;
}

export class LabBenchUsageError extends Error {}

export function parseLabBenchArgs(argv: string[]): LabBenchOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { lab: { type: 'boolean', default: false }, runs: { type: 'string', default: '3' }, seed: { type: 'string' }, report: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    throw new LabBenchUsageError((error as Error).message);
  }
  if (!values.lab) throw new LabBenchUsageError('--lab is required for these options');
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > MAX_LAB_RUNS) throw new LabBenchUsageError(`--runs must be an integer from 1 to ${MAX_LAB_RUNS}`);
  const seed = values.seed === undefined ? process.pid : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new LabBenchUsageError('--seed must be an integer');
  return { runs, seed, report: values.report };
}

export interface DetectorTally {
  played: number;
  /** Attacks that opened at least one investigation of their detector, source and destination. */
  found: number;
  /** Investigations of this detector no attack explains, plus an attack's matches beyond its first. */
  falsePositives: number;
}

export type LabTally = Record<Attack, DetectorTally> & { total: DetectorTally };

/** Recall and false positives per detector over the runs' reports. */
export function tallyLabRuns(reports: Pick<LabResult, 'outcomes' | 'unexpected'>[]): LabTally {
  const empty = (): DetectorTally => ({ played: 0, found: 0, falsePositives: 0 });
  const tally = Object.fromEntries([...ATTACKS, 'total'].map((k) => [k, empty()])) as LabTally;
  const add = (detector: string, field: keyof DetectorTally, n = 1) => {
    // An investigation of a detector the lab does not play still counts in the total.
    if (detector in tally && detector !== 'total') tally[detector as Attack][field] += n;
    tally.total[field] += n;
  };
  for (const report of reports) {
    for (const outcome of report.outcomes) {
      add(outcome.expected.detector, 'played');
      if (outcome.matches.length > 0) add(outcome.expected.detector, 'found');
      if (outcome.matches.length > 1) add(outcome.expected.detector, 'falsePositives', outcome.matches.length - 1);
    }
    for (const extra of report.unexpected) add(extra.detector, 'falsePositives');
  }
  return tally;
}

export function formatLabTally(tally: LabTally): string {
  const row = (name: string, t: DetectorTally) =>
    `  ${name.padEnd(11)} recall ${`${t.found}/${t.played}`.padStart(6)} ${t.played ? `(${((t.found / t.played) * 100).toFixed(0)}%)`.padStart(6) : '     -'}  false positives ${t.falsePositives}`;
  return [...ATTACKS.map((a) => row(a, tally[a])), row('total', tally.total)].join('\n');
}

/** One line per run: its seed, duration, plan, what each sensor delivered and what was found. */
function runLine(i: number, r: LabResult): string {
  const found = r.outcomes.filter((o) => o.matches.length > 0).length;
  const plan = ATTACKS.map((a) => `${a} ${r.plan.attackers[a]}+${r.plan.startDelaySecs[a]}s`).join(', ');
  const beacon = `beacon ${r.plan.beacon.sessions}×${(r.plan.beacon.gapMs / 1000).toFixed(1)} s ±${Math.round(r.plan.beacon.jitter * 100)}%`;
  const sensors = r.sensors.map((s) => `${s.name} ${flowsSent(s)} flows`).join(', ');
  return `  run ${i + 1} seed ${r.seed}: ${r.durationSecs} s; found ${found}/${r.outcomes.length}; false positives ${r.unexpected.length}; ${sensors}\n    ${plan}; ${beacon}; nmap top ${r.plan.scanPorts}; exfil ${Math.round(r.plan.exfilBytes / 2 ** 20)} MiB; tunnel ${Math.round(r.plan.tunnelBytes / 1024)} KiB`;
}

export async function labBench(argv: string[]): Promise<number> {
  let options: LabBenchOptions;
  try {
    options = parseLabBenchArgs(argv);
  } catch (error) {
    process.stderr.write(`bench:detect: ${(error as Error).message}\n${LAB_BENCH_USAGE}\n`);
    return 2;
  }
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const cleanup = new Cleanup();
  cleanup.onSignals();
  const results: LabResult[] = [];
  console.log(`lab: ${options.runs} runs of every scenario, each with a plan drawn from its seed (${options.seed}..${options.seed + options.runs - 1})`);
  try {
    for (let i = 0; i < options.runs; i++) {
      const seed = options.seed + i;
      try {
        results.push(await runLab({ scenarios: [...SCENARIO_NAMES], plan: randomPlanOf(seed), seed, wanDelayMs: 10, log }, cleanup));
      } finally {
        await cleanup.run();
      }
      console.log(runLine(i, results[i]));
    }
  } catch (error) {
    process.stderr.write(`bench:detect: lab run ${results.length + 1} failed: ${(error as Error).message}\n`);
    return 1;
  }
  const tally = tallyLabRuns(results);
  console.log(formatLabTally(tally));
  if (options.report) writeFileSync(options.report, JSON.stringify({ runs: results, tally }, null, 2));
  return 0;
}
