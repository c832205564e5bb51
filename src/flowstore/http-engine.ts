/**
 * FlowEngine over a ClickHouse server's HTTP interface with the official client. Values travel as
 * `param_<name>` URL parameters bound to `{name:Type}` placeholders; the server parses them, so
 * they never become SQL text.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { rootCertificates } from 'node:tls';
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import {
  type FlowEngine,
  type InsertOptions,
  type QueryOptions,
  type RowSeparation,
  engineErrorFromClickHouse,
  insertHead,
  insertSettings,
  linesOutput,
  parseEachRow,
  selectSettings,
  withDeadline,
} from './engine.js';
import { requireQueryName, type Params } from './sql.js';

export interface HttpEngineConfig {
  url: string;
  username?: string;
  password?: string;
  database?: string;
  /** Certificate authorities (PEM) an https server's certificate must chain to, instead of Node's. */
  caCert?: Buffer;
  /** A client certificate and key (PEM) for a server that requires one (mutual TLS). */
  clientCert?: { cert: Buffer; key: Buffer };
  /** gzip responses: big search pages shrink ~10x on the wire. Default true. */
  compressResponses?: boolean;
  maxOpenConnections?: number;
}

function mapHttpError(queryName: string, err: unknown, timeoutMs: number): Error {
  if (err instanceof ClickHouseError) {
    const code = Number(err.code);
    return engineErrorFromClickHouse(queryName, Number.isFinite(code) ? code : undefined, err.message, timeoutMs, err);
  }
  return engineErrorFromClickHouse(queryName, undefined, err instanceof Error ? err.message : String(err), timeoutMs, err);
}

/** The query name leads the query_id, so system.query_log finds inserts (which carry no comment) too. */
function queryIdFor(name: string): string {
  return `${name}:${randomUUID()}`;
}

/** The client takes a client certificate only with an authority list: Node's own when none is given. */
function tlsOptions({ caCert, clientCert }: HttpEngineConfig) {
  if (clientCert) return { tls: { ca_cert: caCert ?? Buffer.from(rootCertificates.join('\n')), cert: clientCert.cert, key: clientCert.key } };
  return caCert ? { tls: { ca_cert: caCert } } : {};
}

/** A real server stops a SELECT whose client went away only when asked to. */
const CANCEL_ON_CLOSE: ClickHouseSettings = { cancel_http_readonly_queries_on_client_close: 1 };

export class HttpEngine implements FlowEngine {
  readonly kind = 'http' as const;
  private readonly client: ClickHouseClient;

  constructor(config: HttpEngineConfig) {
    this.client = createClient({
      url: config.url,
      username: config.username ?? 'default',
      password: config.password ?? '',
      ...(config.database ? { database: config.database } : {}),
      ...tlsOptions(config),
      compression: { response: config.compressResponses ?? true, request: false },
      max_open_connections: config.maxOpenConnections ?? 10,
      // Our own deadline (withDeadline) is the request limit; the client's must not fire first.
      request_timeout: 10 * 60_000,
      application: 'flowstore',
      // Long `in [...]` lists would overflow the URL; past 4 KiB the params go in a multipart body.
      use_multipart_params_auto: true,
      // Failures reach the caller as typed errors (errors.ts); the client's own logging would
      // print each one a second time, unstructured.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async query<T>(sql: string, params: Params, opts: QueryOptions = {}): Promise<T[]> {
    const name = requireQueryName(sql);
    return withDeadline(
      name,
      opts,
      async (signal, timeoutMs) => {
        const rs = await this.client.query({
          query: sql,
          query_params: params,
          format: 'JSONEachRow',
          clickhouse_settings: { ...CANCEL_ON_CLOSE, ...(selectSettings(timeoutMs, opts.settings) as ClickHouseSettings) },
          abort_signal: signal,
          query_id: opts.queryId ?? queryIdFor(name),
        });
        return parseEachRow<T>(await rs.text());
      },
      (err, timeoutMs) => mapHttpError(name, err, timeoutMs),
    );
  }

  async queryLines(sql: string, params: Params, options: QueryOptions = {}, rows?: RowSeparation): Promise<Buffer> {
    const name = requireQueryName(sql);
    const { format, opts } = linesOutput(options, rows);
    return withDeadline(
      name,
      opts,
      async (signal, timeoutMs) => {
        const { stream } = await this.client.exec({
          query: `${sql}\nFORMAT ${format}`,
          query_params: params,
          clickhouse_settings: { ...CANCEL_ON_CLOSE, ...(selectSettings(timeoutMs, opts.settings) as ClickHouseSettings) },
          abort_signal: signal,
          query_id: opts.queryId ?? queryIdFor(name),
        });
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      },
      (err, timeoutMs) => mapHttpError(name, err, timeoutMs),
    );
  }

  async command(sql: string, params: Params = {}, opts: QueryOptions = {}): Promise<void> {
    const name = requireQueryName(sql);
    await withDeadline(
      name,
      opts,
      async (signal) => {
        await this.client.command({
          query: sql,
          query_params: params,
          abort_signal: signal,
          query_id: opts.queryId ?? queryIdFor(name),
        });
      },
      (err, timeoutMs) => mapHttpError(name, err, timeoutMs),
    );
  }

  async insertJsonEachRow(table: string, rows: readonly Record<string, unknown>[] | string, opts: InsertOptions = {}): Promise<void> {
    const name = `flowstore:insert.${table}`;
    const values =
      typeof rows === 'string'
        ? rows
            .split('\n')
            .filter((l) => l.trim())
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [...rows];
    if (values.length === 0) return;
    await withDeadline(
      name,
      opts,
      async (signal) => {
        await this.client.insert({
          table,
          values,
          format: 'JSONEachRow',
          clickhouse_settings: insertSettings(opts) as ClickHouseSettings,
          abort_signal: signal,
          query_id: queryIdFor(name),
        });
      },
      (err, timeoutMs) => mapHttpError(name, err, timeoutMs),
    );
  }

  async insertNative(table: string, columns: readonly string[], blocks: readonly Buffer[], opts: InsertOptions = {}): Promise<void> {
    const query = `${insertHead(table, columns)} FORMAT Native`;
    const name = `flowstore:insert.${table}`;
    await withDeadline(
      name,
      opts,
      async (signal) => {
        const { stream } = await this.client.exec({
          query,
          values: Readable.from(blocks),
          clickhouse_settings: insertSettings(opts) as ClickHouseSettings,
          abort_signal: signal,
          query_id: queryIdFor(name),
        });
        stream.resume();
        await finished(stream);
      },
      (err, timeoutMs) => mapHttpError(name, err, timeoutMs),
    );
  }

  async ping(): Promise<boolean> {
    const r = await this.client.ping();
    return r.success;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
