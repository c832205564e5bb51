import { execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../kit/admin-cli.js';
import { call } from '../kit/http.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const LAUNCHERS = ['start.cjs', 'relaunch.cjs', 'memory-reuse.cjs'];

/**
 * `npm run build`, then `npm start` on the build, in a copy of the repository's layout: the
 * launchers in <copy>/src beside no TypeScript at all, the build in <copy>/dist. The copy sits
 * under node_modules/.cache so that the compiled modules find the dependencies as in the
 * repository, and the developer's own dist/ is left alone. (The whole production install, `npm ci
 * --omit=dev` on a fresh clone included, is tools/check-production-install.sh: minutes of npm.)
 */
function repositoryCopy(): string {
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
  const copy = mkdtempSync(join(root, 'node_modules/.cache/build-test-'));
  for (const file of LAUNCHERS) cpSync(join(root, 'src', file), join(copy, 'src', file));
  return copy;
}

/** `node <copy>/src/start.cjs` (what `npm start` runs); resolves with the URL it listens on. */
function startService(copy: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [join(copy, 'src/start.cjs')], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', CLICKHOUSE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    void exited.then((code) => reject(new Error(`exited (${code}) before listening:\n${out}`)));
  });
  return { child, url, exited, output: () => out };
}

describe('the compiled build (npm run build, npm start)', () => {
  const copy = repositoryCopy();
  const dataDir = mkdtempSync(join(tmpdir(), 'bd-build-'));
  afterAll(() => {
    rmSync(copy, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeAll(async () => {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'tools/build.ts', '--out-dir', join(copy, 'dist')], { cwd: root, timeout: 170_000 });
  }, 180_000);

  it('holds the compiled service with what it reads at run time', () => {
    for (const file of [
      'src/main.js',
      'src/admin/cli.js',
      'src/flowstore/chdb-thread.worker.js',
      'src/generated/prisma/client.js',
      'src/console/device.html',
      'build/console/index.html',
      'src/modules/collector/scripts/install.sh',
    ]) {
      expect(existsSync(join(copy, 'dist', file)), file).toBe(true);
    }
    const migrations = join(copy, 'dist/prisma/migrations/0001_foundation/migration.sql');
    expect(readFileSync(migrations, 'utf8')).toBe(readFileSync(join(root, 'prisma/migrations/0001_foundation/migration.sql'), 'utf8'));
    // No test or tool is part of the build.
    // Every worker thread's module, which nothing imports (src/infra/source-worker.ts).
    const callers = execFileSync('grep', ['-rl', '--include=*.ts', '--exclude=*.test.ts', 'sourceWorker(', join(root, 'src')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    const workers = callers.flatMap((caller) =>
      [...readFileSync(caller, 'utf8').matchAll(/sourceWorker\('(\.\/[\w.-]+)', import\.meta\.url/g)].map(([, name]) =>
        join(relative(root, dirname(caller)), `${name}.js`),
      ),
    );
    expect(workers.sort()).toEqual(['src/flowstore/chdb-thread.worker.js', 'src/modules/ingest/ingest.worker.js']);
    for (const worker of workers) expect(existsSync(join(copy, 'dist', worker)), worker).toBe(true);
    expect(existsSync(join(copy, 'dist/test'))).toBe(false);
    expect(existsSync(join(copy, 'dist/src/start.test.js'))).toBe(false);
    expect(existsSync(join(copy, 'dist/src/console/app'))).toBe(false); // built into dist/build/console instead
  });

  it('is what npm start runs: migrations, chDB thread, console page, compiled admin CLI, a token, the IP dataset', async () => {
    const service = startService(copy, { DATA_DIR: dataDir, IP_ORG_DATASET: 'preload' });
    try {
      const url = await service.url;
      const health = await call(url, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok' });
      expect((await fetch(`${url}/console/device`)).status).toBe(200);
      expect(await (await fetch(`${url}/console`)).text()).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js">/);

      const cli = [join(copy, 'dist/src/admin/cli.js')];
      const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' };
      const msp = await adminCli(['tenant', 'create', '--name', 'Built', '--handle', 'built', '--msp'], env, cli);
      expect(msp.code, msp.stderr).toBe(0);
      const client = await adminCli(['client', 'create', '--customer', msp.json.customer_id, '--scopes', 'p.token.scope.search_api'], env, cli);
      expect(client.code, client.stderr).toBe(0);
      const token = await call(url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: client.json.client_id, client_secret: client.json.client_secret } });
      expect(token.status).toBe(200);

      // The dataset package is found from dist/: the load in the background read its version.
      const query = { query: '{ ipOrgDataset { packageVersion state error } }' };
      const dataset = async () => (await call(url, 'POST', '/graphql', { token: token.body.access_token, body: query })).body.data.ipOrgDataset;
      await expect.poll(dataset, { timeout: 30_000 }).toMatchObject({ packageVersion: expect.stringMatching(/^\d/), error: null });
    } finally {
      service.child.kill('SIGTERM');
    }
    expect(await service.exited, service.output()).toBe(0);
  }, 120_000);
});

describe('npm start with neither a build nor the generated sources (npm ci --omit=dev before npm run build)', () => {
  it('says what to run, and exits 1', async () => {
    const copy = repositoryCopy();
    try {
      const service = startService(copy, {});
      await expect(service.url).rejects.toThrow(/no build \(dist\/\) and no generated sources/);
      expect(await service.exited).toBe(1);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
