import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../test/kit/databases.js';
import { ChdbThreadEngine } from './flowstore/index.js';

/** Runs `node [nodeFlags] src/start.cjs [entry]` and resolves with its output once `until` matches it (or it exits). */
function start(args: string[], env: Record<string, string>, until: RegExp, { ipc = false, nodeFlags = [] as string[] } = {}) {
  // What start.cjs sets is its own to set, not inherited from whoever runs the tests.
  const { UV_THREADPOOL_SIZE: _pool, GLIBC_TUNABLES: _tunables, JE_MALLOC_CONF: _jemalloc, ...parentEnv } = process.env;
  const child = spawn(process.execPath, [...nodeFlags, 'src/start.cjs', ...args], {
    env: { ...parentEnv, ...env },
    stdio: ipc ? ['ignore', 'pipe', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
  // The exit code, or the signal that ended it, so that a failure says which.
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const output = new Promise<string>((resolve) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (until.test(out)) resolve(out);
    });
    void exited.then(() => resolve(out));
  });
  return { child, exited, output };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The first answer `url` gives, polling while nothing listens there yet (30 s at most). */
async function firstAnswer(url: string): Promise<Response> {
  for (let tries = 0; tries < 600; tries++) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nothing answered at ${url}`);
}

describe('npm start (src/start.cjs)', () => {
  it("sizes libuv's thread pool before anything uses it: eight blocked tasks leave room for more", async () => {
    const { output, exited } = start(['test/kit/thread-pool-probe.ts'], {}, /\n/);
    expect(JSON.parse(await output)).toEqual({ anotherTaskDone: true });
    expect(await exited).toBe(0);
  });

  it('runs the service on a fresh data directory, answering 503 until it is ready, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bd-start-'));
    try {
      const port = await freePort();
      const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '', CLICKHOUSE_URL: '', IP_ORG_DATASET: 'off' };
      const { child, output, exited } = start([], env, /listening on (http:\S+)/);
      // The port is taken before the engines open (seconds on a fresh directory): meanwhile, 503.
      const early = await firstAnswer(`http://127.0.0.1:${port}/health`);
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).toBe('1');
      expect(await early.json()).toMatchObject({ error: 'starting', code: 'starting' });
      const url = /listening on (http:\S+)/.exec(await output)?.[1];
      expect(url).toBeDefined();
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('memory kept for reuse (src/memory-reuse.cjs), in a process started again for it', () => {
    // --expose-gc: the probe lets each result go before the next (relaunch passes the flag on).
    const probe = () => start(['test/kit/memory-reuse-probe.ts'], {}, /\n/, { ipc: true, nodeFlags: ['--expose-gc'] });
    const report = async (output: Promise<string>) => JSON.parse(await output) as { pid: number; faults: number[] };

    it('writes a big result again into memory it already has', async () => {
      const { child, output, exited } = probe();
      const { faults } = await report(output);
      // The first 62 MB result touches fresh memory (~110k page faults); given back, each later one did as much (~31k).
      expect(Math.min(...faults.slice(1))).toBeLessThan(faults[0]! / 10);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    });

    it('is still the service to whoever started it: messages relayed both ways, and its exit code', async () => {
      const { child, output, exited } = probe();
      const { pid } = await report(output);
      expect(pid).not.toBe(child.pid);
      const echo = new Promise((resolve) => child.once('message', resolve));
      child.send({ ping: 1 });
      expect(await echo).toEqual({ echo: { ping: 1 } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    });

    it('stops the service when the launcher is killed outright', async () => {
      const { child, output } = probe();
      const { pid } = await report(output);
      child.kill('SIGKILL');
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await expect.poll(alive, { timeout: 5000, interval: 100 }).toBe(false);
    });
  });

  describe("V8's memory reducer off (its heap compactions paused the event loop 20–57 ms)", () => {
    const report = async (output: Promise<string>) => JSON.parse(await output) as { pid: number; execArgv: string[] };

    it('is off in the service', async () => {
      const { output, exited } = start(['test/kit/process-probe.ts'], {}, /\n/);
      expect((await report(output)).execArgv).toContain('--no-memory-reducer');
      expect(await exited).toBe(0);
    });

    // glibc's tunables set already: only the flag can call for a new process.
    const tunables = 'glibc.malloc.mmap_max=0:glibc.malloc.arena_max=1:glibc.malloc.trim_threshold=268435456';

    it('starts the service again for it when glibc needs no new process', async () => {
      const { child, output, exited } = start(['test/kit/process-probe.ts'], { GLIBC_TUNABLES: tunables }, /\n/);
      const { pid, execArgv } = await report(output);
      expect(pid).not.toBe(child.pid);
      expect(execArgv).toContain('--no-memory-reducer');
      expect(await exited).toBe(0);
    });

    it('needs no new process when it is off already', async () => {
      const { child, output, exited } = start(['test/kit/process-probe.ts'], { GLIBC_TUNABLES: tunables }, /\n/, { nodeFlags: ['--no-memory-reducer'] });
      expect((await report(output)).pid).toBe(child.pid);
      expect(await exited).toBe(0);
    });
  });
});

describe('npm start refused by the machine: one line on stderr, exit 1, before the engines open', () => {
  /** Runs `npm start`'s entry to its exit; a start that hangs fails the test through its timeout. */
  async function refusedStart(env: Record<string, string>) {
    const started = performance.now();
    const child = spawn(process.execPath, ['src/start.cjs'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '', CLICKHOUSE_URL: '', IP_ORG_DATASET: 'off', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    return { code, stdout, stderr, ms: performance.now() - started };
  }

  const withDataDir = async (test: (dataDir: string) => Promise<void>) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bd-refused-'));
    try {
      await test(dataDir);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  it('says the port is taken, having opened nothing', () =>
    withDataDir(async (dataDir) => {
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const { port } = holder.address() as AddressInfo;
      try {
        const res = await refusedStart({ DATA_DIR: dataDir, PORT: String(port) });
        expect(res).toMatchObject({ code: 1, stdout: '' });
        expect(res.stderr).toBe(
          `cannot listen: port ${port} on 127.0.0.1 is already in use by another process: stop it, or set PORT (and HOST) to a free one\n`,
        );
        // Neither PGlite nor chDB nor the secrets key was created: the engines never opened.
        expect(readdirSync(dataDir)).toEqual([]);
        expect(res.ms).toBeLessThan(15_000);
      } finally {
        holder.close();
      }
    }));

  it('says the data directory is in use by another server (embedded PostgreSQL), having opened neither engine', () =>
    withDataDir(async (dataDir) => {
      // The owner record a running server leaves: this test's process is alive, as that server would be.
      writeFileSync(join(dataDir, 'postgres.owner.json'), JSON.stringify({ pid: process.pid }));
      const res = await refusedStart({ DATA_DIR: dataDir });
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `DATA_DIR ${dataDir} is in use: process ${process.pid} (another server) has its embedded PostgreSQL (postgres/) open; stop it, or give this one another DATA_DIR\n`,
      );
      expect(readdirSync(dataDir)).toEqual(['postgres.owner.json']);
    }));

  it('says the data directory is in use when another process has its embedded ClickHouse open (DATABASE_URL mode)', () =>
    withDataDir(async (dataDir) => {
      const database = await createTestDatabase();
      const holder = await ChdbThreadEngine.open(join(dataDir, 'clickhouse'));
      try {
        const res = await refusedStart({ DATA_DIR: dataDir, DATABASE_URL: database.url });
        expect(res.code).toBe(1);
        expect(res.stderr).toBe(
          `DATA_DIR ${dataDir} is in use: process ${process.pid} (another server) has its embedded ClickHouse (clickhouse/) open; stop it, or give this one another DATA_DIR\n`,
        );
      } finally {
        await holder.close();
        await database.drop();
      }
    }));
});
