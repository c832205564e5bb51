/**
 * The endpoint speaks clickhouse-server's HTTP protocol: checked here with plain fetch, so the
 * assertions are about bytes on the wire, not about what @clickhouse/client happens to tolerate.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paramValue, unescapeText } from './params.js';
import { startClickHouseHttpServer, type ClickHouseHttpServer } from './server.js';
import { parseInsert, statementKind } from './statement.js';

let server: ClickHouseHttpServer;
let dir: string;
const AUTH = { Authorization: `Basic ${Buffer.from('default:pw').toString('base64')}` };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chdb-http-'));
  server = await startClickHouseHttpServer({ dataDir: dir, password: 'pw' });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(query: string, params: Record<string, string> = {}, init: RequestInit = {}) {
  const url = new URL(server.url);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return fetch(url, { method: 'POST', body: query, ...init, headers: { ...AUTH, ...(init.headers ?? {}) } });
}

describe('ClickHouse HTTP endpoint on chDB', () => {
  it('answers /ping and GET / like clickhouse-server', async () => {
    for (const path of ['/ping', '/']) {
      const r = await fetch(new URL(path, server.url));
      expect([r.status, await r.text()]).toEqual([200, 'Ok.\n']);
    }
  });

  it('runs a query with bound parameters and reports it in headers', async () => {
    const r = await post('SELECT {s:String} AS s, {n:Int64} + 1 AS n, {a:Array(String)} AS a, {z:Nullable(String)} AS z FORMAT JSONEachRow', {
      param_s: "it\\'s\\ta \\\\ b",
      param_n: '41',
      param_a: "['x\\'y','b\\\\c']",
      param_z: '\\N',
      query_id: 'q-1',
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ s: "it's\ta \\ b", n: 42, a: ["x'y", 'b\\c'], z: null });
    expect(r.headers.get('x-clickhouse-query-id')).toBe('q-1');
    expect(r.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(JSON.parse(r.headers.get('x-clickhouse-summary')!)).toMatchObject({ read_rows: '1', written_rows: '0' });
  });

  it('takes the query from the URL and the body together, default_format and settings', async () => {
    const r = await post('AS x', { query: 'SELECT 21 * 2', default_format: 'JSONCompactEachRow', max_threads: '1' });
    expect(await r.text()).toBe('[42]\n');
    const limited = await post('SELECT number FROM numbers(10) FORMAT CSV', { max_result_rows: '2', result_overflow_mode: 'break', max_block_size: '1' });
    expect((await limited.text()).trim().split('\n').length).toBeLessThanOrEqual(3);
  });

  it('reports exceptions with the server status codes and headers', async () => {
    const cases: [string, Record<string, string>, number, string, string][] = [
      ['SELEC 1', {}, 400, '62', 'SYNTAX_ERROR'],
      ['SELECT * FROM no_such_table', {}, 404, '60', 'UNKNOWN_TABLE'],
      ['SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 0', { max_execution_time: '0.2' }, 408, '159', 'TIMEOUT_EXCEEDED'],
      ['SELECT 1', { database: 'nope' }, 404, '81', 'UNKNOWN_DATABASE'],
      ['SELECT {x:Int64}', { param_x: 'abc' }, 500, '457', 'BAD_QUERY_PARAMETER'],
    ];
    for (const [query, params, status, code, name] of cases) {
      const r = await post(query, params);
      const body = await r.text();
      expect([r.status, r.headers.get('x-clickhouse-exception-code')], query).toEqual([status, code]);
      expect(body, query).toMatch(new RegExp(`^Code: ${code}\\. DB::Exception: [\\s\\S]*\\(${name}\\) \\(version [\\d.]+\\)\\n$`));
    }
    const denied = await fetch(server.url, { method: 'POST', body: 'SELECT 1', headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': 'wrong' } });
    expect([denied.status, denied.headers.get('x-clickhouse-exception-code')]).toEqual([403, '516']);
    const url = new URL(server.url);
    url.searchParams.set('query', 'CREATE TABLE t (x UInt8) ENGINE = Memory');
    const readonly = await fetch(url, { headers: AUTH });
    expect([readonly.status, readonly.headers.get('x-clickhouse-exception-code')]).toEqual([500, '164']);
  });

  it('inserts data sent after INSERT ... FORMAT, with dedup tokens', async () => {
    await post('CREATE TABLE ins (a UInt32, b String) ENGINE = MergeTree ORDER BY a SETTINGS non_replicated_deduplication_window = 10');
    for (let i = 0; i < 2; i++) {
      const r = await post('{"a":1,"b":"x"}\n{"a":2,"b":"y"}\n', { query: 'INSERT INTO ins (a, b) FORMAT JSONEachRow', insert_deduplication_token: 'tok' });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.headers.get('x-clickhouse-summary')!).written_rows).toBe('2');
    }
    const r = await post('SELECT count() AS n FROM ins FORMAT JSONEachRow');
    expect(await r.json()).toEqual({ n: 2 });
  });

  it('gzips responses when asked and reads multipart parameters', async () => {
    const r = await post(
      'SELECT repeat({s:String}, 100) AS s FORMAT JSONEachRow',
      { param_s: 'ab', enable_http_compression: '1' },
      { headers: { 'Accept-Encoding': 'gzip' } },
    );
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(await r.json()).toEqual({ s: 'ab'.repeat(100) }); // fetch gunzips it
    const boundary = 'XYZ';
    const body = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="query"',
      '',
      'SELECT {v:Array(UInt32)} AS v FORMAT JSONEachRow',
      `--${boundary}`,
      'Content-Disposition: form-data; name="param_v"',
      '',
      '[1,2,3]',
      `--${boundary}--`,
      '',
    ].join('\r\n');
    const m = await post(body, {}, { headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } });
    expect(await m.json()).toEqual({ v: [1, 2, 3] });
  });

  it('uses the real error codes for the names it reports', async () => {
    const source = readFileSync(new URL('./server.ts', import.meta.url), 'utf8');
    const pairs = [...source.matchAll(/new HttpError\((\d+), '([A-Z_]+)'/g)].map((m) => [Number(m[1]), m[2]] as const);
    const r = await post(`SELECT arrayMap(c -> errorCodeToName(c), [${pairs.map((p) => p[0]).join(',')}]) AS names FORMAT JSONEachRow`);
    expect(((await r.json()) as { names: string[] }).names).toEqual(pairs.map((p) => p[1]));
  });
});

describe('parameter and statement parsing', () => {
  it('reads escaped text by declared type', () => {
    expect(unescapeText("a\\tb\\\\c\\'d\\x41")).toBe("a\tb\\c'dA");
    expect(paramValue('\\N', 'Nullable(Int64)')).toBeNull();
    expect(paramValue("['a\\'b', NULL]", 'Array(Nullable(String))')).toEqual(["a'b", null]);
    expect(paramValue('[[1,2],[]]', 'Array(Array(Int64))')).toEqual([[1, 2], []]);
    expect(paramValue('9007199254740993', 'Int64')).toBe('9007199254740993');
  });

  it('classifies statements and parses INSERT headers', () => {
    expect(statementKind('/* name */ SELECT 1')).toBe('read');
    expect(statementKind('  -- c\nWITH 1 AS x SELECT x')).toBe('read');
    expect(statementKind('/* n */ ALTER TABLE t ADD COLUMN x UInt8')).toBe('other');
    const text = 'INSERT INTO db.`t` (a, `b`) FORMAT JSONEachRow\n{"a":1}';
    expect(parseInsert(text)).toEqual({ table: 'db.t', columns: ['a', 'b'], format: 'JSONEachRow', dataStart: text.indexOf('{') });
  });
});
