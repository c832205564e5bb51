/**
 * Creates and migrates the flow store, idempotently, with the same SQL on chDB and on a server.
 *
 * Steps, each safe to repeat and to run from two processes at once:
 * 1. migration 1 creates the table;
 * 2. column reconciliation: a registry column missing from the table is added (this is how a new
 *    field reaches an existing table without a hand-written migration);
 * 3. the other numbered migrations, recorded in `schema_migrations` (every statement can run
 *    again, so a migration interrupted half-way is simply run again);
 * 4. retention: the table TTL is set to the configured number of days.
 */
import { createHash } from 'node:crypto';
import {
  DEFAULT_RETENTION_DAYS,
  FLOWS_TABLE,
  FRESH_PART_SETTINGS,
  QUIET_DAY_SETTINGS,
  createFlowsTableSql,
  flowColumnDefinitions,
  flowIndexDefinitions,
  ttlExpression,
} from './ddl.js';
import { SOURCE_COLUMN, quoteIdent } from './columns.js';
import { egressRollupMigration } from './egress-rollups.js';
import { termsRollupMigration } from './terms-rollups.js';
import type { FlowEngine, QueryOptions } from './engine.js';
import { FlowEngineError } from './errors.js';
import { recordFromColumnsSql } from './record-json.js';
import { rekeyFlows } from './rekey.js';
import { named } from './sql.js';

export const MIGRATIONS_TABLE = 'schema_migrations';

export interface Migration {
  version: number;
  name: string;
  statements: (opts: { retentionDays: number }) => string[];
  /** For a migration whose steps depend on what the table holds: runs after the statements. */
  run?: (engine: FlowEngine, opts: { retentionDays: number }) => Promise<void>;
  /** Waits for what the statements started in the background, before the migration is recorded. */
  settle?: (engine: FlowEngine) => Promise<void>;
}

/** How long a migration may wait for its mutations: a backfill of a big table takes a while. */
const MUTATION_WAIT_MS = 12 * 3_600_000;

/** Waits until `table` has no unfinished mutation; a failed one fails the migration. */
export async function waitForMutations(engine: FlowEngine, table: string, timeoutMs = MUTATION_WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [state] = await engine.query<{ pending: number; failure: string }>(
      named(
        'flowstore:schema.pending_mutations',
        'SELECT count() AS pending, any(latest_fail_reason) AS failure FROM system.mutations WHERE database = currentDatabase() AND table = {table:String} AND NOT is_done',
      ),
      { table },
    );
    if (!state || Number(state.pending) === 0) return;
    if (state.failure) throw new Error(`flow store migration: a mutation of ${table} failed: ${state.failure}`);
    if (Date.now() > deadline) throw new Error(`flow store migration: mutations of ${table} still running after ${timeoutMs / 60_000} minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'create flows', statements: ({ retentionDays }) => [createFlowsTableSql(retentionDays)] },
  {
    version: 2,
    name: 'whole records in source',
    // Rows stored before `source` existed (the column reconciliation has just added it) get it
    // built from their columns, once: a mutation, which on a big table takes longer than any
    // statement may, so it runs in the background and the migration waits for it (search must
    // not serve a record without its `source`). On a fresh table it has nothing to do.
    statements: () => [
      `/* flowstore:schema.backfill_source */ ALTER TABLE ${FLOWS_TABLE} UPDATE ${SOURCE_COLUMN} = ${recordFromColumnsSql()} WHERE ${SOURCE_COLUMN} = ''`,
    ],
    settle: (engine) => waitForMutations(engine, FLOWS_TABLE),
  },
  { version: 3, name: 'egress rollups', statements: () => egressRollupMigration() },
  { version: 4, name: 'time-first sorting key', statements: () => [], run: rekeyFlows },
  {
    version: 5,
    name: 'quiet days merged',
    statements: () => [`/* flowstore:schema.quiet_days */ ALTER TABLE ${FLOWS_TABLE} MODIFY SETTING ${QUIET_DAY_SETTINGS}`],
  },
  { version: 6, name: 'terms rollups', statements: () => termsRollupMigration() },
  {
    version: 7,
    name: 'compact fresh parts',
    statements: () => [`/* flowstore:schema.fresh_parts */ ALTER TABLE ${FLOWS_TABLE} MODIFY SETTING ${FRESH_PART_SETTINGS}`],
  },
];

export interface MigrateOptions {
  /** Days a flow is kept; default 30. */
  retentionDays?: number;
}

export interface MigrationReport {
  applied: number[];
  addedColumns: string[];
  addedIndexes: string[];
  droppedIndexes: string[];
  retentionDays: number;
  retentionChanged: boolean;
}

const CREATE_MIGRATIONS_TABLE = named(
  'flowstore:schema.create_migrations',
  `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version UInt32,
  name String,
  checksum String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree ORDER BY version`,
);

function checksum(statements: string[]): string {
  return createHash('sha256').update(statements.join('\n;\n')).digest('hex').slice(0, 16);
}

export async function migrateFlowStore(engine: FlowEngine, opts: MigrateOptions = {}): Promise<MigrationReport> {
  const retentionDays = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
  ttlExpression(retentionDays); // validates before anything is changed

  await engine.command(CREATE_MIGRATIONS_TABLE);
  const pending = await pendingMigrations(engine);
  const report: MigrationReport = { applied: [], addedColumns: [], addedIndexes: [], droppedIndexes: [], retentionDays, retentionChanged: false };
  const apply = async (m: Migration) => {
    const statements = m.statements({ retentionDays });
    for (const sql of statements) await engine.command(sql);
    await m.run?.(engine, { retentionDays });
    await m.settle?.(engine);
    await engine.command(
      named(
        'flowstore:schema.record_migration',
        `INSERT INTO ${MIGRATIONS_TABLE} (version, name, checksum) SELECT {version:UInt32}, {name:String}, {checksum:String}`,
      ),
      { version: m.version, name: m.name, checksum: checksum(statements) },
    );
    report.applied.push(m.version);
  };
  // The table first, then every registry column, so that later migrations may use any of them.
  for (const m of pending.filter((m) => m.version === 1)) await apply(m);
  report.addedColumns = await addMissingColumns(engine);
  ({ added: report.addedIndexes, dropped: report.droppedIndexes } = await reconcileIndexes(engine));
  for (const m of pending.filter((m) => m.version > 1)) await apply(m);
  report.retentionChanged = await ensureRetention(engine, retentionDays);
  return report;
}

/** ClickHouse UNKNOWN_TABLE: no migration ever ran on this database. */
const CH_UNKNOWN_TABLE = 60;

/** The migrations not recorded as applied (all of them when none ever ran); readiness asks too (modules/operations/readiness.ts). */
export async function pendingMigrations(engine: FlowEngine, opts: QueryOptions = {}): Promise<Migration[]> {
  try {
    const done = await engine.query<{ version: number }>(
      named('flowstore:schema.applied_migrations', `SELECT DISTINCT version FROM ${MIGRATIONS_TABLE}`),
      {},
      opts,
    );
    const applied = new Set(done.map((r) => Number(r.version)));
    return MIGRATIONS.filter((m) => !applied.has(m.version));
  } catch (error) {
    if (error instanceof FlowEngineError && error.clickhouseCode === CH_UNKNOWN_TABLE) return [...MIGRATIONS];
    throw error;
  }
}

async function addMissingColumns(engine: FlowEngine): Promise<string[]> {
  const existing = await engine.query<{ name: string }>(
    named('flowstore:schema.columns', 'SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {table:String}'),
    { table: FLOWS_TABLE },
  );
  const have = new Set(existing.map((r) => r.name));
  const added: string[] = [];
  for (const c of flowColumnDefinitions()) {
    if (have.has(c.column)) continue;
    await engine.command(named('flowstore:schema.add_column', `ALTER TABLE ${FLOWS_TABLE} ADD COLUMN IF NOT EXISTS ${c.sql}`));
    added.push(c.column);
  }
  return added;
}

/**
 * Makes the table's skip indexes the registry's: adds the missing ones and drops ours (`idx_*`)
 * that the registry no longer declares. An index that never skips a granule still costs every
 * statement filtering on its column the reading of its files.
 */
async function reconcileIndexes(engine: FlowEngine): Promise<{ added: string[]; dropped: string[] }> {
  const existing = await engine.query<{ name: string }>(
    named('flowstore:schema.indexes', 'SELECT name FROM system.data_skipping_indices WHERE database = currentDatabase() AND table = {table:String}'),
    { table: FLOWS_TABLE },
  );
  const have = new Set(existing.map((r) => r.name));
  const declared = flowIndexDefinitions();
  const added: string[] = [];
  for (const i of declared) {
    if (have.has(i.name)) continue;
    // New indexes cover new parts; old parts get it on merge (MATERIALIZE INDEX would rewrite them now).
    await engine.command(named('flowstore:schema.add_index', `ALTER TABLE ${FLOWS_TABLE} ADD ${i.sql.replace(/^INDEX /, 'INDEX IF NOT EXISTS ')}`));
    added.push(i.name);
  }
  const names = new Set(declared.map((i) => i.name));
  const dropped = [...have].filter((name) => name.startsWith('idx_') && !names.has(name)).sort();
  for (const name of dropped) {
    await engine.command(named('flowstore:schema.drop_index', `ALTER TABLE ${FLOWS_TABLE} DROP INDEX IF EXISTS ${quoteIdent(name)}`));
  }
  return { added, dropped };
}

/** The retention the table currently has, read from its TTL clause. */
export async function currentRetentionDays(engine: FlowEngine): Promise<number | undefined> {
  const rows = await engine.query<{ engine_full: string }>(
    named('flowstore:schema.table_engine', 'SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = {table:String}'),
    { table: FLOWS_TABLE },
  );
  const m = /TTL .*toIntervalDay\((\d+)\)/.exec(rows[0]?.engine_full ?? '');
  return m ? Number(m[1]) : undefined;
}

async function ensureRetention(engine: FlowEngine, retentionDays: number): Promise<boolean> {
  if ((await currentRetentionDays(engine)) === retentionDays) return false;
  await engine.command(named('flowstore:schema.modify_ttl', `ALTER TABLE ${FLOWS_TABLE} MODIFY TTL ${ttlExpression(retentionDays)}`));
  return true;
}
