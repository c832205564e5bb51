import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Runs `node src/start.cjs [entry]` and resolves with its output once `until` matches it (or it exits). */
function start(args: string[], env: Record<string, string>, until: RegExp) {
  // The pool's size is start.cjs's to set, not inherited from whoever runs the tests.
  const { UV_THREADPOOL_SIZE: _inherited, ...parentEnv } = process.env;
  const child = spawn(process.execPath, ['src/start.cjs', ...args], { env: { ...parentEnv, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const output = new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (until.test(out)) resolve(out);
    });
    void exited.then(() => resolve(out));
  });
  return { child, exited, output };
}

describe('npm start (src/start.cjs)', () => {
  it('sizes libuv\'s thread pool before anything uses it: eight blocked tasks leave room for more', async () => {
    const { output, exited } = start(['test/kit/thread-pool-probe.ts'], {}, /\n/);
    expect(JSON.parse(await output)).toEqual({ anotherTaskDone: true });
    expect(await exited).toBe(0);
  });

  it('runs the service on a fresh data directory, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bd-start-'));
    try {
      const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', CLICKHOUSE_URL: '', IP_ORG_DATASET: 'off' };
      const { child, output, exited } = start([], env, /listening on (http:\S+)/);
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
});
