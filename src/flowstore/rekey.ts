/**
 * Flow store migration 4: tables created before it were sorted (customer_id, node_id, timestamp,
 * id); the current order is (customer_id, timestamp, id) (ddl.ts says why). ClickHouse cannot
 * change a sorting key in place, so the rows move to a new table that then takes the old one's
 * name. Nothing is lost on the way:
 * - merges of the old table stop first, so its parts keep their names while they are copied;
 * - after the exchange, the parts that reached the old table during the copy (inserts by other
 *   processes; they are the only new parts, as nothing merges) are copied too, until none is left;
 * - the old table is dropped only then. Until the exchange it is untouched: a migration that fails
 *   before it drops its copy and leaves the data where it was, and the next start copies again (a
 *   process killed mid-copy leaves a `flows_rekey_*` table to drop by hand).
 * Two processes migrating at once each build their own copy and only one exchanges; a second
 * exchange in the same instant would leave records twice until ReplacingMergeTree merges them.
 */
import { randomBytes } from 'node:crypto';
import { FLOWS_SORTING_KEY, FLOWS_TABLE, createFlowsTableSql } from './ddl.js';
import { egressRollupDdl } from './egress-rollups.js';
import type { FlowEngine } from './engine.js';
import { named } from './sql.js';

/** A day partition of a big table takes minutes to copy; the whole migration may take hours. */
const COPY_TIMEOUT_MS = 6 * 3_600_000;
/** Rounds of catching up with parts inserted meanwhile before the migration gives up. */
const MAX_CATCH_UP_ROUNDS = 20;

export async function rekeyFlows(engine: FlowEngine, opts: { retentionDays: number }): Promise<void> {
  if ((await sortingKey(engine, FLOWS_TABLE)) === FLOWS_SORTING_KEY) return;
  const copy = `${FLOWS_TABLE}_rekey_${randomBytes(4).toString('hex')}`;
  await engine.command(createFlowsTableSql(opts.retentionDays, copy));
  for (const sql of egressRollupDdl(copy)) await engine.command(sql);
  const columns = await storedColumns(engine, copy);

  await engine.command(named('flowstore:rekey.stop_merges', `SYSTEM STOP MERGES ${FLOWS_TABLE}`));
  let exchanged = false;
  try {
    const copied = new Set<string>();
    await copyParts(engine, FLOWS_TABLE, copy, columns, copied);
    // Another process finished first: the copy is dropped on the way out.
    if ((await sortingKey(engine, FLOWS_TABLE)) === FLOWS_SORTING_KEY) return;
    await engine.command(named('flowstore:rekey.exchange', `EXCHANGE TABLES ${FLOWS_TABLE} AND ${copy}`));
    exchanged = true;
    // Whether a merge stop follows the table or its name is the engine's business: say both.
    await engine.command(named('flowstore:rekey.stop_merges', `SYSTEM STOP MERGES ${copy}`));
    await engine.command(named('flowstore:rekey.start_merges', `SYSTEM START MERGES ${FLOWS_TABLE}`));
    // `copy` is now the old table: whatever was inserted into it during the copy.
    for (let round = 0; ; round++) {
      if (!(await copyParts(engine, copy, FLOWS_TABLE, columns, copied))) break;
      if (round === MAX_CATCH_UP_ROUNDS) throw new Error(`flow store migration 4: ${copy} still receives inserts; stop the old servers and start again`);
    }
    await engine.command(named('flowstore:rekey.drop_old', `DROP TABLE ${copy} SYNC`));
  } finally {
    if (!exchanged) {
      await engine.command(named('flowstore:rekey.start_merges', `SYSTEM START MERGES ${FLOWS_TABLE}`));
      await engine.command(named('flowstore:rekey.drop_copy', `DROP TABLE IF EXISTS ${copy} SYNC`));
    }
  }
}

async function sortingKey(engine: FlowEngine, table: string): Promise<string | undefined> {
  const [row] = await engine.query<{ sorting_key: string }>(
    named('flowstore:rekey.sorting_key', 'SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = {table:String}'),
    { table },
  );
  return row?.sorting_key;
}

/** The columns a copy must carry (materialized ones are computed again on insert). */
async function storedColumns(engine: FlowEngine, table: string): Promise<string[]> {
  const rows = await engine.query<{ name: string }>(
    named(
      'flowstore:rekey.columns',
      "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {table:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position",
    ),
    { table },
  );
  return rows.map((r) => `\`${r.name}\``);
}

/** Copies the active parts of `from` not in `copied`, a partition at a time; says whether there were any. */
async function copyParts(engine: FlowEngine, from: string, to: string, columns: string[], copied: Set<string>): Promise<boolean> {
  const parts = await engine.query<{ name: string; partition_id: string }>(
    named(
      'flowstore:rekey.parts',
      'SELECT name, partition_id FROM system.parts WHERE database = currentDatabase() AND table = {table:String} AND active ORDER BY partition_id, name',
    ),
    { table: from },
  );
  const byPartition = new Map<string, string[]>();
  for (const p of parts) if (!copied.has(p.name)) byPartition.set(p.partition_id, [...(byPartition.get(p.partition_id) ?? []), p.name]);
  for (const names of byPartition.values()) {
    await engine.command(
      named(
        'flowstore:rekey.copy',
        `INSERT INTO ${to} (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM ${from} WHERE _part IN {parts:Array(String)} SETTINGS insert_deduplicate = 0`,
      ),
      { parts: names },
      { timeoutMs: COPY_TIMEOUT_MS },
    );
    for (const n of names) copied.add(n);
  }
  return byPartition.size > 0;
}
