// Processes of the lab: commands with a deadline, background daemons tracked by pid, and one
// cleanup stack that runs on exit, on failure and on SIGINT/SIGTERM. Everything the lab starts
// or creates is registered here, so nothing outlives it.

import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Network namespace to run in (`ip netns exec`). */
  ns?: string;
  timeoutMs: number;
  input?: string;
  cwd?: string;
  env?: Record<string, string>;
}

/** `ip netns exec NS cmd...` when a namespace is given (it execs, so the pid is the command's). */
export const inNs = (ns: string | undefined, argv: string[]): string[] => (ns ? ['ip', 'netns', 'exec', ns, ...argv] : argv);

/** Commands in flight: a cleanup (Ctrl-C) ends them with the daemons. */
const running = new Set<ChildProcess>();

/**
 * Runs a command to its end or its deadline; never rejects. It runs in a process group of its
 * own, so the deadline's SIGKILL also ends what it started (a shell's children holding its pipes).
 */
export function run(argv: string[], options: RunOptions): Promise<RunResult> {
  const full = inNs(options.ns, argv);
  return new Promise((resolve) => {
    const child = spawn(full[0], full.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => {
      stderr += `\n[lab] ${full.join(' ')}: killed after ${options.timeoutMs} ms`;
      killGroup(child, 'SIGKILL');
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Signals the process group the lab created for `child` (its pid is the group id). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Runs a command that must succeed: rejects with its stderr otherwise. */
export async function runOk(argv: string[], options: RunOptions): Promise<string> {
  const result = await run(argv, options);
  if (result.code !== 0) throw new Error(`${inNs(options.ns, argv).join(' ')} exited ${result.code}: ${result.stderr.trim().slice(-2000)}`);
  return result.stdout;
}

export interface Daemon {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Output so far (the last 64 KiB of stdout and stderr together). */
  output(): string;
  /**
   * SIGTERM to its group (or to the process alone, `leader`, when it stops its own children), then
   * SIGKILL to the group after `graceMs`; resolves once it has exited.
   */
  stop(graceMs?: number, target?: 'group' | 'leader'): Promise<void>;
}

const OUTPUT_KEPT = 64 * 1024;

/**
 * A background process in its own process group, so that stopping it also ends what it forked
 * (the group id is its pid: the lab only ever signals groups it created). Output goes to
 * `logFile` and the last 64 KiB are kept for error messages.
 */
export function startDaemon(name: string, argv: string[], options: { ns?: string; logFile: string; env?: Record<string, string>; cwd?: string }): Daemon {
  const full = inNs(options.ns, argv);
  const child = spawn(full[0], full.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    cwd: options.cwd,
    env: options.env ? { ...process.env, ...options.env } : process.env,
  });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  let kept = '';
  const keep = (d: Buffer) => {
    if (!log.writableEnded) log.write(d);
    kept = (kept + d.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      kept += `\n${error.message}`;
      resolve(null);
    });
    child.once('exit', (code) => resolve(code));
  });
  // 'close' comes once its pipes are drained: output can still arrive after 'exit'.
  child.once('close', () => log.end());
  let done = false;
  void exited.then(() => (done = true));
  const signalGroup = (signal: NodeJS.Signals) => {
    if (!done) killGroup(child, signal);
  };
  return {
    name,
    child,
    exited,
    output: () => kept,
    async stop(graceMs = 2_000, target = 'group') {
      if (target === 'group') signalGroup('SIGTERM');
      else if (!done) child.kill('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // Children that ignored the group's SIGTERM (and outlived their parent) go too.
      killGroup(child, 'SIGKILL');
    },
  };
}

/** Waits until `text` appears in the daemon's output, it exits, or the deadline passes. */
export async function waitForOutput(daemon: Daemon, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void daemon.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    const match = pattern.exec(daemon.output());
    if (match) return match;
    if (exited) break;
    await sleep(100);
  }
  throw new Error(`${daemon.name}: ${exited ? 'exited' : `no ${pattern} within ${timeoutMs} ms`}; its output:\n${daemon.output().slice(-3000)}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `everyMs` until it returns true or the deadline passes. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(everyMs);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/**
 * What the lab undoes, last created first. The exit, failure and signal paths all call `run()`:
 * calls while it runs share it, and a step that fails is reported and the rest still run.
 */
export class Cleanup {
  private readonly steps: Array<{ what: string; undo: () => unknown }> = [];
  private readonly daemons: Daemon[] = [];
  private running: Promise<void> | undefined;

  add(what: string, undo: () => unknown): void {
    this.steps.push({ what, undo });
  }

  /** Undoes what was added so far; what is added afterwards is undone by the next call (bench:detect's runs). */
  run(): Promise<void> {
    this.running ??= (async () => {
      // Every process first, all at once (a signal's cleanup must be quick), then the rest.
      for (const child of running) killGroup(child, 'SIGKILL');
      await Promise.all(this.daemons.splice(0).map((d) => d.stop()));
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.undo();
        } catch (error) {
          process.stderr.write(`[lab] cleanup: ${step.what}: ${(error as Error).message}\n`);
        }
      }
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** The exit code of the signal that stopped the lab (130 SIGINT, 143 SIGTERM), once one has. */
  signalExitCode: number | undefined;

  /**
   * SIGINT/SIGTERM clean up, then exit 130/143; a second signal during cleanup is ignored. The
   * lab's own failure that the cleanup's killing causes (a tool it waited on dies) exits with the
   * signal's code too (`signalExitCode`).
   */
  onSignals(): void {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.on(signal, () => {
        process.stderr.write(`\n[lab] ${signal}: cleaning up\n`);
        this.signalExitCode ??= code;
        void this.run().finally(() => process.exit(this.signalExitCode));
      });
    }
  }

  /** Tracks a daemon: stopped at cleanup, before any other step. */
  daemon(daemon: Daemon): Daemon {
    this.daemons.push(daemon);
    return daemon;
  }
}
