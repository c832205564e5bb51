/**
 * DDL generated from the column registry. The same text runs on chDB and on a ClickHouse server.
 *
 * Table design (docs/flowstore.md has the reasoning):
 * - ORDER BY (customer_id, timestamp, id): a tenant's rows are contiguous and in time order. Every
 *   query starts with the tenant and a time window, which the primary index turns into one range;
 *   and a page sorted by time (search's default) is read from the range's end and stops once full,
 *   instead of sorting the window. `id` ends the key so that ReplacingMergeTree collapses a re-sent
 *   record and so that it can break ties in the same order; the primary index stops at timestamp.
 *   (Until flow store migration 4 the node came before time; nothing filters on it.)
 * - PARTITION BY day + TTL with ttl_only_drop_parts: retention drops whole day partitions.
 * - non_replicated_deduplication_window: a batch inserted again with the same
 *   insert_deduplication_token is dropped by the server (see ingest.ts).
 * - A day that has gone quiet is merged into one part (QUIET_DAY_SETTINGS).
 * - An insert writes a Compact part (FRESH_PART_SETTINGS).
 */
import { COLUMNS, EXTRAS_COLUMN, HIDDEN_COLUMNS, SOURCE_COLUMN, quoteIdent, type ColumnDef } from './columns.js';

export const FLOWS_TABLE = 'flows';
export const DEFAULT_RETENTION_DAYS = 30;
/** How many recent insert blocks the server remembers for deduplication. */
export const DEDUP_WINDOW_BLOCKS = 10_000;

/**
 * A day partition none of whose parts changed for an hour is merged into one part. ClickHouse's
 * own merges stop at parts of similar sizes and left a finished day in 10–13 parts, and each part
 * costs every search statement a stream of its own: one tenant's records statement over a day of
 * 10M flows took 31.9 ms on 10 parts and 20.4 ms on one (docs/flowstore.md). Today's partition
 * keeps receiving parts and is merged as usual; a batch arriving late for a past day costs one
 * more rewrite of that day an hour later.
 */
export const QUIET_DAY_MERGE_SECONDS = 3_600;
export const QUIET_DAY_SETTINGS = `min_age_to_force_merge_seconds = ${QUIET_DAY_MERGE_SECONDS}, min_age_to_force_merge_on_partition_only = 1`;

/**
 * Parts of fewer rows than this are Compact: all columns in one data file. A Wide part has two
 * files per column, and the table's ~200 columns made each 5,000-row insert create ~800 files:
 * system time was two thirds of the insert's CPU, which Compact parts cut from ~200 to ~80 µs per
 * flow. Every insert is below it (a group is at most 30,000 rows, insert-queue.ts); merged parts
 * above it are Wide, which reads a column without the others.
 */
export const WIDE_PART_MIN_ROWS = 32_768;
export const FRESH_PART_SETTINGS = `min_rows_for_wide_part = ${WIDE_PART_MIN_ROWS}`;

export function columnDefinitionSql(c: ColumnDef): string {
  let sql = `${quoteIdent(c.column)} ${c.type}`;
  if (c.materialized) sql += ` MATERIALIZED ${c.materialized}`;
  if (c.defaultExpr) sql += ` DEFAULT ${c.defaultExpr}`;
  if (c.codec) sql += ` CODEC(${c.codec})`;
  return sql;
}

/** Every column of the flows table with its definition, in DDL order. */
export function flowColumnDefinitions(): { column: string; sql: string }[] {
  return [
    ...COLUMNS.map((c) => ({ column: c.column, sql: columnDefinitionSql(c) })),
    ...HIDDEN_COLUMNS.map((h) => ({ column: h.column, sql: `${quoteIdent(h.column)} ${h.type} MATERIALIZED ${h.materialized}` })),
    // Unknown keys of the record, as JSON (empty when none).
    { column: EXTRAS_COLUMN, sql: `${quoteIdent(EXTRAS_COLUMN)} String DEFAULT '' CODEC(ZSTD(1))` },
    // The record as search returns it (columns.ts SOURCE_COLUMN; rows stored before it get it from migration 2).
    { column: SOURCE_COLUMN, sql: `${quoteIdent(SOURCE_COLUMN)} String DEFAULT '' CODEC(ZSTD(1))` },
  ];
}

/** Skip indexes declared in the registry: `INDEX idx_<column> <column> TYPE <type> GRANULARITY 1`. */
export function flowIndexDefinitions(): { name: string; sql: string }[] {
  const indexed = [
    ...COLUMNS.filter((c) => c.index).map((c) => ({ column: c.column, index: c.index! })),
    ...HIDDEN_COLUMNS.filter((h) => h.index).map((h) => ({ column: h.column, index: h.index! })),
  ];
  return indexed.map(({ column, index }) => {
    const name = `idx_${column}`;
    return { name, sql: `INDEX ${quoteIdent(name)} ${quoteIdent(column)} TYPE ${index} GRANULARITY 1` };
  });
}

export function ttlExpression(retentionDays: number): string {
  if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 3650) {
    throw new Error(`retention must be a whole number of days between 1 and 3650, got ${retentionDays}`);
  }
  return `toDateTime(\`timestamp\`) + toIntervalDay(${retentionDays})`;
}

/** The sorting key `createFlowsTableSql` declares, as system.tables.sorting_key spells it. */
const SORTING_COLUMNS = ['customer_id', 'timestamp', 'id'];
export const FLOWS_SORTING_KEY = SORTING_COLUMNS.join(', ');
const keySql = (columns: string[]) => `(${columns.map(quoteIdent).join(', ')})`;

export function createFlowsTableSql(retentionDays: number = DEFAULT_RETENTION_DAYS, table: string = FLOWS_TABLE): string {
  const body = [...flowColumnDefinitions().map((c) => c.sql), ...flowIndexDefinitions().map((i) => i.sql)];
  return [
    `/* flowstore:schema.create_flows */ CREATE TABLE IF NOT EXISTS ${table} (`,
    body.map((l) => `  ${l}`).join(',\n'),
    ')',
    'ENGINE = ReplacingMergeTree',
    'PARTITION BY toDate(`timestamp`)',
    // The primary index stops before `id` (see above).
    `PRIMARY KEY ${keySql(SORTING_COLUMNS.slice(0, -1))}`,
    `ORDER BY ${keySql(SORTING_COLUMNS)}`,
    `TTL ${ttlExpression(retentionDays)}`,
    `SETTINGS non_replicated_deduplication_window = ${DEDUP_WINDOW_BLOCKS}, ttl_only_drop_parts = 1, index_granularity = 8192, ${QUIET_DAY_SETTINGS}, ${FRESH_PART_SETTINGS}`,
  ].join('\n');
}
