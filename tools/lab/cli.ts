// `npm run lab`: an office network in namespaces on this machine, the breach-detection server in
// its embedded default, a collector on the router, benign activity and attacks made with real
// tools, then detection and what it found. docs/lab.md describes it.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../collector/flowgen/prng.js';
import { ensurePackages } from './packages.js';
import { Cleanup, run } from './proc.js';
import { detectAndReport, formatReport } from './report.js';
import { type LabOptions, USAGE, UsageError, parseLabArgs } from './args.js';
import { type Expected, playScenarios, scenario } from './scenarios.js';
import { startPacketSensor } from './sensors.js';
import { createTenant, provisionCollector, startServer } from './server.js';
import { makeCredentials, startServices } from './services.js';
import { buildTopology, namespaceNames, removeStaleLabs } from './topology.js';

/** Detection reads the whole run: the lab lasts minutes, this covers it with room. */
const DETECTION_WINDOW_MINUTES = 30;

async function runLab(options: LabOptions, cleanup: Cleanup): Promise<boolean> {
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[lab ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
  if (process.getuid?.() !== 0) throw new Error('the lab creates network namespaces: run it as root');
  await ensurePackages(log);
  await removeStaleLabs(log);

  const dir = mkdtempSync(join(tmpdir(), 'bdlab-'));
  cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  const names = namespaceNames(process.pid);
  log(`building namespaces ${names.router}, ${names.inet}, ${names.server}, ${Object.values(names.hosts).join(', ')}`);
  const { wanDelay } = await buildTopology(names, { wanDelayMs: options.wanDelayMs }, cleanup);
  log(`topology up (internet link delay: ${wanDelay}); starting the server and the services; files in ${dir}`);
  const [server, files] = await Promise.all([
    startServer({ ns: names.server, apiNs: names.router, dir }, cleanup),
    makeCredentials(dir).then(async (files) => {
      await startServices(names, files, cleanup);
      return files;
    }),
  ]);
  const runId = `${process.pid}`;
  const tenant = await createTenant(server, runId, dir);
  log(`server up, tenant ${tenant.customerId}`);
  const accessKey = await provisionCollector(server, tenant, `lab-${runId}-router`);
  const sensor = await startPacketSensor({ name: 'router', machineId: `lab-${runId}-router`, accessKey, ns: names.router, dir }, cleanup);
  log(`collector capturing on the router; playing ${options.scenarios.join(', ')}`);

  // The jitter and choices of a run, repeatable from its seed (the flow generator's PRNG).
  const prng = Prng.from(options.seed);
  const random = () => prng.next();
  await playScenarios(options.scenarios, {
    names,
    files,
    cleanup,
    random,
    log,
    async on(host, argv, timeoutMs) {
      const result = await run(argv, { ns: names.hosts[host], timeoutMs, cwd: dir });
      if (result.code !== 0) log(`${host}: ${argv[0]} exited ${result.code}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      return result;
    },
  });
  log('traffic done; stopping the collector (it exports every open flow)');
  const { summary } = await sensor.finish();
  log(`collector: ${JSON.stringify(summary)}`);

  const expected: Expected[] = options.scenarios.flatMap((name) => scenario(name).expected ?? []);
  log('running detection');
  const report = await detectAndReport(server, tenant, DETECTION_WINDOW_MINUTES, expected);
  process.stdout.write(`${formatReport(report)}\n`);
  log(`finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (options.report) writeFileSync(options.report, JSON.stringify({ seed: options.seed, scenarios: options.scenarios, collector: summary, ...report }, null, 2));

  if (options.keep) {
    log(`--keep: namespaces stay up (ip netns exec ${names.hosts.ws1} bash), server at ${names.server}; Ctrl-C removes everything`);
    await new Promise(() => undefined);
  }
  return report.outcomes.every((o) => o.matches.length === 1) && report.unexpected.length === 0;
}

async function main(): Promise<number> {
  let options: LabOptions;
  try {
    options = parseLabArgs(process.argv.slice(2));
  } catch (error) {
    const message = (error as Error).message;
    process.stderr.write(`${message ? `lab: ${message}\n` : ''}${USAGE}\n`);
    return error instanceof UsageError && !message ? 0 : 2;
  }
  const cleanup = new Cleanup();
  cleanup.onSignals();
  try {
    return (await runLab(options, cleanup)) ? 0 : 1;
  } catch (error) {
    process.stderr.write(`lab: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await cleanup.run();
  }
}

main().then((code) => process.exit(code));
