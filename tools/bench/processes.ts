import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A bench sends one client's token requests from one address thousands of times a second: the
 * limits stay on (every request is still counted in PostgreSQL, so their cost is measured) but
 * high enough never to refuse one.
 */
export const BENCH_RATE_LIMITS = { RATE_LIMIT_TOKEN_PER_ADDRESS: '1000000000', RATE_LIMIT_TOKEN_PER_CLIENT: '1000000000' };

/**
 * A fresh data directory loads the IP → organization dataset in the background at start (tens of
 * seconds of both cores), once per dataset version. The benches that start the service measure it
 * in its steady state, and their requests never use the dataset: it stays off.
 */
export const BENCH_STEADY_STATE = { ...BENCH_RATE_LIMITS, IP_ORG_DATASET: 'off' };

/**
 * Starts a TypeScript entry point in its own process, as `npm start` starts the service
 * (src/start.cjs: libuv's pool sized first), and waits for its `listening on` line; `ipc` opens
 * Node's message channel to it.
 */
export function startProcess(entry: string, env: Record<string, string>, { ipc = false } = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['src/start.cjs', entry], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', 'pipe', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ url: match[1], child });
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before listening`)));
  });
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) in a process's or thread's /proc stat file (`/proc/PID/stat`, `/proc/PID/task/TID/stat`). */
export function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // Fields after the command name (which may hold spaces), in parentheses: utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds (user + system) used so far by a process and every process under it (the service
 * relaunches itself once): a measure of work that other load on the machine disturbs far less
 * than wall time. Linux only (/proc).
 */
export function treeCpuSeconds(pid: number): number {
  let seconds = 0;
  const visit = (p: number) => {
    try {
      seconds += statCpuSeconds(`/proc/${p}/stat`);
    } catch {
      return; // gone meanwhile
    }
    for (const task of readdirSync(`/proc/${p}/task`, { withFileTypes: false }) as string[]) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean)) visit(Number(child));
    }
  };
  visit(pid);
  return seconds;
}
