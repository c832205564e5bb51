import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const DEFAULT_TEST_DATABASE_URL = 'postgresql://postgres:postgres@127.0.0.1:5432/postgres';

/**
 * Fails fast, with the fix, when the PostgreSQL the tests need is not there; and gives the run one
 * temporary root (TMPDIR, inherited by the workers) removed at teardown, because a worker the pool
 * kills never runs its own exit hooks and its chDB and PGlite directories would pile up in /tmp.
 */
export default async function setup(): Promise<() => void> {
  const url = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  process.env.TEST_DATABASE_URL = url;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(`PostgreSQL for the tests is not reachable at ${url} (${(error as Error).message}); run test/kit/ensure-test-tools.sh or set TEST_DATABASE_URL`);
  } finally {
    await client.end().catch(() => undefined);
  }
  const runRoot = mkdtempSync(join(tmpdir(), 'bd-test-run-'));
  process.env.TMPDIR = runRoot;
  return () => rmSync(runRoot, { recursive: true, force: true });
}
