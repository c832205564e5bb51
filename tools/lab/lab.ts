// One run of the lab: the network, the server, the sensors, the traffic, detection and what it
// found. `npm run lab` (cli.ts) runs it once; `npm run bench:detect -- --lab` runs it several
// times with random plans. docs/lab.md describes it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../collector/flowgen/prng.js';
import { ensurePackages } from './packages.js';
import { type Cleanup, run } from './proc.js';
import { type LabReport, detectAndReport } from './report.js';
import { type LabPlan, type ScenarioName, expectedInvestigations, playScenarios } from './scenarios.js';
import { type SensorSummary, startExportSensor, startPacketSensor } from './sensors.js';
import { createTenant, provisionCollector, startServer } from './server.js';
import { makeCredentials, startServices } from './services.js';
import { buildTopology, namespaceNames, removeStaleLabs } from './topology.js';

/** Detection reads the whole run: the lab lasts minutes, this covers it with room. */
const DETECTION_WINDOW_MINUTES = 30;

export interface LabRunOptions {
  scenarios: ScenarioName[];
  plan: LabPlan;
  wanDelayMs: number;
  /** Seed of the benign choices and the beacon's jitter. */
  seed: number;
  log(line: string): void;
  /** Called with the result before the run's resources are released (`--keep` waits here). */
  whileUp?(result: LabResult, names: ReturnType<typeof namespaceNames>): Promise<void>;
}

export interface LabResult extends LabReport {
  seed: number;
  scenarios: ScenarioName[];
  plan: LabPlan;
  /** Each sensor's node and the collector's summary (flows sent per sensor). */
  sensors: SensorSummary[];
  durationSecs: number;
}

/** Every attack opened exactly one investigation of its detector, source and destination, and nothing else opened. */
export const labPassed = (result: LabReport): boolean => result.outcomes.every((o) => o.matches.length === 1) && result.unexpected.length === 0;

/** Runs the lab once; everything it creates is registered with `cleanup`, which the caller runs. */
export async function runLab(options: LabRunOptions, cleanup: Cleanup): Promise<LabResult> {
  const started = Date.now();
  const { log } = options;
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
  const sensorOf = async (name: string, ns = names.router) => ({
    name,
    machineId: `lab-${runId}-${name}`,
    accessKey: await provisionCollector(server, tenant, `lab-${runId}-${name}`),
    ns,
    dir,
  });
  // The workstation sensor sits on the brute forcer (by default also the exfiltrator).
  const workstation = options.plan.attackers.bruteforce;
  const sensors = await Promise.all([
    sensorOf('router').then((o) => startPacketSensor(o, cleanup)),
    sensorOf('softflowd').then((o) => startExportSensor(o, cleanup)),
    sensorOf(workstation, names.hosts[workstation]).then((o) => startPacketSensor({ ...o, iface: 'eth0' }, cleanup)),
  ]);
  log(`sensors up: collectors capturing br0 and ${workstation}'s eth0, softflowd exporting IPFIX to a third; playing ${options.scenarios.join(', ')}`);

  // The jitter and choices of a run, repeatable from its seed (the flow generator's PRNG).
  const prng = Prng.from(options.seed);
  await playScenarios(options.scenarios, {
    names,
    files,
    cleanup,
    random: () => prng.next(),
    plan: options.plan,
    log,
    async on(host, argv, timeoutMs) {
      const result = await run(argv, { ns: names.hosts[host], timeoutMs, cwd: dir });
      if (result.code !== 0) log(`${host}: ${argv[0]} exited ${result.code}: ${result.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      return result;
    },
  });
  log('traffic done; stopping the sensors (each exports every open flow)');
  const summaries = await Promise.all(sensors.map((s) => s.finish()));
  for (const s of summaries) log(`${s.name}: ${JSON.stringify(s.summary)}${s.capture ? ` capture ${JSON.stringify(s.capture)}` : ''}`);

  log('running detection');
  const report = await detectAndReport(server, tenant, DETECTION_WINDOW_MINUTES, expectedInvestigations(options.scenarios, options.plan));
  const result: LabResult = {
    seed: options.seed,
    scenarios: options.scenarios,
    plan: options.plan,
    sensors: summaries,
    ...report,
    durationSecs: Math.round((Date.now() - started) / 1000),
  };
  await options.whileUp?.(result, names);
  return result;
}
