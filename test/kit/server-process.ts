import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Settles once the process has exited (and its data directory is removed). */
  exited: Promise<unknown>;
}

/**
 * A server in a process of its own (no launcher in between), so that SIGKILL kills what it holds
 * (channels, locks, connections, a statement in flight), over `databaseUrl`. `env` adds to and
 * overrides the defaults (chDB in a temporary data directory, unless CLICKHOUSE_URL is given).
 */
export function startServerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bd-process-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      IP_ORG_DATASET: 'off',
      CLICKHOUSE_URL: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve)).finally(() => rmSync(dataDir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ url, child, exited });
    });
    void exited.then(() => reject(new Error(`the server exited before listening: ${out}`)));
  });
}
