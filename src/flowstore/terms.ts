/**
 * Terms aggregation (`/search/agg/1.0`, shape ours: the SDK does not call it): the top values of
 * one field per instance, with a count and an optional metric per value, like an Elasticsearch
 * terms aggregation. One statement: GROUP BY instance and value (the value alone for one
 * instance), a window sum for the total, LIMIT BY instance; counted from the hourly rollups
 * (terms-rollups.ts) where they hold the answer.
 */
import { columnForPath, quoteIdent, type ColumnDef } from './columns.js';
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine } from './engine.js';
import { FlowQueryError, excerpt } from './errors.js';
import { hourSplit } from './hour-split.js';
import {
  instanceSql,
  readMetric,
  readDirection,
  readScopedFilter,
  scopeWhere,
  searchQueryOptions,
  tenantWhere,
  type CommonRequest,
  type Metric,
  type RunOptions,
  type ScopedFilter,
} from './search-request.js';
import { TERMS_ROLLUP_COLUMNS } from './terms-rollups.js';
import { ParamBag, named } from './sql.js';

/** A terms aggregation; its values as CommonRequest says, each checked by its reader here. */
export interface TermsRequest extends CommonRequest {
  /** A filterable dotted path or alias. */
  field: string;
  /** Buckets per instance; default 10, at most 1000. */
  size?: number;
  /** `count`, `sum|avg|min|max:<numeric field>` or `uniq:<field>` (readMetric). */
  metric?: unknown;
  /** `by` doc_count, value or key; `direction` asc or desc (readTermsOrder). */
  order?: { by?: unknown; direction?: unknown } | null;
}

export interface TermsBucket {
  key: string | number | boolean;
  doc_count: number;
  value: number | null;
}

export interface InstanceTerms {
  buckets: TermsBucket[];
  /** Matching values not in the returned buckets (per value occurrence for array fields). */
  other_doc_count: number;
  took: number;
}

export type TermsResponse = Record<string, InstanceTerms>;

export const DEFAULT_TERMS_SIZE = 10;
export const MAX_TERMS_SIZE = 1_000;
const ORDER_ALIAS = { doc_count: 'term_count', value: 'term_value', key: 'term_key' } as const;
/** What `order.by` may name. */
export const TERMS_ORDER_BY = Object.keys(ORDER_ALIAS) as (keyof typeof ORDER_ALIAS)[];

/** ORDER BY for `order` ({by, direction}; default doc_count desc, key asc), ties by key. */
function readTermsOrder(order: unknown): string {
  if (order !== undefined && order !== null && (typeof order !== 'object' || Array.isArray(order))) {
    throw new FlowQueryError('order', 'order must be an object {by, direction}');
  }
  const { by: given, direction, ...extra } = (order ?? {}) as { by?: unknown; direction?: unknown };
  const unknown = Object.keys(extra)[0];
  if (unknown !== undefined) throw new FlowQueryError(`order.${excerpt(unknown)}`, `Unknown field '${excerpt(unknown)}' in order; it may have by, direction`);
  const by = given ?? 'doc_count';
  if (typeof by !== 'string' || !Object.hasOwn(ORDER_ALIAS, by)) throw new FlowQueryError('order.by', "order.by must be 'doc_count', 'value' or 'key'");
  const sqlDirection = readDirection(direction, 'order.direction', by === 'key' ? 'asc' : 'desc').toUpperCase();
  return `${ORDER_ALIAS[by as keyof typeof ORDER_ALIAS]} ${sqlDirection} NULLS LAST, term_key ASC`;
}

export async function aggregateTerms(engine: FlowEngine, req: TermsRequest, opts: RunOptions = {}): Promise<TermsResponse> {
  const started = performance.now();
  const filter = readScopedFilter(req, opts.nowMs ?? Date.now());
  const col = typeof req.field === 'string' ? columnForPath(req.field) : undefined;
  if (!col || !col.filterable) throw new FlowQueryError('field', `unknown or unusable terms field '${excerpt(String(req.field))}'`);
  const size = req.size ?? DEFAULT_TERMS_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_TERMS_SIZE) throw new FlowQueryError('size', `size must be an integer between 1 and ${MAX_TERMS_SIZE}`);
  const metric = readMetric(req.metric, 'metric');
  const order = readTermsOrder(req.order);
  // One instance's rows are counted by one key, about as fast as two rollup reads are planned
  // (24 h: 22 against 23 ms at 100M; 130 h: 31 against 28); several instances' by two keys, which is
  // where the rows cost (MSP-wide, 24 h: 695 against 90 ms).
  const rolledUp = filter.customerIds.length > 1 && filter.where.type === 'all' && metric.name === 'count' && TERMS_ROLLUP_COLUMNS.has(col.column);
  const { sql, params } = (rolledUp ? rolledUpTermsQuery : termsQuery)(filter, col, metric, order, size);
  const rows = await engine.query<{
    term_instance: string;
    term_key: string | number | boolean;
    term_count: number;
    term_value: number | null;
    all_docs: number;
  }>(
    sql,
    params.values,
    // ClickHouse weighs projections only when asked (SEARCH_SETTINGS).
    searchQueryOptions(opts, rolledUp ? { optimize_use_projections: 1 } : {}),
  );
  const took = Math.round(performance.now() - started) / 1000;
  const response: TermsResponse = {};
  for (const id of filter.customerIds) {
    const mine = rows.filter((r) => r.term_instance === id);
    const buckets = mine.map((r) => ({ key: r.term_key, doc_count: Number(r.term_count), value: r.term_value === null ? null : Number(r.term_value) }));
    const all = mine.length ? Number(mine[0]!.all_docs) : 0;
    response[id] = { buckets, other_doc_count: all - buckets.reduce((s, b) => s + b.doc_count, 0), took };
  }
  return response;
}

type TermsQuery = (filter: ScopedFilter, col: ColumnDef, metric: Metric, order: string, size: number) => { sql: string; params: ParamBag };

/** The top values read from the window's rows. */
const termsQuery: TermsQuery = (filter, col, metric, order, size) => {
  const c = quoteIdent(col.column);
  const key = col.kind === 'string[]' ? `arrayJoin(${c})` : col.kind === 'timestamp' ? `toUnixTimestamp64Milli(${c})` : c;
  const params = new ParamBag();
  const where = scopeWhere(filter, params) + notNull(col);
  const { several, sql: instance } = instanceSql(filter, params);
  const limit = params.add(size, 'UInt64');
  const sql = named(
    'flowstore:search.terms',
    // term_* aliases: a plain `key` alias would shadow the flow's own `key` column in WHERE.
    `SELECT ${instance} AS term_instance, ${key} AS term_key, count() AS term_count, ${metric.sql} AS term_value, ` +
      `sum(count()) OVER (${several ? 'PARTITION BY term_instance' : ''}) AS all_docs FROM ${FLOWS_TABLE} WHERE ${where} ` +
      (several
        ? `GROUP BY term_instance, term_key ORDER BY term_instance, ${order} LIMIT ${limit} BY term_instance`
        : `GROUP BY term_key ORDER BY ${order} LIMIT ${limit}`),
  );
  return { sql, params };
};

/**
 * Several instances' top values counted from the rollup (terms-rollups.ts) for the window's whole
 * hours and from the rows for its partial hours (hour-split.ts), then summed: the same answer as
 * termsQuery for a count without a sentence, which is all the rollup holds.
 */
const rolledUpTermsQuery: TermsQuery = (filter, col, _metric, order, size) => {
  const c = quoteIdent(col.column);
  const params = new ParamBag();
  const tenants = tenantWhere(filter, params);
  const counts = hourSplit(filter.startMs, filter.endMs, params).map(
    (time) =>
      `SELECT \`customer_id\` AS term_instance, ${c} AS term_key, count() AS n FROM ${FLOWS_TABLE} WHERE ${tenants} AND ${time}${notNull(col)} GROUP BY term_instance, term_key`,
  );
  const limit = params.add(size, 'UInt64');
  const sql = named(
    'flowstore:search.terms_rolled_up',
    `SELECT term_instance, term_key, sum(n) AS term_count, term_count AS term_value, sum(sum(n)) OVER (PARTITION BY term_instance) AS all_docs ` +
      `FROM (${counts.join(' UNION ALL ')}) GROUP BY term_instance, term_key ORDER BY term_instance, ${order} LIMIT ${limit} BY term_instance`,
  );
  return { sql, params };
};

const notNull = (col: ColumnDef) => (col.nullable ? ` AND ${quoteIdent(col.column)} IS NOT NULL` : '');
