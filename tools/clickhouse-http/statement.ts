/**
 * What the HTTP handler needs to know about a statement before running it on chDB: its kind, the
 * INSERT header (table, columns, format, where the data starts), the output format, and how to
 * report an exception the way clickhouse-server does (status code and body).
 */

export type StatementKind = 'read' | 'insert' | 'other';

/** Leading whitespace and comments (a named query starts with `/* name *\/`). */
function stripLeading(sql: string): string {
  let s = sql;
  for (;;) {
    const t = s.replace(/^\s+/, '');
    if (t.startsWith('/*')) {
      const end = t.indexOf('*/');
      s = end < 0 ? '' : t.slice(end + 2);
    } else if (t.startsWith('--')) {
      const end = t.indexOf('\n');
      s = end < 0 ? '' : t.slice(end + 1);
    } else return t;
  }
}

export function statementKind(sql: string): StatementKind {
  const head = /^\(*\s*([A-Za-z]+)/.exec(stripLeading(sql))?.[1]?.toUpperCase();
  if (head === 'INSERT') return 'insert';
  if (head && ['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC', 'EXISTS', 'EXPLAIN', 'CHECK'].includes(head)) return 'read';
  return 'other';
}

export interface InsertHeader {
  table: string;
  columns?: string[];
  format: string;
  /** Offset in the full text where the data begins. */
  dataStart: number;
}

const INSERT_RE =
  /^INSERT\s+INTO\s+(?:TABLE\s+)?((?:`[^`]+`|[A-Za-z_][\w]*)(?:\.(?:`[^`]+`|[A-Za-z_]\w*))?)\s*(?:\(([^)]*)\))?\s*FORMAT\s+([A-Za-z]+)[ \t]*\r?\n?/i;

/** The header of `INSERT INTO t [(cols)] FORMAT F` followed by data; undefined for other INSERTs. */
export function parseInsert(sql: string): InsertHeader | undefined {
  const body = stripLeading(sql);
  const m = INSERT_RE.exec(body);
  if (!m) return undefined;
  const offset = sql.length - body.length;
  const columns = m[2]
    ?.split(',')
    .map((c) => c.trim().replace(/^`|`$/g, ''))
    .filter(Boolean);
  return { table: m[1]!.replace(/`/g, ''), ...(columns?.length ? { columns } : {}), format: m[3]!, dataStart: offset + m[0].length };
}

/** The trailing `FORMAT X` of a read statement, if present. */
export function trailingFormat(sql: string): string | undefined {
  return /\bFORMAT\s+([A-Za-z]+)\s*;?\s*$/i.exec(sql)?.[1];
}

export function contentTypeFor(format: string): string {
  if (/^JSON/i.test(format)) return /EachRow$/i.test(format) ? 'application/x-ndjson; charset=UTF-8' : 'application/json; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8; header=absent';
  return 'text/plain; charset=UTF-8';
}

/** clickhouse-server's exceptionCodeToHTTPStatus, keyed by error name. */
const STATUS_BY_NAME: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  UNKNOWN_USER: 403,
  WRONG_PASSWORD: 403,
  AUTHENTICATION_FAILED: 403,
  SET_NON_GRANTED_ROLE: 403,
  ACCESS_DENIED: 403,
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  CANNOT_SCHEDULE_TASK: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
};
for (const n of [
  'BAD_ARGUMENTS',
  'CANNOT_COMPILE_REGEXP',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
  'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_UUID',
  'DUPLICATE_COLUMN',
  'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST',
  'UNKNOWN_TYPE_OF_AST_NODE',
  'THERE_IS_NO_COLUMN',
  'TOO_DEEP_AST',
  'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE',
  'SYNTAX_ERROR',
  'INCORRECT_DATA',
  'TYPE_MISMATCH',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
])
  STATUS_BY_NAME[n] = 400;
for (const n of [
  'UNKNOWN_TABLE',
  'UNKNOWN_FUNCTION',
  'UNKNOWN_IDENTIFIER',
  'UNKNOWN_TYPE',
  'UNKNOWN_STORAGE',
  'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING',
  'UNKNOWN_DIRECTION_OF_SORTING',
  'UNKNOWN_AGGREGATE_FUNCTION',
  'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE',
  'UNKNOWN_TYPE_OF_QUERY',
  'UNKNOWN_ROLE',
])
  STATUS_BY_NAME[n] = 404;

export interface ServerError {
  status: number;
  code: number;
  body: string;
}

/** The `(ERROR_NAME)` ClickHouse puts after an exception message. */
export function errorNameOf(message: string): string | undefined {
  return /\(([A-Z][A-Z0-9_]{2,})\)(?![\s\S]*\([A-Z][A-Z0-9_]{2,}\))/.exec(message)?.[1];
}

/** Status and body for an exception, as clickhouse-server would send them. */
export function serverError(code: number, name: string, message: string, version: string): ServerError {
  const text = /^Code: \d+\./.test(message) ? message : `Code: ${code}. DB::Exception: ${message}. (${name})`;
  return { status: STATUS_BY_NAME[errorNameOf(text) ?? name] ?? 500, code, body: `${text} (version ${version})\n` };
}
