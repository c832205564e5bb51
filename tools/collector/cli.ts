// The reference collector's command line: `enroll` (device flow) and `run` (the collector).
// npm run -s collector -- <command> [flags]; `help` prints the usage.

import { realpathSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type CollectorOptions, type RunningCollector, startCollector } from './collector.js';
import { EnrollError, enroll } from './enroll.js';
import { BATCH_FORMATS, type BatchFormat, DEFAULT_BATCH_FORMAT } from './ingest.js';
import { SCENARIO_KINDS, type ScenarioKind } from './flowgen/index.js';
import { LOG_LEVELS, type LogLevel, createLogger } from './logring.js';
import { hostMachineId } from './machine-id.js';
import { inspectPayload } from './meter/app/index.js';
import { checkCaptureFile } from './meter/meter-capture.js';
import { checkCaptureInterface } from './meter/tcpdump-process.js';
import { checkExportListen } from './exports-ingest.js';
import { reportBackfill } from './progress.js';
import { StateDir, defaultStateDir } from './state.js';
import { COLLECTOR_VERSION } from './version.js';

/** Linux interface names: at most 15 bytes, no slash, colon or space (the kernel's dev_valid_name, and tcpdump's `any`). */
const INTERFACE_NAME = /^(?!\.{1,2}$)[^/:\s]{1,15}$/;

/** Flags of the flow generator, which make no sense when metering captures. */
const GENERATOR_FLAGS = ['flows-per-second', 'backfill-hours', 'scenario', 'diurnal', 'seed'] as const;

export const USAGE = `Reference collector ${COLLECTOR_VERSION}

Usage:
  collector enroll --base-url URL [--hostname H] [--machine-id ID] [--state-dir DIR]
  collector run [--base-url URL] [--access-key KEY] [--flows-per-second N] [--seconds S]
                [--backfill-hours H] [--scenario KIND]... [--seed N] [--machine-id ID]
                [--state-dir DIR] [--hostname H] [--diurnal] [--batch-flows N]
                [--batch-format json|native] [--max-queued-flows N] [--flush-timeout S]
                [--log-level LEVEL]
  collector run (--pcap FILE [--pcap FILE]... | --capture IFACE [--capture IFACE]...)
                [--idle-timeout S] [--active-timeout S]
                [--base-url URL] [--access-key KEY] [--seconds S] [--machine-id ID]
                [--state-dir DIR] [--hostname H] [--batch-flows N] [--batch-format json|native]
                [--max-queued-flows N] [--flush-timeout S] [--log-level LEVEL]
  collector run --ipfix-listen HOST:PORT [--base-url URL] [--access-key KEY] [--seconds S]
                [--machine-id ID] [--state-dir DIR] [--hostname H] [--batch-flows N]
                [--batch-format json|native] [--max-queued-flows N] [--flush-timeout S]
                [--log-level LEVEL]
  collector machine-id [--machine-id ID]
  collector version | help

enroll   Device flow: prints the approval URL on stdout, waits for an operator, stores the
         access key in the state dir, prints {"status","node_id"} as JSON. Exit 1 when denied
         or expired.
run      Exchanges the access key for tokens, holds the control channel (hello, heartbeats,
         commands), generates flows and ships them. Runs until SIGINT/SIGTERM unless --seconds
         is given; then flushes what is queued and exits 0. With --pcap, meters the capture
         files instead of generating flows, and exits once their flows are acknowledged.
         With --capture, meters live packets until SIGINT/SIGTERM or --seconds, then flushes.
         With --ipfix-listen, receives flow exports until SIGINT/SIGTERM or --seconds.

Flags:
  --base-url URL          service address (run: default the one stored by enroll)
  --access-key KEY        <client_id>.<client_secret> (default $PROPHET_ACCESS_KEY, then the
                          state dir's access_key)
  --machine-id ID         default the enrolled one, else UUIDv5 of /etc/machine-id (or hostname)
  --hostname H            default the enrolled one, else os.hostname()
  --state-dir DIR         default $PROPHET_STATE_DIR, else ~/.local/state/prophet-collector
  --flows-per-second N    mean rate of generated flows, 0 for none (default 50)
  --seconds S             live seconds after the backfill; 0 = exit after the backfill
                          (default: until SIGINT/SIGTERM)
  --backfill-hours H      first send H hours of history as fast as ingest accepts, with its
                          progress on stderr (a bar on a terminal, else JSON lines); then
                          detect run --window-minutes 60xH on the server reads all of it
  --scenario KIND         plant an incident: ${SCENARIO_KINDS.join(', ')} or all; repeat or
                          comma-separate
  --seed N                flowgen seed (default: the machine id); same seed, same flows
  --diurnal               working-week shape of the rate instead of a flat rate
  --batch-flows N         flows per ingest batch (default 2000, at most 10000)
  --batch-format F        native (default): a batch goes as one ClickHouse Native block,
                          gzipped, when its flows fit the format, else as JSON; or json
  --max-queued-flows N    ingest queue cap; generation waits when it is full (default 20000)
  --flush-timeout S       on stop, seconds to wait for queued flows to be acknowledged
                          (default 30); batches already sent are still waited for
  --log-level LEVEL       ${LOG_LEVELS.join(', ')} (default info); logs are JSON lines on stderr
  --pcap FILE             meter a capture file (pcap or pcapng) with its packets' own times;
                          repeat for several, metered in order through one flow table; not
                          with --flows-per-second, --backfill-hours, --scenario, --diurnal or
                          --seed; --seconds then bounds the run (not 0)
  --capture IFACE         meter live packets from an interface (\`any\` for all) through
                          \`tcpdump -i IFACE -w -\`, which must be installed and allowed to
                          capture (root, or CAP_NET_RAW and CAP_NET_ADMIN); repeat for several,
                          metered through one flow table; not with --pcap or the generator flags
  --ipfix-listen HOST:PORT  receive NetFlow v5, v9 and IPFIX over UDP on this address
                          (0.0.0.0:4739, [::]:2055; port 0 picks one, logged as
                          exports.listening); not with --pcap, --capture or the generator flags
  --idle-timeout S        with --pcap/--capture: a flow idle this long is exported (default 30)
  --active-timeout S      with --pcap/--capture: a longer flow is exported in parts this long
                          (default 300)

Exit status: 0 done, every generated or metered flow stored; 1 refused/failed, a --pcap file
missing or not a capture, a --capture interface missing or not allowed, tcpdump missing or
ended, an --ipfix-listen address that cannot be bound, or flows lost (the summary's queued or
failed is not 0); 2 usage error.
`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const common = {
  'base-url': { type: 'string' },
  'state-dir': { type: 'string' },
  'machine-id': { type: 'string' },
  hostname: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const OPTIONS = {
  enroll: common,
  run: {
    ...common,
    'access-key': { type: 'string' },
    'flows-per-second': { type: 'string' },
    seconds: { type: 'string' },
    'backfill-hours': { type: 'string' },
    scenario: { type: 'string', multiple: true },
    seed: { type: 'string' },
    diurnal: { type: 'boolean' },
    'batch-flows': { type: 'string' },
    'batch-format': { type: 'string' },
    'max-queued-flows': { type: 'string' },
    'flush-timeout': { type: 'string' },
    pcap: { type: 'string', multiple: true },
    capture: { type: 'string', multiple: true },
    'ipfix-listen': { type: 'string' },
    'idle-timeout': { type: 'string' },
    'active-timeout': { type: 'string' },
  },
  'machine-id': { 'machine-id': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
} as const satisfies Record<string, ParseArgsConfig['options']>;

interface Common {
  baseUrl?: string;
  stateDir?: string;
  machineId?: string;
  hostname?: string;
  logLevel: LogLevel;
}

export type ParsedCli =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'machine-id'; machineId?: string }
  | ({ command: 'enroll' } & Common)
  | ({
      command: 'run';
      accessKey?: string;
      flowsPerSecond: number;
      seconds?: number;
      backfillHours: number;
      scenarios: ScenarioKind[];
      seed?: number | string;
      diurnal: boolean;
      batchFlows?: number;
      batchFormat: BatchFormat;
      maxQueuedFlows?: number;
      flushTimeoutSeconds?: number;
      /** Capture files to meter instead of generating flows; empty for none. */
      pcapFiles: string[];
      /** Interfaces to meter live instead of generating flows; empty for none. */
      captureInterfaces: string[];
      /** Where to receive flow exports instead of generating flows. */
      exportListen?: { host: string; port: number };
      idleTimeoutSeconds?: number;
      activeTimeoutSeconds?: number;
    } & Common);

/** Parses argv (without node and the script); throws UsageError. */
export function parseCli(argv: string[]): ParsedCli {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  if (command === 'version' || command === '--version') return { command: 'version' };
  if (!(command in OPTIONS)) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  let values: Record<string, unknown>;
  try {
    const options: ParseArgsConfig['options'] = OPTIONS[command as keyof typeof OPTIONS];
    values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return { command: 'help' };
  const str = (name: string) => {
    const v = values[name] as string | undefined;
    if (v !== undefined && v.trim() === '') throw new UsageError(`--${name} must not be empty`);
    // The service refuses hello fields over 256 characters.
    if (v !== undefined && v.trim().length > 256) throw new UsageError(`--${name} must be at most 256 characters`);
    return v?.trim();
  };
  if (command === 'machine-id') return { command, machineId: str('machine-id') };

  const baseUrl = str('base-url');
  if (baseUrl !== undefined) checkUrl(baseUrl);
  const logLevel = (str('log-level') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const shared: Common = { baseUrl, stateDir: str('state-dir'), machineId: str('machine-id'), hostname: str('hostname'), logLevel };
  if (command === 'enroll') return { command, ...shared };

  const seed = str('seed');
  const pcapFiles = ((values.pcap as string[] | undefined) ?? []).map((file) => {
    if (file.trim() === '') throw new UsageError('--pcap must not be empty');
    return file;
  });
  const captureInterfaces = ((values.capture as string[] | undefined) ?? []).map((iface) => {
    if (!INTERFACE_NAME.test(iface)) throw new UsageError(`--capture ${JSON.stringify(iface)} is not an interface name (1-15 characters, no /, : or spaces)`);
    return iface;
  });
  const exportListen = values['ipfix-listen'] === undefined ? undefined : hostAndPort(values['ipfix-listen'] as string);
  const sources = [pcapFiles.length > 0 && '--pcap', captureInterfaces.length > 0 && '--capture', exportListen && '--ipfix-listen'].filter(
    (s) => typeof s === 'string',
  );
  if (sources.length > 1) throw new UsageError(`${sources.join(' and ')} cannot be combined: one source of flows per run`);
  const source = sources[0];
  if (source) {
    const generatorFlag = GENERATOR_FLAGS.find((flag) => values[flag] !== undefined);
    if (generatorFlag) throw new UsageError(`--${generatorFlag} sets up generated flows; it cannot be combined with ${source}`);
    if (Number(values.seconds) === 0)
      throw new UsageError(`--seconds 0 would ${exportListen ? 'receive' : 'meter'} nothing; with ${source} give a positive bound or none`);
  }
  if (!source || exportListen) {
    const meterFlag = ['idle-timeout', 'active-timeout'].find((flag) => values[flag] !== undefined);
    if (meterFlag) throw new UsageError(`--${meterFlag} applies to metered captures; give --pcap FILE or --capture IFACE`);
  }
  return {
    command: 'run',
    ...shared,
    accessKey: str('access-key'),
    flowsPerSecond: number(values, 'flows-per-second', { min: 0, max: 1_000_000 }) ?? 50,
    seconds: number(values, 'seconds', { min: 0, max: 366 * 86_400 }),
    backfillHours: number(values, 'backfill-hours', { min: 0, max: 24 * 90 }) ?? 0,
    scenarios: scenarios((values.scenario as string[] | undefined) ?? []),
    seed: seed === undefined ? undefined : /^-?\d{1,15}$/.test(seed) ? Number(seed) : seed,
    diurnal: Boolean(values.diurnal),
    batchFlows: number(values, 'batch-flows', { min: 1, max: 10_000, integer: true }),
    batchFormat: batchFormat(str('batch-format')),
    maxQueuedFlows: number(values, 'max-queued-flows', { min: 1, max: 10_000_000, integer: true }),
    flushTimeoutSeconds: number(values, 'flush-timeout', { min: 0, max: 3600 }),
    pcapFiles,
    captureInterfaces: [...new Set(captureInterfaces)],
    exportListen,
    idleTimeoutSeconds: number(values, 'idle-timeout', { min: 1, max: 86_400 }),
    activeTimeoutSeconds: number(values, 'active-timeout', { min: 1, max: 86_400 }),
  };
}

/** `HOST:PORT`, `[IPv6]:PORT`; port 0 to 65535. */
function hostAndPort(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:\[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65_535) {
    throw new UsageError(`--ipfix-listen ${JSON.stringify(value)} is not HOST:PORT (e.g. 0.0.0.0:4739, [::]:4739; port 0 to 65535)`);
  }
  return { host: match[1] ?? match[2], port };
}

function checkUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--base-url must be http:// or https://');
}

function number(values: Record<string, unknown>, name: string, limits: { min: number; max: number; integer?: boolean }): number | undefined {
  const raw = values[name] as string | undefined;
  if (raw === undefined) return undefined;
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(n) || (limits.integer && !Number.isInteger(n)) || n < limits.min || n > limits.max) {
    throw new UsageError(`--${name} must be ${limits.integer ? 'an integer' : 'a number'} from ${limits.min} to ${limits.max}, not ${JSON.stringify(raw)}`);
  }
  return n;
}

function batchFormat(value: string = DEFAULT_BATCH_FORMAT): BatchFormat {
  if (!(BATCH_FORMATS as readonly string[]).includes(value))
    throw new UsageError(`--batch-format must be ${BATCH_FORMATS.join(' or ')}, not ${JSON.stringify(value)}`);
  return value as BatchFormat;
}

function scenarios(values: string[]): ScenarioKind[] {
  const out = new Set<ScenarioKind>();
  for (const item of values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean)) {
    if (item === 'all') SCENARIO_KINDS.forEach((k) => out.add(k));
    else if ((SCENARIO_KINDS as readonly string[]).includes(item)) out.add(item as ScenarioKind);
    else throw new UsageError(`--scenario ${JSON.stringify(item)} is not one of ${SCENARIO_KINDS.join(', ')}, all`);
  }
  return [...out];
}

/** `run` flags completed from the environment and the state dir; throws UsageError when the key or URL is missing. */
export function resolveRun(parsed: Extract<ParsedCli, { command: 'run' }>, env: NodeJS.ProcessEnv = process.env): CollectorOptions & { stateDir: string } {
  const stateDir = parsed.stateDir ?? defaultStateDir(env);
  const state = new StateDir(stateDir);
  const stored = state.read();
  const baseUrl = parsed.baseUrl ?? stored.base_url;
  if (!baseUrl) throw new UsageError('no --base-url given and none stored by `enroll` in ' + stateDir);
  const accessKey = parsed.accessKey ?? (env.PROPHET_ACCESS_KEY?.trim() || undefined) ?? state.readAccessKey();
  if (!accessKey) throw new UsageError(`no access key: pass --access-key, set PROPHET_ACCESS_KEY, or run \`enroll\` first (state dir ${stateDir})`);
  if (!/^[^.\s]+\.\S+$/.test(accessKey)) throw new UsageError('the access key must look like <client_id>.<client_secret>');
  return {
    baseUrl,
    accessKey,
    stateDir,
    machineId: parsed.machineId,
    // The name the device was enrolled (and approved) under, unless another is given.
    hostname: parsed.hostname ?? stored.hostname,
    flowsPerSecond: parsed.flowsPerSecond,
    seconds: parsed.seconds,
    backfillHours: parsed.backfillHours,
    scenarios: parsed.scenarios,
    seed: parsed.seed,
    diurnal: parsed.diurnal,
    batchFlows: parsed.batchFlows,
    batchFormat: parsed.batchFormat,
    maxQueuedFlows: parsed.maxQueuedFlows,
    flushTimeoutMs: parsed.flushTimeoutSeconds === undefined ? undefined : parsed.flushTimeoutSeconds * 1000,
    logLevel: parsed.logLevel,
    pcapFiles: parsed.pcapFiles,
    captureInterfaces: parsed.captureInterfaces,
    exportListen: parsed.exportListen,
    idleTimeoutSecs: parsed.idleTimeoutSeconds,
    activeTimeoutSecs: parsed.activeTimeoutSeconds,
    inspectors: [inspectPayload],
  };
}

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Registers a handler for SIGINT/SIGTERM; returns the unregister function. */
  onSignal: (handler: (signal: string) => void) => () => void;
  /** stderr is a terminal: a backfill's progress is a bar there, else JSON lines (progress.ts). */
  stderrIsTTY?: boolean;
}

const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  stderrIsTTY: process.stderr.isTTY === true,
  onSignal: (handler) => {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
};

/** Runs one command; resolves with the exit status. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let parsed: ParsedCli;
  try {
    parsed = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`collector: ${error.message}\nRun \`collector help\` for the usage.\n`);
    return 2;
  }
  try {
    switch (parsed.command) {
      case 'help':
        io.stdout(USAGE);
        return 0;
      case 'version':
        io.stdout(`${COLLECTOR_VERSION}\n`);
        return 0;
      case 'machine-id':
        io.stdout(`${parsed.machineId ?? hostMachineId()}\n`);
        return 0;
      case 'enroll':
        return await runEnroll(parsed, io);
      case 'run':
        return await runCollector(resolveRun(parsed, io.env), io);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`collector: ${error.message}\n`);
      return 2;
    }
    io.stderr(`collector: ${(error as Error).message}\n`);
    return 1;
  }
}

async function runEnroll(parsed: Extract<ParsedCli, { command: 'enroll' }>, io: Io): Promise<number> {
  if (!parsed.baseUrl) throw new UsageError('enroll needs --base-url');
  const state = new StateDir(parsed.stateDir ?? defaultStateDir(io.env));
  const machineId = parsed.machineId ?? hostMachineId();
  const hostname = parsed.hostname ?? osHostname();
  const logger = createLogger({ level: parsed.logLevel, write: (line) => io.stderr(line + '\n') });
  const abort = new AbortController();
  const unregister = io.onSignal(() => abort.abort());
  try {
    const result = await enroll({
      baseUrl: parsed.baseUrl,
      hostname,
      machineId,
      logger,
      signal: abort.signal,
      onAuthUrl: (start) => {
        io.stdout(`${start.auth_url}\n`);
        io.stderr(
          `To let this device (${hostname}, machine ${machineId}) join, an operator opens the URL above and approves it.\n` +
            (start.user_code ? `The page must show the code ${start.user_code}; if it shows another, do not approve.\n` : '') +
            `Waiting for the decision (the request expires in ${Math.round(start.expires_in / 60)} min)…\n`,
        );
      },
    });
    state.writeAccessKey(result.accessKey);
    state.update({ base_url: parsed.baseUrl, machine_id: machineId, hostname, node_id: result.nodeId, enrolled_at: new Date().toISOString() });
    io.stderr(`Approved: this device is enrolled as ${hostname} (machine ${machineId}). The access key is stored in ${state.accessKeyPath} (mode 0600).\n`);
    io.stdout(JSON.stringify({ status: result.status, ...(result.nodeId ? { node_id: result.nodeId } : {}), hostname, machine_id: machineId }) + '\n');
    return 0;
  } catch (error) {
    if (!(error instanceof EnrollError)) throw error;
    io.stdout(JSON.stringify({ status: error.status }) + '\n');
    io.stderr(`collector: enrolment failed: ${error.message}\n`);
    return 1;
  } finally {
    unregister();
  }
}

async function runCollector(options: CollectorOptions, io: Io): Promise<number> {
  // A file that cannot be metered is refused before the service is contacted.
  for (const file of options.pcapFiles ?? []) await checkCaptureFile(file);
  // So is an interface tcpdump cannot capture on (missing, no permission, no tcpdump).
  for (const iface of options.captureInterfaces ?? []) await checkCaptureInterface(iface);
  // And an address flow exports cannot be received on (in use, not local, privileged).
  if (options.exportListen) await checkExportListen(options.exportListen.host, options.exportListen.port);
  let log = (line: string) => io.stderr(line + '\n');
  const collector: RunningCollector = await startCollector({ ...options, waitForWelcome: false, log: (line) => log(line) });
  const progress = (options.backfillHours ?? 0) > 0 ? watchBackfill(collector, io) : undefined;
  if (progress) log = progress.log;
  let signals = 0;
  const unregister = io.onSignal((signal) => {
    if (++signals > 1) {
      io.stderr(`collector: ${signal} again, exiting without flushing\n`);
      process.exit(130);
    }
    collector.logger.info('collector.signal', { signal });
    void collector.stop();
  });
  try {
    await collector.done;
    await collector.stop();
    const { queued, failed } = collector.stats().ingest;
    io.stdout(JSON.stringify(summary(collector)) + '\n');
    // Lost: flows the service did not acknowledge, or acknowledged as refused.
    return queued + failed > 0 ? 1 : 0;
  } catch (error) {
    await collector.stop();
    io.stdout(JSON.stringify(summary(collector)) + '\n');
    io.stderr(`collector: ${(error as Error).message}\n`);
    return 1;
  } finally {
    progress?.stop();
    unregister();
  }
}

/** The backfill's progress on stderr until it ends: a bar on a terminal, else JSON lines. */
function watchBackfill(collector: RunningCollector, io: Io) {
  return reportBackfill({
    progress: () => collector.backfillProgress(),
    sent: () => collector.stats().ingest.sent,
    ended: () => {
      const { backfill_done, interrupted } = collector.stats().flows;
      return backfill_done || interrupted;
    },
    tty: io.stderrIsTTY === true,
    write: io.stderr,
    logger: collector.logger,
  });
}

function summary(collector: RunningCollector) {
  const s = collector.stats();
  const source = s.meter
    ? {
        ...(s.meter.interfaces ? { interfaces: s.meter.interfaces } : { files: s.meter.files }),
        ...(s.meter.host_context ? { host_context: s.meter.host_context } : {}),
        packets_read: s.meter.packets_read,
        packets_decoded: s.meter.packets_decoded,
        packets_dropped: s.meter.dropped,
        flows_emitted: s.meter.flows_emitted,
      }
    : s.exports
      ? { exports: s.exports, flows_emitted: s.exports.flows_emitted }
      : { flows_generated: s.flows.generated, interrupted: s.flows.interrupted };
  return { node_id: s.node_id, machine_id: s.machine_id, hostname: s.hostname, version: s.version, ...source, ...s.ingest };
}

const invokedDirectly = (() => {
  try {
    return Boolean(process.argv[1]) && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error) => {
      process.stderr.write(`collector: ${(error as Error).stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
