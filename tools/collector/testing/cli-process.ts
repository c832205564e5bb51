// The collector CLI as a test process: `node --import tsx cli.ts ARGS`, optionally behind a command
// prefix (`ip netns exec NS`, `setpriv …`), its output collected; killed by `cleanups` if still running.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../cli.ts', import.meta.url));

export interface CliProcess {
  readonly pid: number | undefined;
  stdout(): string;
  stderr(): string;
  /** The exit code; null when ended by a signal. */
  exited: Promise<number | null>;
  /** Still running. */
  running(): boolean;
  kill(signal: NodeJS.Signals): void;
  /** The last stdout line as JSON: `run`'s summary. */
  summary(): Record<string, any>;
  /** The `event` of every JSON log line on stderr. */
  events(): string[];
}

/** `group`: the process leads a process group of its own, as a shell's foreground job does; `kill` then signals the group, as Ctrl-C does. */
export function spawnCli(
  args: string[],
  cleanups: Array<() => unknown>,
  options: { prefix?: string[]; env?: NodeJS.ProcessEnv; group?: boolean } = {},
): CliProcess {
  const command = [...(options.prefix ?? []), process.execPath, '--import', 'tsx', CLI, ...args];
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group ?? false,
  });
  cleanups.push(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let ended = false;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => ((ended = true), resolve(code))));
  return {
    pid: child.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    running: () => !ended,
    kill: (signal) => void (options.group && child.pid !== undefined ? process.kill(-child.pid, signal) : child.kill(signal)),
    summary: () => JSON.parse(stdout.trim().split('\n').at(-1)!),
    events: () =>
      stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).event),
  };
}
