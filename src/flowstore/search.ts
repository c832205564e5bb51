/**
 * Search service core (no HTTP): validates a request, runs the named queries, and shapes the
 * per-instance envelope of wire.md 5.3. The caller has already authorized `customerIds`; every
 * statement starts its WHERE with them.
 */
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine } from './engine.js';
import type { RawJson } from '../infra/raw-json.js';
import { pageFromCommaRows, pagesFromLines } from './page-lines.js';
import { projectionFor } from './projection.js';
import type { RecordJson } from './record-json.js';
import {
  TS,
  instanceSql,
  scopeWhere,
  searchQueryOptions,
  orderBySql,
  readFields,
  readInterval,
  readMetric,
  readPage,
  readScopedFilter,
  readSize,
  readSort,
  type CommonRequest,
  type Metric,
  type RunOptions,
  type ScopedFilter,
} from './search-request.js';
import { compilePql } from './pql/index.js';
import { ParamBag, named } from './sql.js';

/** A records search; its values as CommonRequest says, each checked by its reader here. */
export interface SearchRequest extends CommonRequest {
  /** `[{field, order}]`, applied in order (readSort). */
  sort?: unknown;
  /** Dotted paths or prefixes to return (readFields). */
  fields?: unknown;
  /** Records per page, 0 only with a timeseries (readSize). */
  size?: unknown;
  page?: unknown;
  timeseries?: TimeseriesRequest | null;
}

/** Buckets of `interval` over [start, end], each with the flow count and the metric's value. */
export interface TimeseriesRequest {
  /** `<N><s|m|h|d|w>` (readInterval). */
  interval?: unknown;
  /** As a terms metric (readMetric). */
  metric?: unknown;
}

export interface TimeseriesBucket {
  /** Bucket start, epoch ms (aligned to the interval since 1970-01-01T00:00Z). */
  ts: number;
  count: number;
  value: number | null;
}

export interface TimeseriesResult {
  interval: string;
  interval_ms: number;
  metric: string;
  buckets: TimeseriesBucket[];
}

/** One instance's page; `flows` is the records' JSON text, or the parsed records (searchRecords). */
export interface InstancePage<Flows = Record<string, unknown>[]> {
  flows: Flows;
  /** Flows matching the sentence in the time window. */
  found: number;
  /** Flows of the instance in the time window, before the sentence is applied. */
  total: number;
  returned: number;
  current_page: number;
  pages: number;
  more_data_available: boolean;
  /** Seconds. */
  took: number;
  timeseries?: TimeseriesResult;
}

export type SearchResponse<Flows = Record<string, unknown>[]> = Record<string, InstancePage<Flows>>;

/**
 * Page query settings: JSON text as JSON.stringify writes it (no `\/`), and records read only for
 * the rows of the page whatever its size (ClickHouse's lazy materialization stops at 10,000 rows
 * by default, past which a 25,000-record page would read every matching record to sort them).
 */
const PAGE_SETTINGS = { output_format_json_escape_forward_slashes: 0, query_plan_max_limit_for_lazy_materialization: 0 };

/**
 * A page of more records is read around the uncompressed cache (SEARCH_SETTINGS): a 25,000-record
 * page's blocks (~60 MB each time) would push out those that small searches share, and caching
 * them made that page no faster (172 → 180 ms p50 at 100M).
 */
export const CACHED_PAGE_MAX_RECORDS = 1000;

/**
 * One statement for the counts and the page (one plan, one round trip, both halves run in
 * parallel), read as rows (page-lines.ts): per instance a count row `\t<id>\t<total>\t<found>`
 * (`\t<total>\t<found>` for one instance), with `total` the window and `found` the sentence too,
 * in one pass over the window; then the page's records as JSON text (record-json.ts), after
 * `<id>\t` when several instances are searched.
 */
function recordsQuery(filter: ScopedFilter, record: RecordJson, orderBy: string, size: number, page: number): { sql: string; params: ParamBag } {
  const params = new ParamBag();
  Object.assign(params.values, record.params);
  const several = filter.customerIds.length > 1;
  const window = scopeWhere(filter, params, false);
  const found = filter.where.type === 'all' ? 'count()' : `countIf(${compilePql(filter.where, params)})`;
  const counts = several
    ? // The empty first column writes the line's leading tab.
      `SELECT '' AS instance, concat(customer_id, '\t', toString(count()), '\t', toString(${found})) AS line FROM ${FLOWS_TABLE} WHERE ${window} GROUP BY customer_id`
    : // One instance needs no GROUP BY (~2 ms less here), and gets its line even when it has no flows.
      `SELECT concat('\\t', toString(count()), '\t', toString(${found})) AS line FROM ${FLOWS_TABLE} WHERE ${window}`;
  if (size === 0) return { sql: named('flowstore:search.records', counts), params };
  const where = scopeWhere(filter, params);
  const limit = params.add(size, 'UInt64');
  // Every clause is planned again on each statement, so the first page has no OFFSET.
  const offset = page === 0 ? undefined : params.add(page * size, 'UInt64');
  const records = several
    ? `SELECT customer_id AS instance, ${record.sql} AS line FROM ${FLOWS_TABLE} WHERE ${where} ORDER BY customer_id, ${orderBy} LIMIT ${offset ? `${offset}, ` : ''}${limit} BY customer_id`
    : `SELECT ${record.sql} AS line FROM ${FLOWS_TABLE} WHERE ${where} ORDER BY ${orderBy} LIMIT ${limit}${offset ? ` OFFSET ${offset}` : ''}`;
  return { sql: named('flowstore:search.records', `(${counts}) UNION ALL (${records})`), params };
}

function timeseriesQuery(filter: ScopedFilter, stepMs: number, metric: Metric): { sql: string; params: ParamBag } {
  const params = new ParamBag();
  const where = scopeWhere(filter, params);
  const step = params.add(stepMs, 'Int64');
  const { several, sql: instance } = instanceSql(filter, params);
  const groupBy = several ? 'bucket_instance, bucket_ts' : 'bucket_ts';
  const sql =
    `SELECT ${instance} AS bucket_instance, intDiv(toUnixTimestamp64Milli(${TS}), ${step}) * ${step} AS bucket_ts, count() AS bucket_count, ${metric.sql} AS bucket_value ` +
    `FROM ${FLOWS_TABLE} WHERE ${where} GROUP BY ${groupBy} ORDER BY ${groupBy}`;
  return { sql: named('flowstore:search.timeseries', sql), params };
}

interface BucketRow {
  bucket_instance: string;
  bucket_ts: number;
  bucket_count: number;
  bucket_value: number | null;
}

/** A timeseries request read: the interval as sent, its length, the metric. */
function readTimeseries(req: TimeseriesRequest, filter: ScopedFilter): { interval: string; stepMs: number; metric: Metric } {
  const stepMs = readInterval(req.interval, filter);
  // readInterval takes only a string, so this is the text as sent.
  return { interval: String(req.interval), stepMs, metric: readMetric(req.metric, 'timeseries.metric') };
}

/** Every bucket of the window, empty ones included, so a chart needs no gap logic. */
function fillBuckets(rows: BucketRow[], filter: ScopedFilter, stepMs: number, metric: Metric): TimeseriesBucket[] {
  const byTs = new Map(rows.map((r) => [Number(r.bucket_ts), r]));
  const buckets: TimeseriesBucket[] = [];
  const first = Math.floor(filter.startMs / stepMs) * stepMs;
  for (let ts = first; ts <= filter.endMs; ts += stepMs) {
    const r = byTs.get(ts);
    buckets.push(
      r
        ? { ts, count: Number(r.bucket_count), value: r.bucket_value === null ? null : Number(r.bucket_value) }
        : { ts, count: 0, value: metric.nullWhenEmpty ? null : 0 },
    );
  }
  return buckets;
}

/** POST /search/records/1.0 for code that wants the records as objects (investigations, tests). */
export async function searchRecords(engine: FlowEngine, req: SearchRequest, opts: RunOptions = {}): Promise<SearchResponse> {
  const raw = await searchRecordPages(engine, req, opts);
  const parsed: SearchResponse = {};
  for (const [id, page] of Object.entries(raw)) {
    parsed[id] = { ...page, flows: page.flows.parse() as Record<string, unknown>[] };
    page.flows.release();
  }
  return parsed;
}

/**
 * POST /search/records/1.0: each instance's page with its records as the JSON text the engine
 * wrote (served as is, see infra/raw-json.ts).
 */
export async function searchRecordPages(engine: FlowEngine, req: SearchRequest, opts: RunOptions = {}): Promise<SearchResponse<RawJson>> {
  const started = performance.now();
  const nowMs = opts.nowMs ?? Date.now();
  const filter = readScopedFilter(req, nowMs);
  const size = readSize(req.size, req.timeseries !== undefined && req.timeseries !== null);
  const page = readPage(req.page);
  const sort = readSort(req.sort);
  const fields = readFields(req.fields);
  const ts = req.timeseries ? readTimeseries(req.timeseries, filter) : undefined;
  const record = projectionFor(fields);

  const recordsQ = recordsQuery(filter, record, orderBySql(sort), size, page);
  const tsQ = ts ? timeseriesQuery(filter, ts.stepMs, ts.metric) : undefined;

  const one = filter.customerIds.length === 1;
  const [rows, series] = await Promise.all([
    engine.queryLines(
      recordsQ.sql,
      recordsQ.params.values,
      searchQueryOptions(opts, size > CACHED_PAGE_MAX_RECORDS ? { ...PAGE_SETTINGS, use_uncompressed_cache: 0 } : PAGE_SETTINGS),
      one ? 'commas' : 'lines',
    ),
    tsQ ? engine.query<BucketRow>(tsQ.sql, tsQ.params.values, searchQueryOptions(opts)) : Promise.resolve([]),
  ]);

  const pages = one ? new Map([[filter.customerIds[0]!, pageFromCommaRows(rows)]]) : pagesFromLines(rows, filter.customerIds);
  const took = Math.round(performance.now() - started) / 1000;

  const response: SearchResponse<RawJson> = {};
  for (const id of filter.customerIds) {
    const { flows, found, total } = pages.get(id)!;
    // The page's length without counting its records: the counts and the page are one
    // statement over one snapshot of the table, with the same condition.
    const returned = Math.max(0, Math.min(size, found - page * size));
    const entry: InstancePage<RawJson> = {
      flows,
      found,
      total,
      returned,
      current_page: page,
      pages: size > 0 ? Math.ceil(found / size) : 0,
      more_data_available: size > 0 && (page + 1) * size < found,
      took,
    };
    if (ts) {
      entry.timeseries = {
        interval: ts.interval,
        interval_ms: ts.stepMs,
        metric: ts.metric.name,
        buckets: fillBuckets(
          series.filter((s) => s.bucket_instance === id),
          filter,
          ts.stepMs,
          ts.metric,
        ),
      };
    }
    response[id] = entry;
  }
  return response;
}

export type { RunOptions } from './search-request.js';
export { aggregateTerms, type TermsRequest, type TermsResponse, type InstanceTerms, type TermsBucket } from './terms.js';
