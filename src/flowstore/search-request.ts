/**
 * Validation of search and aggregation requests — every rule of api-spec.md "Search" and §8
 * Limits, each failure a FlowQueryError naming the request field — and the tenant + time scope
 * that starts every statement's WHERE. Pure functions, no I/O.
 */
import { addressSql, canonicalPath, columnForPath, quoteIdent, type ColumnDef } from './columns.js';
import type { QueryOptions } from './engine.js';
import { FlowQueryError, excerpt } from './errors.js';
import { compilePql, readSentence, type TypedExpr } from './pql/index.js';
import type { ParamBag } from './sql.js';
import { resolveDateTimeFilter } from './time.js';

export const DEFAULT_SIZE = 15;
export const MAX_SIZE = 25_000;
export const DEFAULT_WINDOW_MS = 15 * 60_000;
export const MAX_INSTANCES = 100;
export const MAX_SORT_KEYS = 8;
export const MAX_FIELDS = 512;
/** A `fields` path's length, and the dotted segments of all of them together: each segment is a parameter of the statement. */
export const MAX_FIELD_LENGTH = 256;
export const MAX_FIELD_SEGMENTS = 2_048;
export const MAX_TIMESERIES_BUCKETS = 10_000;

export interface TimeWindow {
  startMs: number;
  endMs: number;
}

/**
 * What every search selects. `customerIds` are instances the caller has authorized. Every other
 * value of a request is read and checked here (readSentence, readTimeWindow, readSort...), each
 * failure a FlowQueryError naming its wire field, so a caller passes them on as it received them
 * (`unknown`): the store's refusals then come after the caller's own checks, authorization first,
 * in one order whichever door the request came through (docs/search.md "Errors").
 */
export interface CommonRequest {
  customerIds: readonly string[];
  /** PQL, a string; absent or null matches all. */
  sentence?: unknown;
  /** DateTimeFilters (wire.md 5.2). */
  start?: unknown;
  end?: unknown;
}

export interface ScopedFilter extends TimeWindow {
  customerIds: string[];
  where: TypedExpr;
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function readCustomerIds(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0) throw new FlowQueryError('instance_ids', 'instance_ids must be a non-empty array');
  if (ids.length > MAX_INSTANCES) throw new FlowQueryError('instance_ids', `at most ${MAX_INSTANCES} instance_ids`);
  for (const id of ids) {
    if (typeof id !== 'string' || id === '') throw new FlowQueryError('instance_ids', 'instance_ids must be non-empty strings');
  }
  return [...new Set(ids as string[])];
}

/** Start defaults to 15 minutes back, end to now; start may not be after end. */
export function readTimeWindow(start: unknown, end: unknown, nowMs: number): TimeWindow {
  const endMs = end === undefined || end === null ? nowMs : resolveDateTimeFilter(end, 'end', nowMs);
  const startMs = start === undefined || start === null ? endMs - DEFAULT_WINDOW_MS : resolveDateTimeFilter(start, 'start', nowMs);
  if (startMs > endMs) throw new FlowQueryError('start', 'start must not be after end');
  return { startMs, endMs };
}

export function readScopedFilter(req: CommonRequest, nowMs: number): ScopedFilter {
  return { customerIds: readCustomerIds(req.customerIds), ...readTimeWindow(req.start, req.end, nowMs), where: readSentence(req.sentence) };
}

export function readSize(size: unknown, allowZero: boolean): number {
  if (size === undefined || size === null) return DEFAULT_SIZE;
  if (!isInt(size) || size < 0 || size > MAX_SIZE) throw new FlowQueryError('size', `size must be an integer between 0 and ${MAX_SIZE}`);
  if (size === 0 && !allowZero) throw new FlowQueryError('size', 'size 0 is only valid together with timeseries');
  return size;
}

export function readPage(page: unknown): number {
  if (page === undefined || page === null) return 0;
  if (!isInt(page) || page < 0) throw new FlowQueryError('page', 'page must be a non-negative integer');
  return page;
}

export interface SortKey {
  col: ColumnDef;
  order: 'asc' | 'desc';
}

const DEFAULT_SORT: readonly SortKey[] = [{ col: columnForPath('@timestamp')!, order: 'desc' }];

export function readSort(sort: unknown): readonly SortKey[] {
  if (sort === undefined || sort === null) return DEFAULT_SORT;
  if (!Array.isArray(sort)) throw new FlowQueryError('sort', 'sort must be an array of {field, order}');
  if (sort.length === 0) return DEFAULT_SORT; // as an empty `fields`: the default
  if (sort.length > MAX_SORT_KEYS) throw new FlowQueryError('sort', `at most ${MAX_SORT_KEYS} sort keys`);
  return sort.map((s: unknown, i) => {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new FlowQueryError(`sort[${i}]`, 'sort items must be objects {field, order}');
    const extra = Object.keys(s).find((key) => key !== 'field' && key !== 'order');
    if (extra !== undefined)
      throw new FlowQueryError(`sort[${i}].${excerpt(extra)}`, `Unknown field '${excerpt(extra)}' in sort[${i}]; a sort item may have field, order`);
    const item = s as { field?: unknown; order?: unknown };
    if (typeof item.field !== 'string') throw new FlowQueryError(`sort[${i}].field`, 'sort field must be a string');
    const col = columnForPath(item.field);
    if (!col || !col.sortable || col.role === 'derived') {
      throw new FlowQueryError(`sort[${i}].field`, col ? `field '${item.field}' cannot be sorted on` : `unknown sort field '${excerpt(item.field)}'`);
    }
    return { col, order: readDirection(item.order, `sort[${i}].order`, 'desc') };
  });
}

/** A sort direction, `asc` or `desc` in any case; `fallback` when absent. */
export function readDirection(value: unknown, field: string, fallback: 'asc' | 'desc'): 'asc' | 'desc' {
  if (value === undefined || value === null) return fallback;
  const direction = typeof value === 'string' ? value.toLowerCase() : undefined;
  if (direction !== 'asc' && direction !== 'desc') throw new FlowQueryError(field, `${field} must be 'asc' or 'desc'`);
  return direction;
}

/**
 * ORDER BY for sort keys; missing values last either way, then `id` so pages never overlap, in the
 * last key's direction: `@timestamp` either way is then the table's own order (ddl.ts), which the
 * engine reads from the end it needs and stops at the page instead of sorting the window.
 */
export function orderBySql(keys: readonly SortKey[]): string {
  // Nulls last only where a column has them: every clause is planned again on each statement.
  const parts = keys.map((k) => {
    const direction = k.order.toUpperCase();
    const byText = `${quoteIdent(k.col.column)} ${direction}${k.col.nullable ? ' NULLS LAST' : ''}`;
    // Addresses in address order, as PQL compares them (`10.0.0.9` before `10.0.0.10`), then text that is no address.
    return k.col.kind === 'ip' ? `${addressSql(k.col)} ${direction} NULLS LAST, ${byText}` : byText;
  });
  if (!keys.some((k) => k.col.path === 'id')) parts.push(`\`id\` ${keys.at(-1)!.order.toUpperCase()}`);
  return parts.join(', ');
}

export function readFields(fields: unknown): string[] | undefined {
  if (fields === undefined || fields === null) return undefined;
  if (!Array.isArray(fields)) throw new FlowQueryError('fields', 'fields must be an array of strings');
  if (fields.length === 0) return undefined;
  if (fields.length > MAX_FIELDS) throw new FlowQueryError('fields', `at most ${MAX_FIELDS} fields`);
  let segments = 0;
  for (const [i, f] of fields.entries()) {
    if (typeof f !== 'string' || f.trim() === '') throw new FlowQueryError(`fields[${i}]`, 'fields must be non-empty strings');
    if (f.includes('*')) throw new FlowQueryError(`fields[${i}]`, "wildcard '*' is not allowed in fields");
    if (f.length > MAX_FIELD_LENGTH) throw new FlowQueryError(`fields[${i}]`, `a field is at most ${MAX_FIELD_LENGTH} characters long`);
    segments += f.split('.').length;
    if (segments > MAX_FIELD_SEGMENTS) throw new FlowQueryError('fields', `fields may name at most ${MAX_FIELD_SEGMENTS} dotted path segments in all`);
  }
  return (fields as string[]).map((f) => f.trim());
}

/**
 * A metric: `count`, or `sum|avg|min|max:<numeric field>`, or `uniq:<field>` (exact distinct
 * count). Returns the SQL aggregate; `nullWhenEmpty` says whether an empty bucket has value null.
 */
export interface Metric {
  name: string;
  sql: string;
  nullWhenEmpty: boolean;
}

export function readMetric(metric: unknown, field: string): Metric {
  if (metric === undefined || metric === null || metric === 'count') return { name: 'count', sql: 'count()', nullWhenEmpty: false };
  if (typeof metric !== 'string') throw new FlowQueryError(field, 'metric must be a string');
  const m = /^(sum|avg|min|max|uniq):(.+)$/.exec(metric);
  if (!m) throw new FlowQueryError(field, "metric must be 'count' or one of sum|avg|min|max|uniq:<field>");
  const [, fn, path] = m as unknown as [string, string, string];
  const col = columnForPath(path);
  if (!col || !col.filterable || col.kind.endsWith('[]')) throw new FlowQueryError(field, `unknown or unusable metric field '${path}'`);
  const c = quoteIdent(col.column);
  const name = `${fn}:${canonicalPath(path)}`;
  if (fn === 'uniq') return { name, sql: `uniqExact(${c})`, nullWhenEmpty: false };
  if (col.kind !== 'int' && col.kind !== 'float') throw new FlowQueryError(field, `${fn} needs a numeric field, '${path}' is ${col.kind}`);
  if (fn === 'sum') return { name, sql: `ifNull(sum(${c}), 0)`, nullWhenEmpty: false };
  return { name, sql: `${fn}(${c})`, nullWhenEmpty: true };
}

const INTERVAL_UNITS_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30s`, `1m`, `5m`, `1h`, `1d`, `1w`... as milliseconds. */
export function readInterval(interval: unknown, window: TimeWindow): number {
  const m = typeof interval === 'string' ? /^([1-9]\d{0,5})([smhdw])$/.exec(interval) : null;
  if (!m) throw new FlowQueryError('timeseries.interval', "timeseries.interval must look like '30s', '5m', '1h', '1d' or '1w'");
  const stepMs = Number(m[1]) * INTERVAL_UNITS_MS[m[2]!]!;
  const buckets = Math.floor(window.endMs / stepMs) - Math.floor(window.startMs / stepMs) + 1;
  if (buckets > MAX_TIMESERIES_BUCKETS) {
    throw new FlowQueryError('timeseries.interval', `interval ${interval} gives ${buckets} buckets; at most ${MAX_TIMESERIES_BUCKETS}`);
  }
  return stepMs;
}

export interface RunOptions {
  /** "Now" for relative time filters; default Date.now(). */
  nowMs?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Settings of every search statement (besides every SELECT's, engine.ts: no column statistics).
 * - No projection weighed: the table's projections are explore's egress rollups
 *   (egress-rollups.ts) and ClickHouse's implicit count projections, none of which answers a
 *   search with a tenant and a window; weighing them cost ~2 ms of each statement's planning.
 * - Decompressed blocks kept for the next search (the uncompressed cache, sized by the engine:
 *   chdb-engine.ts, or a server's configuration): records −5 ms, terms −1.5 ms at 100M. ClickHouse
 *   itself reads around it a statement of over a million rows (an MSP-wide aggregation).
 * - The plan's expression steps left unmerged: merging them is a planning pass that costs more
 *   than it saves on a tenant's day (paired at 100M: records −0.5 ms, deep page −0.6, terms −0.4,
 *   timeseries −0.25; MSP-wide terms +1 ms of 334, within noise).
 * - Fewer thread handoffs on a tenant's window, where they cost more than the work they share:
 *   a part's range is split between threads only from ~2M rows (245 marks; ClickHouse's default is
 *   24), while a window's parts still go to threads of their own; the primary index is searched on
 *   the statement's thread; the result is written on the statement's thread (a page is one String
 *   column written as is). Alternated at 100M (250–400 each): records −2.0 ms of 17.6, terms
 *   −0.7, timeseries −0.5; a week's records and a value no flow has: see docs/search.md.
 */
export const SEARCH_SETTINGS = {
  optimize_use_projections: 0,
  optimize_use_implicit_projections: 0,
  use_uncompressed_cache: 1,
  query_plan_merge_expressions: 0,
  merge_tree_min_rows_for_concurrent_read: 2_000_000,
  max_threads_for_indexes: 1,
  output_format_parallel_formatting: 0,
};

/** Engine options for a search statement: the caller's signal and limit, the search settings and `settings`. */
export function searchQueryOptions(opts: RunOptions, settings: Record<string, string | number> = {}): QueryOptions {
  return {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    settings: { ...SEARCH_SETTINGS, ...settings },
  };
}

/** The timestamp column, as SQL. */
export const TS = '`timestamp`';

/**
 * The instance a grouped row belongs to: `customer_id` when several are searched, else the one id
 * as a parameter, so that the statement need not group by it (~2 ms at 100M for counts and
 * timeseries, ~6 ms for terms). Select it under an alias that names no column: ClickHouse reads a
 * column in WHERE as a SELECT alias of the same name, which would make the tenant condition true.
 */
export function instanceSql(filter: ScopedFilter, params: ParamBag): { several: boolean; sql: string } {
  const several = filter.customerIds.length > 1;
  return { several, sql: several ? 'customer_id' : params.add(filter.customerIds[0], 'String') };
}

/** `customer_id = id`, or `IN (...)` for several. */
export function tenantWhere(filter: ScopedFilter, params: ParamBag): string {
  // One tenant as an equality: ClickHouse reads in key order (search.ts) only after a fixed prefix.
  return filter.customerIds.length === 1
    ? `\`customer_id\` = ${params.add(filter.customerIds[0], 'String')}`
    : `\`customer_id\` IN ${params.add(filter.customerIds, 'Array(String)')}`;
}

/** `customer_id = id` (or `IN (...)` for several) `AND timestamp in window AND (<sentence>)`, values in `params`. */
export function scopeWhere(filter: ScopedFilter, params: ParamBag, withSentence = true): string {
  const clauses = [
    tenantWhere(filter, params),
    `${TS} >= fromUnixTimestamp64Milli(${params.add(filter.startMs, 'Int64')}, 'UTC')`,
    `${TS} <= fromUnixTimestamp64Milli(${params.add(filter.endMs, 'Int64')}, 'UTC')`,
  ];
  if (withSentence && filter.where.type !== 'all') clauses.push(compilePql(filter.where, params));
  return clauses.join(' AND ');
}
