/**
 * FlowEngine over chDB (ClickHouse in-process). Only the async APIs are used: the synchronous
 * `query()` would block the event loop for the whole query. Values are bound server-side with
 * queryBindAsync, so they never enter the SQL text.
 *
 * Limits of the engine that callers should know: libchdb binds one data directory per process, a
 * session runs its statements one at a time, and an aborted single-shot query keeps computing
 * until its max_execution_time stops it (which is why every SELECT carries one).
 */
import { mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Session, drainPending, type ChdbResult } from 'chdb';
import {
  type FlowEngine,
  type InsertOptions,
  type LinesFormat,
  type QueryOptions,
  type RowSeparation,
  engineErrorFromClickHouse,
  insertHead,
  insertSettings,
  linesOutput,
  parseEachRow,
  renderSettingsClause,
  selectSettings,
  stringLiteral,
  withDeadline,
} from './engine.js';
import { requireQueryName, type Params } from './sql.js';

const TABLE_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * The engine shares the API's two cores: its query threads run at the lowest CPU priority, so that
 * a request needing a few milliseconds of CPU (a token, a small read) is not queued behind a
 * 25,000-record page. With it (and the worker thread's own nice, chdb-thread.worker.ts), token p99
 * beside that page went from 207 to 31–63 ms (tools/bench/HISTORY.md); queries lose nothing on an idle
 * machine. Linux applies it only with CAP_SYS_NICE (root here; a container may need
 * `--cap-add SYS_NICE`), and it is a no-op otherwise.
 */
const IN_PROCESS_SETTINGS = { os_threads_nice_value_query: 19 };

/**
 * Size of ClickHouse's cache of decompressed blocks, which chDB leaves at 0 (a packaged server's
 * config.xml has 8 GiB). Search statements ask for it (search-request.ts SEARCH_SETTINGS): a
 * tenant's recent blocks are what analysts read again and again, and decompressing them was a
 * quarter of a records search (18.6 → 13.6 ms at 100M, tools/bench/HISTORY.md). Memory is taken as blocks
 * are cached, up to this bound; 50 tenants' day of records, terms and timeseries used ~0.5 GiB.
 */
export const UNCOMPRESSED_CACHE_BYTES = 1024 ** 3;

/**
 * The same for skip indexes' blocks (a sentence's bloom filters: ports, addresses, names), which
 * is off unless configured (the server setting's default is 0), so that every search decompressed
 * the index blocks of its window again: 95 KB and 0.15 ms of a records search at 100M, 0.2 ms of
 * a week's search for a value no flow has (tools/bench/HISTORY.md). Used by the statements
 * that ask for the block cache.
 */
export const INDEX_UNCOMPRESSED_CACHE_BYTES = 256 * 1024 ** 2;

/** Server configuration given when a chDB session opens (it is not a query setting). */
export const CHDB_CONNECTION_ARGS = [
  `--uncompressed_cache_size=${UNCOMPRESSED_CACHE_BYTES}`,
  `--index_uncompressed_cache_size=${INDEX_UNCOMPRESSED_CACHE_BYTES}`,
];

function mapChdbError(queryName: string, err: unknown, timeoutMs: number): Error {
  const e = err as { clickhouseCode?: unknown; message?: unknown };
  const code = typeof e?.clickhouseCode === 'number' ? e.clickhouseCode : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return engineErrorFromClickHouse(queryName, code, message, timeoutMs, err);
}

/**
 * Where Native blocks wait for their insert: chDB's raw insert takes text formats only, so a block
 * goes through a file that `INSERT ... FROM INFILE` reads (a real insert: deduplication as with
 * any other). Inside the data directory, readable by its owner only, each file removed once read.
 */
const SPOOL_DIR = 'insert-spool';
let spooled = 0;

export class ChdbEngine implements FlowEngine {
  readonly kind = 'chdb' as const;
  private readonly session: Session;
  private readonly spoolDir: string;

  /** Opens (or creates) the database in `dataDir`. One data directory per process. */
  constructor(readonly dataDir: string) {
    this.session = new Session(dataDir, { connectionArgs: CHDB_CONNECTION_ARGS });
    this.spoolDir = join(dataDir, SPOOL_DIR);
    mkdirSync(this.spoolDir, { recursive: true, mode: 0o700 });
  }

  async query<T>(sql: string, params: Params, opts: QueryOptions = {}): Promise<T[]> {
    const result = await this.select(sql, params, opts, 'JSONEachRow');
    return parseEachRow<T>(result.text());
  }

  queryLines(sql: string, params: Params, opts: QueryOptions = {}, rows?: RowSeparation): Promise<Buffer> {
    const lines = linesOutput(opts, rows);
    return this.selectBytes(sql, params, lines.opts, lines.format);
  }

  /** A SELECT's output in `format`, as the bytes the engine wrote. */
  async selectBytes(sql: string, params: Params, opts: QueryOptions, format: 'JSONEachRow' | LinesFormat): Promise<Buffer> {
    const bytes = (await this.select(sql, params, opts, format)).bytes();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private select(sql: string, params: Params, opts: QueryOptions, format: string): Promise<ChdbResult> {
    const name = requireQueryName(sql);
    return withDeadline(
      name,
      opts,
      async (signal, timeoutMs) => {
        const text = `${sql}\n${renderSettingsClause(selectSettings(timeoutMs, { ...IN_PROCESS_SETTINGS, ...opts.settings }))}`;
        return hasParams(params) ? this.session.queryBindAsync(text, params, { format, signal }) : this.session.queryAsync(text, { format, signal });
      },
      (err, timeoutMs) => mapChdbError(name, err, timeoutMs),
    );
  }

  async command(sql: string, params: Params = {}, opts: QueryOptions = {}): Promise<void> {
    const name = requireQueryName(sql);
    await withDeadline(
      name,
      opts,
      async (signal) => {
        if (hasParams(params)) await this.session.queryBindAsync(sql, params, { signal });
        else await this.session.queryAsync(sql, { signal });
      },
      (err, timeoutMs) => mapChdbError(name, err, timeoutMs),
    );
  }

  insertJsonEachRow(table: string, rows: readonly Record<string, unknown>[] | string, opts: InsertOptions = {}): Promise<void> {
    return this.insertBytes(table, jsonEachRowBytes(rows), opts);
  }

  /** Inserts JSONEachRow text given as bytes (see jsonEachRowBytes); nothing when empty. */
  async insertBytes(table: string, values: Buffer, opts: InsertOptions = {}): Promise<void> {
    if (!TABLE_RE.test(table)) throw new Error(`invalid table name ${table}`);
    if (values.byteLength === 0) return;
    const name = `flowstore:insert.${table}`;
    await withDeadline(
      name,
      opts,
      async (signal) => {
        await this.session.insert({
          table,
          values,
          format: 'JSONEachRow',
          settings: insertSettings(opts),
          signal,
        });
      },
      (err, timeoutMs) => mapChdbError(name, err, timeoutMs),
    );
  }

  async insertNative(table: string, columns: readonly string[], blocks: readonly Buffer[], opts: InsertOptions = {}): Promise<void> {
    const head = insertHead(table, columns);
    const name = `flowstore:insert.${table}`;
    const file = join(this.spoolDir, `${process.pid}-${++spooled}.native`);
    await writeFile(file, blocks, { mode: 0o600 });
    try {
      await withDeadline(
        name,
        opts,
        async (signal) => {
          await this.session.queryAsync(`${head} FROM INFILE ${stringLiteral(file)} ${renderSettingsClause(insertSettings(opts))} FORMAT Native`, { signal });
        },
        (err, timeoutMs) => mapChdbError(name, err, timeoutMs),
      );
    } finally {
      await rm(file, { force: true });
    }
  }

  async ping(): Promise<boolean> {
    try {
      await this.session.queryAsync('/* flowstore:ping */ SELECT 1', { format: 'CSV', timeout: 5_000 });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.session.close();
    // close() returns before a still-running native query lets go of the connection.
    await drainPending();
  }
}

/**
 * Rows (or ready NDJSON text) as the JSONEachRow bytes chDB takes: a Buffer reaches the engine
 * without copying through a V8 string (about twice as fast). Empty when there is nothing to insert.
 */
export function jsonEachRowBytes(rows: readonly Record<string, unknown>[] | string): Buffer {
  const text = typeof rows === 'string' ? rows : rows.map((r) => JSON.stringify(r)).join('\n');
  return text.trim() ? Buffer.from(text, 'utf8') : Buffer.alloc(0);
}

function hasParams(params: Params): boolean {
  for (const _ in params) return true;
  return false;
}
