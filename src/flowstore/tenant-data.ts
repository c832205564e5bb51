/**
 * Removing a deleted tenant's flows. Every row a tenant has in ClickHouse is in the flows table:
 * the egress and terms rollups are projections inside its parts (egress-rollups.ts,
 * terms-rollups.ts), rebuilt by the same mutation.
 *
 * The removal is a lightweight DELETE that ClickHouse runs in the background (a mutation): the
 * statement returns at once and no statement waits for the mutation, so it never holds a
 * request or another tenant's read, however many parts it has to go through. The mutation is
 * found again by its command, which names the tenant (tenant ids are never reused): a caller that
 * lost track of it (a crash between starting it and recording it) finds it instead of queuing a
 * second one. ClickHouse keeps its mutations on disk and resumes them after a restart.
 */
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine } from './engine.js';
import { named } from './sql.js';

/** A mutation removing a tenant's flows, as system.mutations reports it. */
export interface FlowsRemoval {
  mutationId: string;
  done: boolean;
  /** Parts it has still to go through. */
  partsToDo: number;
  /** Why its last attempt on a part failed ('' when none did); ClickHouse keeps retrying. */
  failure: string;
}

interface MutationRow {
  mutation_id: string;
  is_done: number;
  parts_to_do: number;
  latest_fail_reason: string;
}

const removal = (row: MutationRow): FlowsRemoval => ({
  mutationId: row.mutation_id,
  done: Number(row.is_done) === 1,
  partsToDo: Number(row.parts_to_do),
  failure: row.latest_fail_reason,
});

/** How the tenant appears in its mutation's command: `(UPDATE _row_exists = 0 WHERE customer_id = 'cus_…')`. */
const commandNaming = (customerId: string) => `_row_exists = 0 WHERE customer_id = '${customerId}'`;

const MUTATIONS = `SELECT mutation_id, is_done, parts_to_do, latest_fail_reason FROM system.mutations
WHERE database = currentDatabase() AND table = {table:String} AND NOT is_killed`;

/** The newest mutation removing the tenant's flows, if ClickHouse still lists one. */
export async function latestFlowsRemoval(engine: FlowEngine, customerId: string): Promise<FlowsRemoval | undefined> {
  const [row] = await engine.query<MutationRow>(
    named('flowstore:tenant.latest_removal', `${MUTATIONS} AND position(command, {command:String}) > 0 ORDER BY create_time DESC, mutation_id DESC LIMIT 1`),
    { table: FLOWS_TABLE, command: commandNaming(customerId) },
  );
  return row && removal(row);
}

/**
 * A removal's state; undefined once ClickHouse no longer lists it (it keeps the last finished
 * ones only, `finished_mutations_to_keep`), which means it finished long ago.
 */
export async function flowsRemoval(engine: FlowEngine, mutationId: string): Promise<FlowsRemoval | undefined> {
  const [row] = await engine.query<MutationRow>(named('flowstore:tenant.removal', `${MUTATIONS} AND mutation_id = {mutationId:String}`), {
    table: FLOWS_TABLE,
    mutationId,
  });
  return row && removal(row);
}

/**
 * Starts removing the tenant's flows, unless a removal newer than `after` (the one the caller
 * already knows of) is listed: returns that one, or the one started.
 */
export async function startFlowsRemoval(engine: FlowEngine, customerId: string, after?: string): Promise<FlowsRemoval> {
  const listed = await latestFlowsRemoval(engine, customerId);
  if (listed && listed.mutationId !== after) return listed;
  await engine.command(
    named('flowstore:tenant.remove_flows', `DELETE FROM ${FLOWS_TABLE} WHERE customer_id = {customerId:String} SETTINGS lightweight_deletes_sync = 0`),
    { customerId },
  );
  const started = await latestFlowsRemoval(engine, customerId);
  if (!started || started.mutationId === after) throw new Error(`the removal of ${customerId}'s flows was not listed in system.mutations`);
  return started;
}

/** How many flows of the tenant queries still see. */
export async function tenantFlowCount(engine: FlowEngine, customerId: string): Promise<number> {
  const [row] = await engine.query<{ n: number }>(
    named('flowstore:tenant.flow_count', `SELECT count() AS n FROM ${FLOWS_TABLE} WHERE customer_id = {customerId:String}`),
    {
      customerId,
    },
  );
  return Number(row?.n ?? 0);
}

/** Where removing a tenant's flows stands, as the deletion worker records it (tenancy/deletion-hooks.ts). */
export interface FlowsRemovalProgress {
  [key: string]: string | number | boolean | null;
  done: boolean;
  mutation_id: string | null;
  parts_to_do: number | null;
  failure: string | null;
}

/**
 * One step of removing a tenant's flows, from where `last` left it: starts the removal (or finds
 * the one a crash left unrecorded), then reports its progress until it is done. Flows that
 * reached the table after the removal started (an ingest already past its token check when the
 * tenant was deleted) are still counted once it is done, and removed by one more.
 */
export async function advanceFlowsRemoval(engine: FlowEngine, customerId: string, last: FlowsRemovalProgress | undefined): Promise<FlowsRemovalProgress> {
  const progress = (r: FlowsRemoval): FlowsRemovalProgress => ({
    done: false,
    mutation_id: r.mutationId,
    parts_to_do: r.partsToDo,
    failure: r.failure || null,
  });
  if (!last?.mutation_id) return progress(await startFlowsRemoval(engine, customerId));
  const current = await flowsRemoval(engine, last.mutation_id);
  if (current && !current.done) return progress(current);
  if ((await tenantFlowCount(engine, customerId)) > 0) return progress(await startFlowsRemoval(engine, customerId, last.mutation_id));
  return { done: true, mutation_id: last.mutation_id, parts_to_do: 0, failure: null };
}
