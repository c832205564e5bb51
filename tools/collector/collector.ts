// startCollector(): one collector, in-process: token, control channel, flows, ingest. The CLI's
// `run` is this plus argument parsing and signals; tests and benchmarks call it directly.

import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { TokenSource } from './auth.js';
import { type BackoffOptions, sleep } from './backoff.js';
import { createCommands, type CollectorContext } from './commands/index.js';
import { ControlChannel, type ControlStats, type Welcome } from './control.js';
import { hostFacts } from './facts.js';
import { type BackfillProgress, FlowPump, type FlowStats, emptyFlowStats } from './flows.js';
import { ProcessSockets, type ProcessSocketsStats } from './host/process-sockets.js';
import type { Incident, ScenarioKind } from './flowgen/index.js';
import { type Fetch, joinUrl } from './http.js';
import {
  type BatchFormat,
  DEFAULT_BATCH_FLOWS,
  DEFAULT_BATCH_FORMAT,
  DEFAULT_MAX_QUEUED_FLOWS,
  IngestQueue,
  type IngestStats,
  batchIdPrefix,
} from './ingest.js';
import { createLogger, type Logger, type LogLevel } from './logring.js';
import { hostMachineId } from './machine-id.js';
import { ExportIngest, type ExportIngestStats, hostPort } from './exports-ingest.js';
import { LiveCapture, type InterfaceStats } from './meter/live-capture.js';
import { CaptureMeter, type MeterStats } from './meter/meter-capture.js';
import type { PayloadInspector } from './meter/packet.js';
import { RuntimeMonitor } from './runtime.js';
import { StateDir, defaultStateDir } from './state.js';
import { COLLECTOR_VERSION } from './version.js';

export interface CollectorOptions {
  baseUrl: string;
  accessKey: string;
  /** Default: the state dir's, else derived from this host (machine-id.ts). */
  machineId?: string;
  /** Default os.hostname(). */
  hostname?: string;
  /** Default defaultStateDir(). */
  stateDir?: string;
  /** Mean rate of generated flows; 0 generates none. Default 50, and none when metering captures. */
  flowsPerSecond?: number;
  /**
   * Capture files (pcap, pcapng) metered in order, through one flow table, instead of generated
   * flows; the collector stops once they are metered and their flows acknowledged.
   */
  pcapFiles?: readonly string[];
  /**
   * Interfaces metered live (tcpdump on each, one flow table) instead of generated flows; runs
   * until stop() or `seconds`. Not with pcapFiles.
   */
  captureInterfaces?: readonly string[];
  /**
   * Receive NetFlow v5/v9 and IPFIX exports on this UDP address (port 0: a free one, logged as
   * `exports.listening`) instead of generating flows; runs until stop() or `seconds`. Not with
   * captures.
   */
  exportListen?: { host: string; port: number };
  /** Export records held while ingest is full; beyond it they are dropped and counted. Default 50,000. */
  maxExportBacklog?: number;
  /** The meter's flow timeouts (seconds). Defaults 30 and 300. */
  idleTimeoutSecs?: number;
  activeTimeoutSecs?: number;
  /** Payload inspectors that add app hints (DNS, TLS, HTTP, …) to metered flows. */
  inspectors?: readonly PayloadInspector[];
  /** Seconds of live flows; undefined = until stop(), 0 = none (exit after the backfill). */
  seconds?: number;
  backfillHours?: number;
  scenarios?: ScenarioKind[];
  /** Default: the machine id, so one host always generates the same traffic. */
  seed?: number | string;
  /** Working-day shape of the rate (flowgen's diurnal). Default false: a flat rate. */
  diurnal?: boolean;
  kind?: 'managed' | 'legacy';
  /** Reported until the service's config names one. Default: the state dir's, else stable. */
  updateChannel?: string;
  logLevel?: LogLevel;
  /** Where log lines go besides the ring; default stderr, null for nowhere. */
  log?: ((line: string) => void) | null;
  batchFlows?: number;
  maxQueuedFlows?: number;
  ingestConcurrency?: number;
  /** Gzip ingest bodies. Default true. */
  gzip?: boolean;
  /** Ingest batches as JSON, or as ClickHouse Native blocks when they fit (IngestOptions.format). Default json. */
  batchFormat?: BatchFormat;
  flushIntervalMs?: number;
  reconnect?: BackoffOptions;
  ingestBackoff?: BackoffOptions;
  /** Resolve startCollector only after the first welcome. Default true. */
  waitForWelcome?: boolean;
  /** How long startCollector waits for that welcome before it stops and throws. Default 30 s. */
  welcomeTimeoutMs?: number;
  /** How long stop() waits for queued flows to be acknowledged. Default 30 s. */
  flushTimeoutMs?: number;
  fetch?: Fetch;
}

export interface CollectorStats {
  node_id: string | null;
  machine_id: string;
  /** Sent in `hello`: the enrolled one, unless another was given. */
  hostname: string;
  version: string;
  uptime_s: number;
  control: ControlStats;
  ingest: IngestStats;
  flows: FlowStats;
  /**
   * The packet meter's counts when metering captures, else null; `interfaces`: tcpdump's counts of
   * a live capture; `host_context`: what /proc told of the owning processes (live capture only).
   */
  meter: (MeterStats & { interfaces?: InterfaceStats[]; host_context?: ProcessSocketsStats }) | null;
  /** The flow-export listener's counts when receiving exports, else null. */
  exports: ExportIngestStats | null;
  token_expires_at: string | null;
}

export interface RunningCollector {
  /** From the service's welcome; undefined until the first one. */
  readonly nodeId: string | undefined;
  readonly machineId: string;
  /** Resolves when the collector finished on its own (--seconds, backfill only); rejects when the service refused it. */
  readonly done: Promise<void>;
  stats(): CollectorStats;
  /** Incidents planted in the generated flows (flowgen ground truth). */
  groundTruth(): Incident[];
  /** How far the backfill is; undefined before it starts and without one. */
  backfillProgress(): BackfillProgress | undefined;
  readonly logger: Logger;
  /**
   * Stops generating, flushes the queue (up to flushTimeoutMs, then waits only for batches already
   * sent), closes the channel. `unsent`: flows the service did not acknowledge. Idempotent.
   */
  stop(): Promise<{ unsent: number }>;
}

export async function startCollector(options: CollectorOptions): Promise<RunningCollector> {
  const logger = createLogger({ level: options.logLevel ?? 'info', write: options.log });
  const state = new StateDir(options.stateDir ?? defaultStateDir());
  const stored = state.read();
  const machineId = options.machineId ?? stored.machine_id ?? hostMachineId();
  const hostname = options.hostname ?? osHostname();
  const runtime = new RuntimeMonitor();
  let version = stored.collector_version ?? COLLECTOR_VERSION;
  let updateChannel = options.updateChannel ?? stored.update_channel ?? 'stable';
  let config: unknown;
  const pcapFiles = options.pcapFiles ?? [];
  const captureInterfaces = options.captureInterfaces ?? [];
  if (pcapFiles.length > 0 && captureInterfaces.length > 0) throw new Error('meter capture files or live interfaces, not both');
  const metering = pcapFiles.length > 0 || captureInterfaces.length > 0;
  const exportListen = options.exportListen;
  if (metering && exportListen) throw new Error('meter captures or receive flow exports, not both');
  // Flows from captures or exporters, not the generator: the run ends when they do, or at `seconds`.
  const observing = metering || exportListen !== undefined;
  const flowsPerSecond = observing ? 0 : (options.flowsPerSecond ?? 50);

  const tokens = new TokenSource({ baseUrl: options.baseUrl, accessKey: options.accessKey, logger, fetch: options.fetch });
  const secrets = [options.accessKey.trim(), options.accessKey.trim().slice(options.accessKey.trim().indexOf('.') + 1)];

  const generation = new AbortController();
  let welcomed!: () => void;
  const firstWelcome = new Promise<void>((resolve) => (welcomed = resolve));
  let fatal: Error | undefined;
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => undefined); // observed through `done` by whoever cares
  const onFatal = (error: Error) => {
    if (fatal) return;
    fatal = error;
    logger.error('collector.fatal', { error: error.message });
    generation.abort();
    settle.reject(error);
  };

  // Unique per node and run: a restarted collector must not reuse ids the service already stored.
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const batchFormat = options.batchFormat ?? DEFAULT_BATCH_FORMAT;
  const ingest = new IngestQueue({
    baseUrl: options.baseUrl,
    tokens,
    batchIdPrefix: batchIdPrefix(machineId, runId),
    gzip: options.gzip,
    format: batchFormat,
    // Legacy nodes share ingest clients, so their batches name the node; managed nodes are known by their key.
    nodeId: options.kind === 'legacy' ? () => control.nodeId : undefined,
    logger,
    batchFlows: options.batchFlows ?? DEFAULT_BATCH_FLOWS,
    maxQueuedFlows: options.maxQueuedFlows ?? DEFAULT_MAX_QUEUED_FLOWS,
    concurrency: options.ingestConcurrency,
    backoff: options.ingestBackoff,
    fetch: options.fetch,
    onFatal,
  });

  let pump: FlowPump | undefined;
  let meter: CaptureMeter | undefined;
  let live: LiveCapture | undefined;
  let hostContext: ProcessSockets | undefined;
  let exports: ExportIngest | undefined;
  const status = () => ({
    state: fatal ? 'refused' : 'running',
    node_id: control.nodeId ?? null,
    machine_id: machineId,
    hostname,
    version,
    update_channel: updateChannel,
    uptime_s: Math.round((Date.now() - runtime.startedAt) / 1000),
    connected: control.connected,
    ingest: ingest.stats(),
  });
  const stats = (): CollectorStats => ({
    node_id: control.nodeId ?? null,
    machine_id: machineId,
    hostname,
    version,
    uptime_s: Math.round((Date.now() - runtime.startedAt) / 1000),
    control: control.stats(),
    ingest: ingest.stats(),
    flows: pump?.stats() ?? emptyFlowStats(),
    meter: meter ? { ...meter.stats(), ...(live ? { interfaces: live.stats() } : {}), ...(hostContext ? { host_context: hostContext.stats() } : {}) } : null,
    exports: exports?.stats() ?? null,
    token_expires_at: tokens.expiresAtMs ? new Date(tokens.expiresAtMs).toISOString() : null,
  });

  const facts = hostFacts(hostname);
  const context: CollectorContext = {
    logger,
    version: () => version,
    installVersion: (next) => {
      version = next;
      state.update({ collector_version: next });
      control.restart(`installed ${next}`);
    },
    platform: () => ({ os: facts.os, arch: facts.arch }),
    diagnostics: () => ({ ...runtime.snapshot(), collector: stats(), ingest_queue_cap: ingest.maxQueuedFlows, kind: options.kind ?? 'managed' }),
    status,
    config: () => config,
    restartControl: (reason) => control.restart(reason),
    refreshCredential: async () => {
      tokens.invalidate();
      await tokens.token();
      return { expires_at: tokens.expiresAtMs ? new Date(tokens.expiresAtMs).toISOString() : null };
    },
    secrets: () => secrets,
    downloadUrl: (os, arch, channel) =>
      joinUrl(
        options.baseUrl,
        `/rest/collector/download/1.0?os=${encodeURIComponent(os)}&arch=${encodeURIComponent(arch)}&channel=${encodeURIComponent(channel)}`,
      ),
    fetch: options.fetch,
  };

  const idleTimeoutSecs = options.idleTimeoutSecs ?? 30;
  const activeTimeoutSecs = options.activeTimeoutSecs ?? 300;
  const services = {
    flowgen: {
      enabled: flowsPerSecond > 0,
      flows_per_second: flowsPerSecond,
      scenarios: options.scenarios ?? [],
      backfill_hours: options.backfillHours ?? 0,
      diurnal: options.diurnal ?? false,
    },
    ingest: {
      batch_flows: options.batchFlows ?? DEFAULT_BATCH_FLOWS,
      batch_format: batchFormat,
      max_queued_flows: ingest.maxQueuedFlows,
    },
    ...(metering
      ? {
          meter: {
            ...(captureInterfaces.length > 0 ? { source: 'live', interfaces: captureInterfaces } : { source: 'pcap', files: pcapFiles.length }),
            idle_timeout_secs: idleTimeoutSecs,
            active_timeout_secs: activeTimeoutSecs,
          },
        }
      : {}),
    ...(exportListen ? { exports: { listen: hostPort(exportListen.host, exportListen.port) } } : {}),
  };
  const control: ControlChannel = new ControlChannel({
    baseUrl: options.baseUrl,
    tokens,
    logger,
    commands: createCommands(context),
    hello: () => {
      const now = hostFacts(hostname); // addresses and load change between connects
      return {
        machine_id: machineId,
        hostname,
        collector_version: version,
        os: now.os,
        arch: now.arch,
        update_channel: updateChannel,
        local_ip: now.local_ip,
        public_ip: now.public_ip,
        hardware: now.hardware,
        services,
        kind: options.kind ?? 'managed',
      };
    },
    heartbeat: () => {
      const s = ingest.stats();
      return { ingest: { queued: s.queued, sent: s.sent, failed: s.failed } };
    },
    onWelcome: (welcome: Welcome) => {
      welcomed();
      config = welcome.config;
      adoptConfig(welcome.config);
      if (welcome.node_id && welcome.node_id !== state.read().node_id) state.update({ node_id: welcome.node_id });
    },
    onConfig: (next) => {
      config = next;
      adoptConfig(next);
    },
    onFatal,
    reconnect: options.reconnect,
  });
  const adoptConfig = (next: unknown) => {
    const channel = (next as { update_channel?: unknown } | undefined)?.update_channel;
    if (typeof channel === 'string' && channel && channel !== updateChannel) {
      updateChannel = channel;
      state.update({ update_channel: channel });
    }
  };

  logger.info('collector.starting', {
    version,
    machine_id: machineId,
    hostname,
    base_url: options.baseUrl,
    flows_per_second: flowsPerSecond,
    backfill_hours: options.backfillHours ?? 0,
    seconds: options.seconds ?? null,
    scenarios: options.scenarios ?? [],
    pcap_files: pcapFiles,
    capture_interfaces: captureInterfaces,
    export_listen: exportListen ?? null,
  });
  control.start();

  const flowsDone = (async () => {
    // The node exists once the service welcomed its hello; ingest before that is refused (403).
    await Promise.race([firstWelcome, new Promise((resolve) => generation.signal.addEventListener('abort', resolve, { once: true }))]);
    if (generation.signal.aborted) return;
    // The flows carry the tenant id (the service overwrites it anyway), which the token tells.
    const customerId = tokens.customerId ?? 'unknown';
    if (metering) {
      // Live packets are this host's now: their local ends are looked up in /proc (docs/meter.md
      // "Host context"). A capture file's packets are past, their sockets long gone.
      if (captureInterfaces.length > 0) hostContext = new ProcessSockets();
      meter = new CaptureMeter(
        {
          customerId,
          sensor: {
            id: machineId,
            type: 'packet',
            name: 'reference-collector',
            hostname,
            interface: captureInterfaces.length > 0 ? captureInterfaces.join(',') : 'pcap',
          },
          tags: [],
          idleTimeoutSecs,
          activeTimeoutSecs,
          inspectors: options.inspectors,
          owners: hostContext,
          batchFlows: options.batchFlows ?? DEFAULT_BATCH_FLOWS,
        },
        ingest,
      );
      if (captureInterfaces.length > 0) {
        live = new LiveCapture(captureInterfaces, meter, { onListening: () => logger.info('meter.listening', { interfaces: captureInterfaces }) });
        logger.info('meter.started', { interfaces: captureInterfaces });
        hostContext!.start();
        try {
          await live.run(generation.signal);
        } finally {
          hostContext!.stop();
        }
        logger.info('meter.done', { ...stats().meter });
      } else {
        logger.info('meter.started', { files: pcapFiles });
        await meter.run(pcapFiles, generation.signal);
        // Stopped (a signal, --seconds) before the last file was read: not all of them are metered.
        logger.info(generation.signal.aborted ? 'meter.interrupted' : 'meter.done', { ...stats().meter });
      }
      return;
    }
    if (exportListen) {
      exports = new ExportIngest(
        { customerId, ...exportListen, batchFlows: options.batchFlows ?? DEFAULT_BATCH_FLOWS, maxBacklog: options.maxExportBacklog },
        ingest,
      );
      await exports.listen();
      logger.info('exports.listening', { listen: exports.stats().listen });
      await exports.run(generation.signal);
      logger.info('exports.done', { ...exports.stats() });
      return;
    }
    pump = new FlowPump(
      {
        customerId,
        sensorId: machineId,
        seed: options.seed ?? machineId,
        flowsPerSecond,
        scenarios: options.scenarios ?? [],
        diurnal: options.diurnal ?? false,
        backfillHours: options.backfillHours ?? 0,
        seconds: options.seconds,
        batchFlows: options.batchFlows ?? DEFAULT_BATCH_FLOWS,
        flushIntervalMs: options.flushIntervalMs ?? 1_000,
      },
      ingest,
      logger,
    );
    await pump.run(generation.signal);
  })().catch((error: Error) => {
    logger.error('flows.failed', { error });
    onFatal(error);
  });

  let stopping: Promise<{ unsent: number }> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('collector.stopping');
      generation.abort();
      await flowsDone;
      if (!fatal) await ingest.drain(options.flushTimeoutMs ?? 30_000);
      await ingest.close();
      const { queued: unsent, unconfirmed } = ingest.stats();
      if (unsent > 0) logger.warn('collector.unsent', { flows: unsent, unconfirmed });
      await control.stop();
      runtime.stop();
      logger.info('collector.stopped', { ...ingest.stats() });
      settle.resolve();
      return { unsent };
    })());

  // Finished on its own: the flows ran out (--seconds, or backfill only with 0, or the captures were
  // metered, or the live capture or the export listener stopped), then stop() flushes. With
  // captures and exports, --seconds bounds the whole run.
  if (observing) {
    void flowsDone.then(() => stop());
    if (options.seconds !== undefined) {
      const limit = setTimeout(() => void stop(), options.seconds * 1000);
      void done.catch(() => undefined).finally(() => clearTimeout(limit));
    }
  } else if (options.seconds !== undefined) {
    void flowsDone.then(async () => {
      if (flowsPerSecond <= 0) await sleep(options.seconds! * 1000, generation.signal);
      if (!generation.signal.aborted) await stop();
    });
  }

  const collector: RunningCollector = {
    get nodeId() {
      return control.nodeId;
    },
    machineId,
    done,
    stats,
    groundTruth: () => pump?.groundTruth() ?? [],
    backfillProgress: () => pump?.backfillProgress(),
    logger,
    stop,
  };

  if (options.waitForWelcome ?? true) {
    try {
      await Promise.race([control.waitForWelcome(options.welcomeTimeoutMs ?? 30_000), done.then(() => undefined)]);
    } catch (error) {
      await stop();
      throw error;
    }
  }
  return collector;
}
