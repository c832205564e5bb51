import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { Logger } from './logger.js';

const migrationsDir = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));
// Any fixed number: it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK = 72_001_337;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(`${dir}/${name}/migration.sql`, 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Applies the SQL migrations under prisma/migrations in name order, each in its own
 * transaction, under an advisory lock so that processes starting together apply each once.
 * An applied migration whose file has since changed stops the start: history is never rewritten.
 */
export async function applyMigrations(pool: pg.Pool, logger: Logger, migrations = readMigrations()): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS _migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations');
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const migration of migrations) {
      const checksum = done.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was changed after it was applied`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO _migrations (name, checksum) VALUES ($1, $2)', [migration.name, migration.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`);
      }
      applied.push(migration.name);
      logger.info('postgres.migration_applied', { migration: migration.name });
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return applied;
}

/** PostgreSQL undefined_table: `_migrations` does not exist, no migration ever ran. */
const UNDEFINED_TABLE = '42P01';

/** The names of the migrations not yet applied to the database behind `pool` (readiness: modules/operations/readiness.ts). */
export async function pendingMigrations(pool: pg.Pool, migrations: readonly Migration[]): Promise<string[]> {
  try {
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM _migrations');
    const applied = new Set(rows.map((r) => r.name));
    return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return migrations.map((m) => m.name);
    throw error;
  }
}
