import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/infra/logger.js';
import { createTestDatabase } from './databases.js';

export interface TestApp {
  app: App;
  url: string;
  config: Config;
  stop(): Promise<void>;
}

/**
 * A real server on a free loopback port over its own throwaway PostgreSQL database (or, with
 * `embedded`, over PGlite in a temporary directory), so test files run concurrently.
 */
export async function startTestApp(options: { embedded?: boolean; env?: Record<string, string>; dataDir?: string } = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'bd-test-'));
  const database = options.embedded ? undefined : await createTestDatabase();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const app = await buildApp(config, createLogger(process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent'));
  return {
    app,
    url: app.url,
    config,
    async stop() {
      await app.stop();
      await database?.drop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
