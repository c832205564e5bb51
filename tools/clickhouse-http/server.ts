/**
 * A ClickHouse-compatible HTTP endpoint that runs every statement on chDB (the ClickHouse engine,
 * in-process). It implements the part of clickhouse-server's HTTP interface that
 * @clickhouse/client uses, so tests drive the real client code path against the real engine:
 *
 * - `GET /ping` and `GET /` → `Ok.`; POST/GET `/` with the query in `?query=`, the body, or both
 *   (concatenated, as the server does); multipart/form-data bodies with `query` and `param_*` parts;
 * - `param_<name>` values in escaped text format bound to `{name:Type}` (server-side, via chDB);
 * - `default_format`, a trailing `FORMAT`, `query_id`, `database` (only the server's database),
 *   every other URL parameter taken as a setting (applied to SELECT-like statements and INSERTs);
 * - `INSERT INTO t [(cols)] FORMAT F` with the data in the body (gzip request bodies accepted);
 *   for `FORMAT Native` the statement is in `?query=` and the body is the binary block;
 * - gzip responses when `enable_http_compression=1` and the client accepts gzip;
 * - `X-ClickHouse-Query-Id`, `-Format`, `-Timezone`, `-Server-Display-Name`, `-Summary` headers;
 * - exceptions as `Code: N. DB::Exception: ... (NAME) (version V)` with
 *   `X-ClickHouse-Exception-Code` and the server's status mapping (400 syntax, 404 unknown table,
 *   408 timeout, 403 auth, 500 otherwise);
 * - Basic auth, `X-ClickHouse-User`/`-Key` headers or `user`/`password` parameters, checked when
 *   the server is given a password; GET runs read-only statements only;
 * - https when given a certificate and key; with `clientCa`, only clients presenting a certificate
 *   that authority issued are served (mutual TLS).
 *
 * Not implemented (clickhouse-js does not need them for this project): sessions, progress
 * headers, compressed native protocol, `/replicas_status`, external tables, settings on DDL.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Session, drainPending } from 'chdb';
import { CHDB_CONNECTION_ARGS } from '../../src/flowstore/chdb-engine.js';
import { ParamFormatError, paramValue, placeholderTypes } from './params.js';
import { type InsertHeader, contentTypeFor, errorNameOf, parseInsert, serverError, statementKind, trailingFormat } from './statement.js';

export interface ClickHouseHttpServerOptions {
  /** chDB data directory (one per process). */
  dataDir: string;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  user?: string;
  /** When set, requests must authenticate with `user`/`password`. */
  password?: string;
  /** Serve https with this certificate and key (PEM), as a server with an `<https_port>`. */
  tls?: { cert: string | Buffer; key: string | Buffer; /** Require a client certificate issued by this authority (mutual TLS). */ clientCa?: string | Buffer };
}

export interface ClickHouseHttpServer {
  url: string;
  port: number;
  /** Statements executed so far, for tests that check what the client sent. */
  readonly log: { queryId: string; query: string; settings: Record<string, string> }[];
  close(): Promise<void>;
}

const DATABASE = 'default';
const LOG_LIMIT = 10_000;
const DISPLAY_NAME = 'chdb-http';
/** URL parameters that are part of the protocol, not settings. */
const PROTOCOL_PARAMS = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'user',
  'password',
  'quota_key',
  'role',
  'compress',
  'decompress',
]);
/** Settings the HTTP layer itself acts on; the engine never sees them. */
const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'http_zlib_compression_level',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'wait_end_of_query',
  'buffer_size',
  'http_response_buffer_size',
  'cancel_http_readonly_queries_on_client_close',
  'http_wait_end_of_query',
  'http_native_compression_disable_checksumming_on_decompress',
]);

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** multipart/form-data → name → text (the client sends `query` and `param_*` parts this way). */
function parseMultipart(body: Buffer, boundary: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const chunk of body.toString('utf8').split(`--${boundary}`)) {
    const sep = chunk.indexOf('\r\n\r\n');
    if (sep < 0) continue;
    const name = /name="([^"]*)"/.exec(chunk.slice(0, sep))?.[1];
    if (name !== undefined) parts.set(name, chunk.slice(sep + 4).replace(/\r\n$/, ''));
  }
  return parts;
}

function credentials(req: IncomingMessage, url: URL): { user: string; password: string } {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Basic ')) {
    const [user, ...rest] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
    return { user: user ?? 'default', password: rest.join(':') };
  }
  return {
    user: String(req.headers['x-clickhouse-user'] ?? url.searchParams.get('user') ?? 'default'),
    password: String(req.headers['x-clickhouse-key'] ?? url.searchParams.get('password') ?? ''),
  };
}

function renderSettings(settings: Record<string, string>): string {
  const entries = Object.entries(settings);
  if (!entries.length) return '';
  return (
    ' SETTINGS ' +
    entries
      .map(([k, v]) => {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new HttpError(115, 'UNKNOWN_SETTING', `Unknown setting '${k}'`);
        const literal = /^-?\d+(\.\d+)?$/.test(v) ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
        return `${k} = ${literal}`;
      })
      .join(', ')
  );
}

function summary(fields: {
  readRows?: number;
  readBytes?: number;
  writtenRows?: number;
  writtenBytes?: number;
  resultRows?: number;
  resultBytes?: number;
  elapsedS?: number;
}): string {
  const s = (n: number | undefined) => String(Math.round(n ?? 0));
  return JSON.stringify({
    read_rows: s(fields.readRows),
    read_bytes: s(fields.readBytes),
    written_rows: s(fields.writtenRows),
    written_bytes: s(fields.writtenBytes),
    total_rows_to_read: s(fields.readRows),
    result_rows: s(fields.resultRows ?? fields.writtenRows),
    result_bytes: s(fields.resultBytes ?? fields.writtenBytes),
    elapsed_ns: s((fields.elapsedS ?? 0) * 1e9),
  });
}

export async function startClickHouseHttpServer(opts: ClickHouseHttpServerOptions): Promise<ClickHouseHttpServer> {
  // Configured as docs/flowstore.md asks of a ClickHouse server (the uncompressed cache).
  const session = new Session(opts.dataDir, { connectionArgs: CHDB_CONNECTION_ARGS });
  const spoolDir = join(opts.dataDir, 'insert-spool');
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const version = String((await session.queryAsync('SELECT version()', { format: 'TabSeparated' })).text()).trim();
  const log: ClickHouseHttpServer['log'] = [];

  async function execute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const queryId = url.searchParams.get('query_id') || randomUUID();
    res.setHeader('X-ClickHouse-Query-Id', queryId);
    res.setHeader('X-ClickHouse-Timezone', 'UTC');
    res.setHeader('X-ClickHouse-Server-Display-Name', DISPLAY_NAME);
    res.setHeader('Keep-Alive', 'timeout=10');

    const { user, password } = credentials(req, url);
    if (opts.password !== undefined && (user !== (opts.user ?? 'default') || password !== opts.password)) {
      throw new HttpError(516, 'AUTHENTICATION_FAILED', `${user}: Authentication failed: password is incorrect, or there is no user with such name`);
    }
    const database = String(req.headers['x-clickhouse-database'] ?? url.searchParams.get('database') ?? DATABASE);
    if (database !== DATABASE) throw new HttpError(81, 'UNKNOWN_DATABASE', `Database ${database} does not exist`);

    let body = await readBody(req);
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    else if (req.headers['content-encoding'])
      throw new HttpError(779, 'UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Encoding ${req.headers['content-encoding']}`);

    const fields = new Map<string, string>(url.searchParams);
    const boundary = /multipart\/form-data;\s*boundary=(\S+)/.exec(String(req.headers['content-type'] ?? ''))?.[1];
    if (boundary) {
      for (const [k, v] of parseMultipart(body, boundary)) fields.set(k, v);
      body = Buffer.alloc(0);
    }
    const urlQuery = fields.get('query') ?? '';
    const settings: Record<string, string> = {};
    for (const [k, v] of fields) if (!PROTOCOL_PARAMS.has(k) && !k.startsWith('param_') && !HTTP_SETTINGS.has(k)) settings[k] = v;
    const nativeInsert = urlQuery ? parseInsert(urlQuery) : undefined;
    if (nativeInsert?.format === 'Native') {
      // Binary data: the body is the block, read by the engine from a file (src/flowstore/chdb-engine.ts).
      log.push({ queryId, query: urlQuery, settings });
      await insertNativeBlock(nativeInsert, body, settings);
      res.setHeader('X-ClickHouse-Summary', summary({}));
      res.end();
      return;
    }
    const bodyText = body.toString('utf8');
    const text = urlQuery && bodyText ? `${urlQuery}\n${bodyText}` : urlQuery || bodyText;
    if (!text.trim()) throw new HttpError(62, 'SYNTAX_ERROR', 'Empty query');

    const gzip = fields.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const kind = statementKind(text);
    if (req.method === 'GET' && kind !== 'read')
      throw new HttpError(
        164,
        'READONLY',
        'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries',
      );

    const insert = kind === 'insert' ? parseInsert(text) : undefined;
    const sqlForParams = insert ? text.slice(0, insert.dataStart) : text;
    const types = placeholderTypes(sqlForParams);
    const params: Record<string, unknown> = {};
    for (const [k, v] of fields) {
      if (!k.startsWith('param_')) continue;
      const name = k.slice('param_'.length);
      const type = types.get(name);
      if (!type) continue; // clickhouse-server ignores parameters the query does not use
      try {
        params[name] = paramValue(v, type);
      } catch (e) {
        throw new HttpError(457, 'BAD_QUERY_PARAMETER', `Value ${v} cannot be parsed as ${type} for query parameter '${name}': ${(e as Error).message}`);
      }
    }
    log.push({ queryId, query: text.slice(0, insert?.dataStart ?? text.length), settings });
    if (log.length > LOG_LIMIT) log.shift();

    const send = (status: number, format: string | undefined, payload: Uint8Array | string, summaryHeader: string) => {
      res.statusCode = status;
      if (format) {
        res.setHeader('X-ClickHouse-Format', format);
        res.setHeader('Content-Type', contentTypeFor(format));
      }
      res.setHeader('X-ClickHouse-Summary', summaryHeader);
      let out = typeof payload === 'string' ? Buffer.from(payload) : Buffer.from(payload);
      if (gzip && out.length) {
        out = gzipSync(out);
        res.setHeader('Content-Encoding', 'gzip');
      }
      res.setHeader('Content-Length', out.length);
      res.end(out);
    };

    if (insert) {
      const data = Buffer.from(text.slice(insert.dataStart), 'utf8');
      const r = await session.insert({
        table: insert.table,
        values: data,
        format: insert.format as 'JSONEachRow',
        ...(insert.columns ? { columns: insert.columns } : {}),
        settings,
      });
      send(200, undefined, '', summary({ writtenRows: r.rowsWritten, writtenBytes: r.bytesWritten, elapsedS: r.elapsed }));
      return;
    }
    if (kind === 'read') {
      const explicit = trailingFormat(text);
      const format = explicit ?? String(req.headers['x-clickhouse-format'] ?? fields.get('default_format') ?? 'TabSeparated');
      const sql = (explicit ? text.replace(/;\s*$/, '') : `${text.replace(/;\s*$/, '')}\nFORMAT ${format}`) + renderSettings(settings);
      const r = Object.keys(params).length ? await session.queryBindAsync(sql, params, { format }) : await session.queryAsync(sql, { format });
      const bytes = r.bytes();
      send(200, format, bytes, summary({ readRows: r.rowsRead, readBytes: r.bytesRead, resultBytes: bytes.length, elapsedS: r.elapsed }));
      return;
    }
    const r = Object.keys(params).length ? await session.queryBindAsync(text, params) : await session.queryAsync(text);
    send(200, undefined, '', summary({ elapsedS: r.elapsed }));
  }

  async function insertNativeBlock(insert: InsertHeader, block: Buffer, settings: Record<string, string>): Promise<void> {
    const file = join(spoolDir, `${randomUUID()}.native`);
    await writeFile(file, block, { mode: 0o600 });
    try {
      const columns = insert.columns ? ` (${insert.columns.map((c) => `\`${c}\``).join(', ')})` : '';
      await session.queryAsync(`INSERT INTO ${insert.table}${columns} FROM INFILE '${file}'${renderSettings(settings)} FORMAT Native`);
    } finally {
      await rm(file, { force: true });
    }
  }

  const handle: RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
      res.setHeader('Content-Type', 'text/html; charset=UTF-8');
      res.end('Ok.\n');
      return;
    }
    if (url.pathname !== '/') {
      res.statusCode = 404;
      res.end(`There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`);
      return;
    }
    execute(req, res, url).catch((err: unknown) => {
      const e = err as { clickhouseCode?: number; message?: string; code?: number; codeName?: string };
      let failure;
      if (err instanceof HttpError) failure = serverError(err.code, err.codeName, err.message, version);
      else if (err instanceof ParamFormatError) failure = serverError(457, 'BAD_QUERY_PARAMETER', err.message, version);
      else {
        const message = String(e?.message ?? err);
        const code = typeof e?.clickhouseCode === 'number' ? e.clickhouseCode : 1001;
        failure = serverError(code, errorNameOf(message) ?? 'STD_EXCEPTION', message, version);
      }
      if (res.headersSent) {
        res.end();
        return;
      }
      res.statusCode = failure.status;
      res.setHeader('X-ClickHouse-Exception-Code', String(failure.code));
      res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
      res.end(failure.body);
    });
  };
  const tlsOptions = opts.tls && {
    cert: opts.tls.cert,
    key: opts.tls.key,
    ...(opts.tls.clientCa ? { ca: opts.tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
  const server: Server = tlsOptions ? createTlsServer(tlsOptions, handle) : createServer(handle);
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    url: `${opts.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      session.close();
      await drainPending();
    },
  };
}
