/**
 * Hourly counts per tenant of the fields analysts most often ask the top values of, for terms
 * aggregations (terms.ts): projections of the flows table, one per field, kept by ClickHouse as
 * the egress rollups are (egress-rollups.ts: written with each part, merged, rebuilt, dropped with
 * it, so they always agree with the rows).
 *
 * A day of 100M-flow data (14.3M flows, 50 tenants) holds ~20k (tenant, hour, application) groups,
 * ~20k per destination port and 2.5k per protocol: MSP-wide top 10 applications over 24 h read
 * 14.3M rows and grouped them by two keys in ~650 ms (tools/bench/HISTORY.md).
 */
import { FLOWS_TABLE } from './ddl.js';
import { HOUR_SQL } from './hour-split.js';
import { quoteIdent } from './columns.js';
import { named } from './sql.js';

/** Columns with a rollup: the application, the destination port and the transport protocol. */
export const TERMS_ROLLUP_COLUMNS: ReadonlySet<string> = new Set(['app_name', 'dst_port', 'transport_proto']);

const projectionName = (column: string) => `terms_${column}`;

export const TERMS_ROLLUP_PROJECTIONS: readonly string[] = [...TERMS_ROLLUP_COLUMNS].map(projectionName);

function projectionSql(column: string): string {
  const keys = `\`customer_id\`, ${HOUR_SQL}, ${quoteIdent(column)}`;
  return `PROJECTION IF NOT EXISTS ${projectionName(column)} (SELECT ${keys}, count() GROUP BY ${keys})`;
}

/**
 * The flow store migration that adds the rollups and builds them for the parts already written,
 * in the background (terms read those parts row by row until it reaches them). Every statement
 * can run again. The projection modes are the egress rollups' migration's.
 */
export function termsRollupMigration(): string[] {
  return [...TERMS_ROLLUP_COLUMNS].flatMap((column) => [
    named('flowstore:schema.add_projection', `ALTER TABLE ${FLOWS_TABLE} ADD ${projectionSql(column)}`),
    named('flowstore:schema.materialize_projection', `ALTER TABLE ${FLOWS_TABLE} MATERIALIZE PROJECTION ${projectionName(column)} SETTINGS mutations_sync = 0`),
  ]);
}
