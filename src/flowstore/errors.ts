/**
 * Typed errors of the flow store. Two families, as STYLE.md habit 4 asks:
 * - FlowQueryError: the caller's request is wrong (HTTP 400 `validation_error`); it names the
 *   offending request field and, for PQL, the character position.
 * - FlowEngineError: the database failed or the query ran too long; the lead masks these (5xx)
 *   except FlowQueryTimeoutError, which may be surfaced as a timeout.
 */
export class FlowStoreError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Caller text quoted in an error message, cut short: a key or value may be up to a request long. */
export const excerpt = (text: string, max = 80): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export type QueryErrorReason = 'invalid_request' | 'pql_syntax' | 'unknown_field' | 'invalid_value' | 'unsupported_operator';

export class FlowQueryError extends FlowStoreError {
  declare readonly code: 'validation_error';
  /** The request field at fault, e.g. `sentence`, `start`, `sort[0].field`, `size`. */
  readonly field: string;
  /** Character (code point) offset inside `sentence` for PQL errors. */
  position?: number;
  readonly reason: QueryErrorReason;

  constructor(field: string, message: string, opts: { position?: number; reason?: QueryErrorReason } = {}) {
    super('validation_error', message);
    this.field = field;
    this.reason = opts.reason ?? 'invalid_request';
    if (opts.position !== undefined) this.position = opts.position;
  }

  /** The `details` object of the nested search error envelope (wire.md 2.4). */
  details(): Record<string, unknown> {
    return this.position !== undefined ? { position: this.position } : { field: this.field };
  }
}

/** A PQL sentence that does not parse: message is always `PQL parse failure near '<tok>'`. */
export class PqlSyntaxError extends FlowQueryError {
  readonly token: string;
  constructor(token: string, position: number) {
    super('sentence', `PQL parse failure near '${token}'`, { position, reason: 'pql_syntax' });
    this.token = token;
  }
}

/** A PQL sentence that parses but names an unknown field or gives a value of the wrong type. */
export class PqlSemanticError extends FlowQueryError {
  constructor(message: string, position: number, reason: 'unknown_field' | 'invalid_value' | 'unsupported_operator') {
    super('sentence', message, { position, reason });
  }
}

export class FlowEngineError extends FlowStoreError {
  /** The ClickHouse exception code when the engine reported one. */
  readonly clickhouseCode?: number;
  /** The name from the query's leading comment, for logs. */
  readonly queryName?: string;
  constructor(message: string, opts: { code?: string; clickhouseCode?: number; queryName?: string; cause?: unknown } = {}) {
    super(opts.code ?? 'engine_error', message, { cause: opts.cause });
    if (opts.clickhouseCode !== undefined) this.clickhouseCode = opts.clickhouseCode;
    if (opts.queryName !== undefined) this.queryName = opts.queryName;
  }
}

/** The query ran past its limit (max_execution_time or the client-side deadline) and was cancelled. */
export class FlowQueryTimeoutError extends FlowEngineError {
  readonly timeoutMs: number;
  constructor(queryName: string | undefined, timeoutMs: number, cause?: unknown) {
    super(`query ${queryName ?? '(unnamed)'} exceeded its ${timeoutMs} ms limit and was cancelled`, {
      code: 'query_timeout',
      clickhouseCode: 159,
      ...(queryName !== undefined ? { queryName } : {}),
      cause,
    });
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's AbortSignal fired (e.g. the HTTP client went away). */
export class FlowQueryAbortedError extends FlowEngineError {
  constructor(queryName: string | undefined, cause?: unknown) {
    super(`query ${queryName ?? '(unnamed)'} was aborted by the caller`, {
      code: 'query_aborted',
      ...(queryName !== undefined ? { queryName } : {}),
      cause,
    });
  }
}

/** A flow handed to ingest does not fit the column registry. */
export class FlowIngestError extends FlowStoreError {
  readonly path: string;
  readonly index: number;
  constructor(index: number, path: string, message: string) {
    super('invalid_flow', `flow #${index}: ${path}: ${message}`);
    this.path = path;
    this.index = index;
  }
}
