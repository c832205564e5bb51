// `npm run lab`: an office network in namespaces on this machine, the breach-detection server in
// its embedded default, two sensors on the router (a collector capturing the office bridge, and
// softflowd exporting IPFIX to a second collector), benign activity and attacks made with real
// tools, then detection and what it found. docs/lab.md describes it.

import { writeFileSync } from 'node:fs';
import { type LabOptions, USAGE, UsageError, parseLabArgs } from './args.js';
import { labPassed, runLab } from './lab.js';
import { Cleanup } from './proc.js';
import { formatReport } from './report.js';
import { DEFAULT_PLAN, randomPlanOf } from './scenarios.js';

const cleanup = new Cleanup();

async function main(): Promise<number> {
  let options: LabOptions;
  try {
    options = parseLabArgs(process.argv.slice(2));
  } catch (error) {
    const message = (error as Error).message;
    process.stderr.write(`${message ? `lab: ${message}\n` : ''}${USAGE}\n`);
    return error instanceof UsageError && !message ? 0 : 2;
  }
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[lab ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
  cleanup.onSignals();
  try {
    const result = await runLab(
      {
        scenarios: options.scenarios,
        plan: options.randomize ? randomPlanOf(options.seed) : DEFAULT_PLAN,
        wanDelayMs: options.wanDelayMs,
        seed: options.seed,
        log,
        async whileUp(result, names) {
          process.stdout.write(`${formatReport(result)}\n`);
          log(`finished in ${result.durationSecs} s`);
          if (options.report) writeFileSync(options.report, JSON.stringify(result, null, 2));
          if (!options.keep) return;
          log(`--keep: namespaces stay up (ip netns exec ${names.hosts.ws1} bash), server at ${names.server}; Ctrl-C removes everything`);
          await new Promise(() => undefined);
        },
      },
      cleanup,
    );
    return labPassed(result) ? 0 : 1;
  } catch (error) {
    process.stderr.write(`lab: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await cleanup.run();
  }
}

main().then((code) => process.exit(cleanup.signalExitCode ?? code));
