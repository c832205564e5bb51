/**
 * Flow search for callers (docs/search.md): the scope and tenant rules around the flow store's
 * `searchRecords` / `aggregateTerms`, the request deadline, and the mapping of the store's typed
 * errors onto DomainErrors (which the search paths render in the nested envelope, wire.md 2.4).
 *
 * Two faces over one set of rules:
 * - `records` / `terms` take the wire body exactly as POSTed to /search/records/1.0 and
 *   /search/agg/1.0 and answer the wire envelope keyed by instance id;
 * - `connection` / `aggregate` / `timeseries` serve the typed GraphQL fields by building the
 *   same wire request and shaping the answer.
 */
import { Scopes } from '../../auth/scopes.js';
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError } from '../../errors.js';
import {
  DEFAULT_SIZE,
  MAX_SIZE,
  FlowQueryAbortedError,
  FlowQueryError,
  FlowQueryTimeoutError,
  aggregateTerms,
  excerpt,
  searchRecordPages,
  type FlowEngine,
  type InstancePage,
  type SearchResponse,
  type TermsResponse,
  type TimeseriesResult,
} from '../../flowstore/index.js';
import type { Logger } from '../../infra/logger.js';
import type { RawJson } from '../../infra/raw-json.js';

/** The whole request (every statement of it) must finish within this; the SDK itself gives up at 30 s. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 25_000;

/** Body keys of POST /search/records/1.0 (api-spec.md Search, wire.md 5.1, plus our `timeseries`). */
export const RECORDS_KEYS = ['instance_ids', 'module', 'sentence', 'start', 'end', 'sort', 'fields', 'size', 'page', 'timeseries'] as const;
/** Body keys of POST /search/agg/1.0 (our design, docs/search.md). */
export const TERMS_KEYS = ['instance_ids', 'module', 'sentence', 'start', 'end', 'field', 'size', 'metric', 'order'] as const;

type Body = Record<string, unknown>;

export const searchValidationError = (message: string, details: Record<string, unknown>) =>
  new DomainError(400, 'validation_error', message, { details });

const invalid = (field: string, message: string) => searchValidationError(message, { field });

function isObject(v: unknown): v is Body {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What both wire bodies share: an object of known keys, `module: "flows"`, and instance ids. */
function readWireBody(body: unknown, keys: readonly string[]): { body: Body; instanceIds: string[] } {
  if (!isObject(body)) throw invalid('body', 'The request body must be a JSON object');
  const unknown = Object.keys(body).filter((k) => !keys.includes(k));
  if (unknown.length) throw invalid(excerpt(unknown[0]!), `Unknown field '${excerpt(unknown[0]!)}'; the body may have ${keys.join(', ')}`);
  if (body.module === undefined || body.module === null) throw invalid('module', "module is required and must be 'flows'");
  if (body.module !== 'flows') throw invalid('module', "module must be 'flows'");
  const ids = body.instance_ids;
  if (ids === undefined || ids === null) throw invalid('instance_ids', 'instance_ids is required');
  if (!Array.isArray(ids) || ids.length === 0) throw invalid('instance_ids', 'instance_ids must be a non-empty array of strings');
  if (!ids.every((id) => typeof id === 'string' && id !== '')) throw invalid('instance_ids', 'instance_ids must be non-empty strings');
  return { body, instanceIds: [...new Set(ids as string[])] };
}

/** An optional object-valued body field: absent or null is fine, anything but an object is a 400. */
function optionalObject(body: Body, field: string): void {
  const v = body[field];
  if (v !== undefined && v !== null && !isObject(v)) throw invalid(field, `${field} must be an object`);
}

/** Offsets past this cannot be represented exactly (page × size); refuse them rather than fail in SQL. */
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

export interface TimeFilters {
  sentence?: string | null;
  start?: unknown;
  end?: unknown;
}

export interface ConnectionArgs extends TimeFilters {
  instanceId: string;
  sort?: readonly { field: string; order?: string | null }[] | null;
  fields?: readonly string[] | null;
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface FlowEdge {
  cursor: string;
  node: Record<string, unknown>;
}

export interface FlowConnection {
  edges: FlowEdge[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  /** The page's records as one JSON value: the engine's text when the window is one page. */
  flows: Record<string, unknown>[] | RawJson;
  found: number;
  total: number;
  took: number;
}

export interface AggregateArgs extends TimeFilters {
  instanceIds: readonly string[];
  field: string;
  size?: number | null;
  metric?: string | null;
  order?: { by?: string | null; direction?: string | null } | null;
}

export interface TimeseriesArgs extends TimeFilters {
  instanceIds: readonly string[];
  interval: string;
  metric?: string | null;
}

/**
 * Cursors are record offsets in the result order (`offset:<n>`, base64url): a connection page is
 * a LIMIT/OFFSET page, exactly like the REST `page`. Stable as long as the window's data is.
 */
export const encodeCursor = (offset: number): string => Buffer.from(`offset:${offset}`).toString('base64url');

export function decodeCursor(cursor: string, field: string): number {
  const m = /^offset:(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const offset = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(offset)) throw invalid(field, `${field} is not a cursor of this connection`);
  return offset;
}

/** The records a connection page covers: offsets [start, start + count). */
function connectionWindow(args: ConnectionArgs): { start: number; count: number } {
  const count = (name: 'first' | 'last', v: number | null | undefined): number => {
    if (v === null || v === undefined) return DEFAULT_SIZE;
    if (!Number.isInteger(v) || v < 0 || v > MAX_SIZE) throw invalid(name, `${name} must be an integer between 0 and ${MAX_SIZE}`);
    return v;
  };
  if (args.last != null || args.before != null) {
    if (args.first != null || args.after != null) throw invalid('last', 'page forward (first/after) or backward (last/before), not both');
    if (args.before == null) throw invalid('before', 'last needs before: the end of the result is not known otherwise');
    const end = decodeCursor(args.before, 'before');
    const start = Math.max(0, end - count('last', args.last));
    return { start, count: end - start };
  }
  return { start: args.after != null ? decodeCursor(args.after, 'after') + 1 : 0, count: count('first', args.first) };
}

/** Drops null and undefined properties, so GraphQL's explicit nulls read as "not given". */
function defined(obj: Record<string, unknown>): Body {
  const out: Body = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

export class SearchService {
  private readonly timeoutMs: number;

  constructor(
    private readonly engine: FlowEngine,
    private readonly logger: Logger,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS;
  }

  /**
   * POST /search/records/1.0: the wire body in, the envelope keyed by instance id out, each
   * page's records as the JSON text the engine wrote (rendered as is by rest-compat).
   */
  async records(session: Session, input: unknown): Promise<SearchResponse<RawJson>> {
    session.requireScope(Scopes.searchApi);
    const { body, instanceIds } = readWireBody(input, RECORDS_KEYS);
    optionalObject(body, 'timeseries');
    await this.authorize(session, instanceIds);
    const size = typeof body.size === 'number' ? body.size : DEFAULT_SIZE;
    if (typeof body.page === 'number' && body.page * size > MAX_OFFSET) {
      throw invalid('page', 'page × size is beyond the last possible record');
    }
    return this.run('records', (opts) =>
      searchRecordPages(
        this.engine,
        {
          ...selection(body, instanceIds),
          sort: body.sort as never,
          fields: body.fields as never,
          size: body.size as number | undefined,
          page: body.page as number | undefined,
          timeseries: body.timeseries as never,
        },
        opts,
      ),
    );
  }

  /** POST /search/agg/1.0: terms aggregation per instance (docs/search.md). */
  async terms(session: Session, input: unknown): Promise<TermsResponse> {
    session.requireScope(Scopes.searchApi);
    const { body, instanceIds } = readWireBody(input, TERMS_KEYS);
    if (body.field === undefined || body.field === null) throw invalid('field', 'field is required: the dotted path to aggregate on');
    if (typeof body.field !== 'string') throw invalid('field', 'field must be a string');
    if (body.size !== undefined && body.size !== null && typeof body.size !== 'number') throw invalid('size', 'size must be an integer between 1 and 1000');
    optionalObject(body, 'order');
    await this.authorize(session, instanceIds);
    return this.run('terms', (opts) =>
      aggregateTerms(
        this.engine,
        {
          ...selection(body, instanceIds),
          field: body.field as string,
          ...(body.size !== undefined && body.size !== null ? { size: body.size as number } : {}),
          metric: body.metric as string | undefined,
          order: (body.order ?? undefined) as never,
        },
        opts,
      ),
    );
  }

  /**
   * GraphQL `flows`: one instance's records as a cursor connection. `first`/`after` page forward,
   * `last`/`before` backward. A window that is not aligned to its size is read as two pages.
   */
  async connection(session: Session, args: ConnectionArgs): Promise<FlowConnection> {
    const { start, count } = connectionWindow(args);
    const size = Math.max(count, 1);
    const page = Math.floor(start / size);
    const skip = start - page * size;
    const wire = (p: number) =>
      defined({
        instance_ids: [args.instanceId],
        module: 'flows',
        sentence: args.sentence,
        start: args.start,
        end: args.end,
        sort: args.sort?.map((s) => defined({ ...s })),
        fields: args.fields,
        size,
        page: p,
      });
    const [first, second] = await Promise.all([
      this.records(session, wire(page)),
      skip === 0 ? undefined : this.records(session, wire(page + 1)),
    ]);
    const a = first[args.instanceId]!;
    const b = second?.[args.instanceId];
    // Records are parsed only for `edges`, or to cut a window that straddles two pages.
    const parsed = (p: InstancePage<RawJson> | undefined) => (p ? (p.flows.parse() as Record<string, unknown>[]) : []);
    let rows: Record<string, unknown>[] | undefined;
    const records = () => (rows ??= [...parsed(a), ...parsed(b)].slice(skip, skip + count));
    const onePage = skip === 0 && count > 0;
    const returned = onePage ? a.returned : records().length;
    const cursor = (i: number) => encodeCursor(start + i);
    return {
      get edges() {
        return records().map((node, i) => ({ cursor: cursor(i), node }));
      },
      flows: onePage ? a.flows : records(),
      pageInfo: {
        hasNextPage: start + returned < a.found,
        hasPreviousPage: start > 0,
        startCursor: returned ? cursor(0) : null,
        endCursor: returned ? cursor(returned - 1) : null,
      },
      found: a.found,
      total: a.total,
      took: a.took + (b?.took ?? 0),
    };
  }

  /** GraphQL `flowAggregate`: the terms aggregation as a list, one entry per instance. */
  async aggregate(session: Session, args: AggregateArgs) {
    const response = await this.terms(
      session,
      defined({
        instance_ids: args.instanceIds,
        module: 'flows',
        sentence: args.sentence,
        start: args.start,
        end: args.end,
        field: args.field,
        size: args.size,
        metric: args.metric,
        order: args.order ? defined({ ...args.order }) : undefined,
      }),
    );
    return Object.entries(response).map(([instanceId, terms]) => ({ instanceId, ...terms }));
  }

  /** GraphQL `flowTimeseries`: buckets per instance (a records search with size 0). */
  async timeseries(session: Session, args: TimeseriesArgs) {
    const response = await this.records(
      session,
      defined({
        instance_ids: args.instanceIds,
        module: 'flows',
        sentence: args.sentence,
        start: args.start,
        end: args.end,
        size: 0,
        timeseries: defined({ interval: args.interval, metric: args.metric }),
      }),
    );
    return Object.entries(response).map(([instanceId, page]) => ({
      instanceId,
      found: page.found,
      total: page.total,
      took: page.took,
      ...(page.timeseries as TimeseriesResult),
    }));
  }

  /** Every id must be in the caller's tree; others (foreign or missing alike) are named in a 403. */
  private async authorize(session: Session, instanceIds: readonly string[]): Promise<void> {
    const { tenantIds } = await session.tenantScope();
    const refused = instanceIds.filter((id) => !tenantIds.has(id));
    if (refused.length) {
      throw authorizationError(`Not authorized for ${refused.length} of the requested instances`, {
        reason: 'instance_not_authorized',
        unauthorized_instance_ids: refused,
      });
    }
  }

  /**
   * Runs a flow-store call under the request deadline. Every statement carries the remaining
   * time as its server-side limit (so the engine stops it), and the deadline signal stops the
   * request as a whole (chDB runs a session's statements one after another).
   */
  private async run<T>(name: string, fn: (opts: { timeoutMs: number; signal: AbortSignal }) => Promise<T>): Promise<T> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    try {
      return await fn({ timeoutMs: this.timeoutMs, signal: deadline });
    } catch (error) {
      if (error instanceof FlowQueryError) {
        throw searchValidationError(error.message, error.details());
      }
      if (error instanceof FlowQueryTimeoutError || (error instanceof FlowQueryAbortedError && deadline.aborted)) {
        this.logger.warn('search.timeout', { search: name, timeoutMs: this.timeoutMs, query: (error as FlowQueryTimeoutError).queryName });
        throw new DomainError(504, 'query_timeout', `The search ran past its ${this.timeoutMs / 1000} s limit and was cancelled; narrow the time window or the sentence`, {
          details: { reason: 'query_timeout', timeout_ms: this.timeoutMs },
        });
      }
      throw error;
    }
  }
}

/** What both searches select: the authorized instances, the sentence and the time window. */
function selection(body: Record<string, unknown>, instanceIds: string[]) {
  return { customerIds: instanceIds, sentence: body.sentence as string | undefined, start: body.start, end: body.end };
}
