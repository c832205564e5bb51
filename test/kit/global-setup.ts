import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildConsole } from '../../tools/build-console.js';
import { testPostgres } from './throwaway-postgres.js';

const { consoleBuildNeeded } = createRequire(import.meta.url)('../../src/console/console-build.cjs') as { consoleBuildNeeded: () => string | undefined };

/**
 * Gives the run its PostgreSQL: TEST_DATABASE_URL when set, otherwise a throwaway cluster of its
 * own (test/kit/throwaway-postgres.ts), stopped and removed at teardown; the workers inherit the
 * URL through TEST_DATABASE_URL. Fails fast, with the fix, when that server does not answer. Also
 * gives the run one temporary root (TMPDIR, inherited by the workers) removed at teardown, because
 * a worker the pool kills never runs its own exit hooks and its chDB and PGlite directories would
 * pile up in /tmp. Builds the console app first when its build is missing or stale, as `npm start`
 * does: the console's tests load it in a browser.
 */
export default async function setup(): Promise<() => void> {
  if (consoleBuildNeeded()) await buildConsole();
  const server = await testPostgres();
  const client = new pg.Client({ connectionString: server.url });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    server.stop();
    throw new Error(
      `PostgreSQL for the tests is not reachable at ${server.url} (${(error as Error).message}); check TEST_DATABASE_URL, or unset it to let the tests start their own`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  const runRoot = mkdtempSync(join(tmpdir(), 'bd-test-run-'));
  // Searchable by others, so the postgres user reaches a cluster a test starts in it as root.
  chmodSync(runRoot, 0o711);
  process.env.TMPDIR = runRoot;
  return () => {
    rmSync(runRoot, { recursive: true, force: true });
    server.stop();
  };
}
