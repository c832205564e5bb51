// `pprof`: a profile of this process from Node's own profilers, gzipped and base64-encoded.
// Go's profile types have no exact Node twin; each maps to the nearest real capture
// (docs/reference-collector.md lists them). Formats are the ones Chrome DevTools and Perfetto
// open, not pprof protobuf.

import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { sleep } from '../backoff.js';
import { CommandError, type CollectorContext, type CommandHandler, intArg } from './types.js';

const gzip = promisify(gzipCallback);

export const PROFILE_TYPES = ['heap', 'allocs', 'goroutine', 'cpu', 'block', 'mutex'] as const;
export type ProfileType = (typeof PROFILE_TYPES)[number];

export const DEFAULT_DURATION_S = 10;
export const MAX_DURATION_S = 300;
/** Time kept between the end of a capture and the command's deadline, for gzip and the answer. */
const DEADLINE_MARGIN_MS = 4_000;
const MAX_TRACE_EVENTS = 200_000;

export interface Capture {
  /** Uncompressed bytes. */
  data: Buffer;
  /** What the bytes are: the file extension tools expect. */
  format: 'heapsnapshot' | 'heapprofile' | 'cpuprofile' | 'report.json' | 'loopdelay.json' | 'trace.json';
  duration_s?: number;
}

/** One capture at a time per process: the inspector's profilers are per isolate. */
let busy: ProfileType | undefined;

export function pprofCommand(ctx: CollectorContext): CommandHandler {
  return async ({ args, deadlineMs }) => {
    const type = String(args.type ?? 'heap').toLowerCase() as ProfileType;
    if (!PROFILE_TYPES.includes(type)) throw new CommandError('invalid_type', `unknown profile type ${String(args.type)}`);
    const asked = intArg(args.duration_s ?? args.duration, DEFAULT_DURATION_S, 1, MAX_DURATION_S);
    // A capture that would end after the deadline is shortened rather than wasted.
    const room = Math.floor((deadlineMs - Date.now() - DEADLINE_MARGIN_MS) / 1000);
    const durationS = Math.max(1, Math.min(asked, room));
    if (busy) throw new CommandError('busy', `a ${busy} capture is already running`);
    busy = type;
    const started = Date.now();
    try {
      const capture = await captureProfile(type, durationS, ctx.secrets());
      const gz = await gzip(capture.data);
      ctx.logger.info('pprof.captured', { type, format: capture.format, bytes: capture.data.length, gzipped_bytes: gz.length, ms: Date.now() - started });
      return {
        profile_b64: gz.toString('base64'),
        type,
        format: capture.format,
        ...(capture.duration_s !== undefined ? { duration_s: capture.duration_s } : {}),
        bytes: capture.data.length,
      };
    } finally {
      busy = undefined;
    }
  };
}

export async function captureProfile(type: ProfileType, durationS: number, secrets: string[] = []): Promise<Capture> {
  switch (type) {
    case 'heap':
      return { data: Buffer.from(redactSnapshot(await heapSnapshot(), secrets)), format: 'heapsnapshot' };
    case 'allocs':
      return { data: Buffer.from(JSON.stringify(await allocationSampling(durationS))), format: 'heapprofile', duration_s: durationS };
    case 'cpu':
      return { data: Buffer.from(JSON.stringify(await cpuProfile(durationS))), format: 'cpuprofile', duration_s: durationS };
    case 'goroutine':
      return { data: Buffer.from(redact(JSON.stringify(processReport()), secrets)), format: 'report.json' };
    case 'block':
      return { data: Buffer.from(JSON.stringify(await loopDelay(durationS))), format: 'loopdelay.json', duration_s: durationS };
    case 'mutex':
      return { data: Buffer.from(redact(JSON.stringify(await threadpoolTrace(durationS)), secrets)), format: 'trace.json', duration_s: durationS };
  }
}

async function withSession<T>(use: (session: Session) => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  try {
    return await use(session);
  } finally {
    session.disconnect();
  }
}

/** heap → a V8 heap snapshot of everything alive now (Go's heap profile samples in-use memory). */
function heapSnapshot(): Promise<string> {
  return withSession(async (session) => {
    const chunks: string[] = [];
    session.on('HeapProfiler.addHeapSnapshotChunk', (message) => chunks.push(message.params.chunk));
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    await session.post('HeapProfiler.disable');
    return chunks.join('');
  });
}

/** allocs → V8's sampling heap profiler over the window, counting objects already collected too. */
function allocationSampling(durationS: number): Promise<unknown> {
  return withSession(async (session) => {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 32 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as { samplingInterval: number });
    await sleep(durationS * 1000);
    const { profile } = await session.post('HeapProfiler.getSamplingProfile');
    await session.post('HeapProfiler.stopSampling');
    return profile;
  });
}

/** cpu → V8's sampling CPU profiler (1 ms interval) over the window. */
function cpuProfile(durationS: number): Promise<unknown> {
  return withSession(async (session) => {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await session.post('Profiler.start');
    await sleep(durationS * 1000);
    const { profile } = await session.post('Profiler.stop');
    await session.post('Profiler.disable');
    return profile;
  });
}

/**
 * goroutine → Node's diagnostic report: the JavaScript and native stacks, every libuv handle and
 * request, worker threads and resource usage (what each "thread" is doing now). The environment
 * is left out; it is the one part that routinely holds secrets.
 */
function processReport(): unknown {
  const report = process.report.getReport() as unknown as Record<string, unknown>;
  delete report.environmentVariables;
  return report;
}

/**
 * block → how long the event loop was blocked: the delay histogram (1 ms resolution) and the
 * loop's utilization over the window. In Node it is the loop, not goroutines, that blocks.
 */
async function loopDelay(durationS: number): Promise<unknown> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const elu = performance.eventLoopUtilization();
  histogram.enable();
  await sleep(durationS * 1000);
  histogram.disable();
  const ms = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0);
  const percentiles: Record<string, number> = {};
  for (const p of [50, 75, 90, 95, 99, 99.9, 100]) percentiles[`p${p}`] = ms(histogram.percentile(p));
  return {
    type: 'event_loop_delay',
    unit: 'ms',
    duration_s: durationS,
    samples: histogram.count,
    min: ms(histogram.min),
    max: ms(histogram.max),
    mean: ms(histogram.mean),
    stddev: ms(histogram.stddev),
    percentiles,
    utilization: performance.eventLoopUtilization(elu).utilization,
  };
}

/**
 * mutex → JavaScript has no mutexes; the shared resource Node's work contends for is the libuv
 * thread pool (fs, dns, zlib, crypto). A Chrome trace of thread-pool work over the window.
 */
function threadpoolTrace(durationS: number): Promise<unknown> {
  return withSession(async (session) => {
    const events: unknown[] = [];
    let dropped = 0;
    session.on('NodeTracing.dataCollected', (message) => {
      for (const event of message.params.value) {
        if (events.length < MAX_TRACE_EVENTS) events.push(event);
        else dropped++;
      }
    });
    const complete = new Promise<void>((resolve) => session.once('NodeTracing.tracingComplete', () => resolve()));
    await session.post('NodeTracing.start', {
      traceConfig: { includedCategories: ['node.threadpoolwork.async', 'node.threadpoolwork.sync'] },
    });
    await sleep(durationS * 1000);
    await session.post('NodeTracing.stop');
    await complete;
    return { traceEvents: events, metadata: { duration_s: durationS, dropped_events: dropped } };
  });
}

const JWT_SOURCE = 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}';
const JWT_PATTERN = new RegExp(JWT_SOURCE, 'g');
const LOOKS_LIKE_JWT = new RegExp(JWT_SOURCE);

/** Replaces every occurrence of a secret, and anything shaped like a JWT (bearer tokens). */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 8) out = out.replaceAll(secret, '[redacted]');
  return out.replace(JWT_PATTERN, '[redacted-jwt]');
}

/**
 * A heap snapshot holds the text of every string alive, the access key and bearer tokens among
 * them. Strings that contain a secret, or look like a JWT, are replaced before the snapshot leaves.
 */
export function redactSnapshot(snapshot: string, secrets: string[]): string {
  const parsed = JSON.parse(snapshot) as { strings?: string[] };
  const live = secrets.filter((s) => s.length >= 8);
  if (Array.isArray(parsed.strings)) {
    parsed.strings = parsed.strings.map((s) => (live.some((secret) => s.includes(secret)) || LOOKS_LIKE_JWT.test(s) ? '[redacted]' : s));
  }
  return JSON.stringify(parsed);
}
