import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type Logger, createLogger } from '../../src/infra/logger.js';
import { keyFilePath } from '../../src/infra/secrets-key.js';
import { ChdbEngine, type FlowEngine } from '../../src/flowstore/index.js';
import { createTestDatabase } from './databases.js';

let shared: FlowEngine | undefined;
/** The data directory of the app that created each test database: its key file seals that database. */
const ownerDirs = new Map<string, string>();

/**
 * `SECRETS_KEY` for a second process on a database whose first server generated its key file in
 * `dataDir`: processes sharing a database share its secrets key (docs/secrets.md).
 */
export function sharedSecretsKey(dataDir: string): { SECRETS_KEY: string } {
  return { SECRETS_KEY: readFileSync(keyFilePath(dataDir), 'utf8').trim().split('\n').join(',') };
}

/**
 * Tests call the anonymous endpoints from one address far faster than any real client: limits so
 * high they never refuse, yet every request is still counted. rate-limits.test.ts runs with the
 * documented defaults (`defaultRateLimits`).
 */
const TEST_RATE_LIMITS = Object.fromEntries(
  ['TOKEN_PER_ADDRESS', 'TOKEN_PER_CLIENT', 'DEVICE_START_PER_ADDRESS', 'DEVICE_LOOKUP_PER_ADDRESS', 'DEVICE_POLL_PER_ADDRESS', 'SIGN_IN_PER_ADDRESS'].map(
    (name) => [`RATE_LIMIT_${name}`, '1000000000'],
  ),
);

/**
 * chDB binds one data directory per process, and in production every server process shares one
 * ClickHouse anyway: so the test apps of one test file share one engine in a temporary directory.
 */
export function sharedFlowEngine(): FlowEngine {
  if (!shared) {
    const dir = mkdtempSync(join(tmpdir(), 'bd-chdb-'));
    shared = new ChdbEngine(dir);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return shared;
}

export interface TestApp {
  app: App;
  url: string;
  config: Config;
  stop(): Promise<void>;
}

/**
 * A real server on a free loopback port over its own throwaway PostgreSQL database (or, with
 * `embedded`, over PGlite in a temporary directory), so test files run concurrently. With
 * `databaseUrl` (another test app's `config.databaseUrl`) it joins that database as a second
 * process would, and leaves dropping it to its owner.
 */
export async function startTestApp(
  options: {
    embedded?: boolean;
    env?: Record<string, string>;
    dataDir?: string;
    databaseUrl?: string;
    /** Open ClickHouse as configured (e.g. CLICKHOUSE_URL) instead of the shared test engine. */
    ownFlowEngine?: boolean;
    /** Keep the documented rate limits instead of the kit's never-refusing ones. */
    defaultRateLimits?: boolean;
    /** Where the app logs (default: nowhere, or stderr with TEST_LOG_LEVEL=debug). */
    logger?: Logger;
  } = {},
): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'bd-test-'));
  const database = options.embedded || options.databaseUrl ? undefined : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? database?.url;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    // The IP → organization dataset loads on first explore use, not in every test file.
    IP_ORG_DATASET: 'lazy',
    ...(options.defaultRateLimits ? {} : TEST_RATE_LIMITS),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(options.databaseUrl && ownerDirs.has(options.databaseUrl) ? sharedSecretsKey(ownerDirs.get(options.databaseUrl)!) : {}),
    ...options.env,
  });
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent');
  const app = await buildApp(config, logger, { flowEngine: options.embedded || options.ownFlowEngine ? undefined : sharedFlowEngine() });
  if (database) ownerDirs.set(database.url, dataDir);
  return {
    app,
    url: app.url,
    config,
    async stop() {
      await app.stop();
      await database?.drop();
      if (database) ownerDirs.delete(database.url);
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
