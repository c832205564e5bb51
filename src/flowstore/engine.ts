/**
 * One interface over the two ways we reach ClickHouse: chDB in-process (tests, single-node dev)
 * and a ClickHouse server over HTTP (production). Callers build named, parameterized SQL
 * (sql.ts); engines add the execution limits and turn failures into typed errors (errors.ts).
 */
import { clickhouseStatementDuration } from '../infra/metrics.js';
import { FlowEngineError, FlowQueryAbortedError, FlowQueryTimeoutError } from './errors.js';
import type { Params } from './sql.js';

export interface QueryOptions {
  /** The caller's cancellation (e.g. the HTTP request closed). */
  signal?: AbortSignal;
  /** Limit for this statement; default DEFAULT_QUERY_TIMEOUT_MS. */
  timeoutMs?: number;
  queryId?: string;
  /** More settings for this statement (ours, never user input). */
  settings?: Record<string, string | number>;
}

export interface InsertOptions {
  /** Same token = same batch: ClickHouse drops a block whose token it has already seen. */
  dedupToken?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface FlowEngine {
  readonly kind: 'chdb' | 'http';
  /** Runs a SELECT and returns its rows as objects (JSONEachRow). `sql` must start with a `/* name *\/` comment. */
  query<T>(sql: string, params: Params, opts?: QueryOptions): Promise<T[]>;
  /**
   * Runs a SELECT whose values the engine has already rendered as text (the JSON of flow
   * records) and returns its output as bytes: values tab separated and written as they are, rows
   * separated as `rows` says (default a row per line). The caller reads them without a JSON
   * parse. The bytes may be lent (infra/lent-bytes.ts): the caller gives them back once it has
   * written or copied them.
   */
  queryLines(sql: string, params: Params, opts?: QueryOptions, rows?: RowSeparation): Promise<Buffer>;
  /** Runs a statement without a result set (DDL, ALTER, INSERT ... SELECT). */
  command(sql: string, params?: Params, opts?: QueryOptions): Promise<void>;
  /** Inserts rows (objects keyed by column name, or ready NDJSON text) as JSONEachRow. */
  insertJsonEachRow(table: string, rows: readonly Record<string, unknown>[] | string, opts?: InsertOptions): Promise<void>;
  /**
   * Inserts Native blocks (native-block.ts) of the named columns in one statement: the fast path
   * of flow ingest. The engine may take the blocks' memory: the caller must not use them after.
   */
  insertNative(table: string, columns: readonly string[], blocks: readonly Buffer[], opts?: InsertOptions): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How queryLines separates rows: `lines`, a newline after each (TabSeparatedRaw); `commas`, a
 * comma between them and nothing after the last, so that rows of JSON values are already the
 * inside of a JSON array (no scan of a 60 MB page for its newlines on the event loop).
 */
export type RowSeparation = 'lines' | 'commas';

export type LinesFormat = 'TabSeparatedRaw' | 'CustomSeparated';

const COMMA_SEPARATED_ROWS = {
  format_custom_escaping_rule: 'Raw',
  format_custom_field_delimiter: '\t',
  format_custom_row_before_delimiter: '',
  format_custom_row_after_delimiter: '',
  format_custom_row_between_delimiter: ',',
  format_custom_result_before_delimiter: '',
  format_custom_result_after_delimiter: '',
};

/** The output format that writes queryLines' rows as `rows` says, and `opts` with its settings. */
export function linesOutput(opts: QueryOptions, rows: RowSeparation = 'lines'): { format: LinesFormat; opts: QueryOptions } {
  if (rows === 'lines') return { format: 'TabSeparatedRaw', opts };
  return { format: 'CustomSeparated', opts: { ...opts, settings: { ...opts.settings, ...COMMA_SEPARATED_ROWS } } };
}

export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/**
 * The grace between the server-side limit and our own deadline: the server normally stops the
 * query first (and says so with code 159); the client deadline is the backstop for a server that
 * does not answer at all.
 */
const CLIENT_DEADLINE_GRACE_MS = 500;

/**
 * No column statistics: ClickHouse 26 keeps statistics of every column in each part
 * (`auto_statistics_types`) and, to prune parts and order PREWHERE by them, opens and reads every
 * part's `statistics.packed` (~200 KB) on each statement. Our statements begin with a tenant and a
 * window, which the primary key prunes already; at 100M the reads cost 2–5 ms of a records search,
 * ~1.4 ms of terms and 1–2.4 ms of explore and detection statements (tools/bench/HISTORY.md).
 */
const NO_COLUMN_STATISTICS = { use_statistics: 0, allow_statistics_optimize: 0, use_statistics_for_part_pruning: 0 };

/** Settings every SELECT runs with (`extra` may override the statistics ones). */
export function selectSettings(timeoutMs: number, extra: Record<string, string | number> = {}): Record<string, string | number> {
  return {
    ...NO_COLUMN_STATISTICS,
    ...extra,
    // The server stops the query itself; fractions of a second are honoured.
    max_execution_time: Math.max(0.001, timeoutMs / 1000),
    timeout_overflow_mode: 'throw',
    // Numbers stay numbers in JSON (the SDK rejects quoted ints for `@timestamp`).
    output_format_json_quote_64bit_integers: 0,
    output_format_json_quote_64bit_floats: 0,
  };
}

/** Renders settings as a trailing `SETTINGS a = 1, b = 'x'` clause. Names and values are ours, never user input. */
/** The dedup settings of an insert: the token makes a repeated insert store nothing (ingest.ts). */
export function insertSettings(opts: InsertOptions): Record<string, string | number> {
  return opts.dedupToken ? { insert_deduplicate: 1, insert_deduplication_token: opts.dedupToken } : {};
}

/** `INSERT INTO table (a, b)` for a table and column names of our own, checked rather than trusted. */
export function insertHead(table: string, columns: readonly string[]): string {
  if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$/.test(table)) throw new Error(`invalid table name ${table}`);
  for (const c of columns) if (!/^[A-Za-z_]\w*$/.test(c)) throw new Error(`invalid column name ${c}`);
  return `INSERT INTO ${table} (${columns.map((c) => `\`${c}\``).join(', ')})`;
}

/** A ClickHouse string literal of `text`. */
export function stringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function renderSettingsClause(settings: Record<string, string | number>): string {
  const parts = Object.entries(settings).map(([k, v]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new Error(`invalid setting name ${k}`);
    if (typeof v === 'number') return `${k} = ${v}`;
    return `${k} = ${stringLiteral(String(v))}`;
  });
  return parts.length ? `SETTINGS ${parts.join(', ')}` : '';
}

/** Parses JSONEachRow text with a single JSON.parse. */
export function parseEachRow<T>(text: string): T[] {
  const body = text.trim();
  if (!body) return [];
  return JSON.parse(`[${body.replace(/\n/g, ',')}]`) as T[];
}

/**
 * Runs `fn` with a signal that fires on the caller's abort or on our deadline, and maps the two
 * to FlowQueryAbortedError / FlowQueryTimeoutError. Engine-specific errors go through `mapError`.
 */
export async function withDeadline<T>(
  queryName: string | undefined,
  opts: { signal?: AbortSignal; timeoutMs?: number },
  fn: (signal: AbortSignal, timeoutMs: number) => Promise<T>,
  mapError: (err: unknown, timeoutMs: number) => Error,
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  if (opts.signal?.aborted) throw new FlowQueryAbortedError(queryName, opts.signal.reason);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('deadline'));
  }, timeoutMs + CLIENT_DEADLINE_GRACE_MS);
  const onAbort = () => controller.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const started = performance.now();
  let failure: Error | undefined;
  try {
    return await fn(controller.signal, timeoutMs);
  } catch (err) {
    if (timedOut) failure = new FlowQueryTimeoutError(queryName, timeoutMs, err);
    else if (opts.signal?.aborted) failure = new FlowQueryAbortedError(queryName, err);
    else failure = mapError(err, timeoutMs);
    throw failure;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    observeStatement(queryName, started, failure);
  }
}

/**
 * Counts a statement that ran from `started` (performance.now()) and ended in `failure` or not.
 * Engines call it where a statement's time is the caller's: withDeadline here, and the main-thread
 * side of the chDB thread, whose worker's own count lands in a registry nobody scrapes.
 */
export function observeStatement(queryName: string | undefined, started: number, failure: unknown): void {
  const outcome =
    failure === undefined ? 'ok' : failure instanceof FlowQueryTimeoutError ? 'timeout' : failure instanceof FlowQueryAbortedError ? 'aborted' : 'error';
  clickhouseStatementDuration.observe({ statement: queryName ?? 'unnamed', outcome }, (performance.now() - started) / 1000);
}

/** ClickHouse TIMEOUT_EXCEEDED. */
export const CH_TIMEOUT_EXCEEDED = 159;

/** Maps a ClickHouse exception code + message to our typed errors. */
export function engineErrorFromClickHouse(
  queryName: string | undefined,
  clickhouseCode: number | undefined,
  message: string,
  timeoutMs: number,
  cause: unknown,
): FlowEngineError {
  if (clickhouseCode === CH_TIMEOUT_EXCEEDED) return new FlowQueryTimeoutError(queryName, timeoutMs, cause);
  return new FlowEngineError(`query ${queryName ?? '(unnamed)'} failed: ${message}`, {
    ...(clickhouseCode !== undefined ? { clickhouseCode } : {}),
    ...(queryName !== undefined ? { queryName } : {}),
    cause,
  });
}
