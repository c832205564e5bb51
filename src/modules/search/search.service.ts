/**
 * Flow search for callers (docs/search.md): the scope and tenant rules around the flow store's
 * `searchRecordPages` / `aggregateTerms`, the request deadline, and the mapping of the store's typed
 * errors onto DomainErrors (which the search paths render in the nested envelope, wire.md 2.4).
 *
 * Every search is the flow store's typed request (SearchRequest, TermsRequest):
 * - `records` / `terms` take it as built by their caller (the REST bodies are read into it at the
 *   edge, search.wire.ts; investigations build their own) and answer the store's envelope keyed by
 *   instance id;
 * - `connection` / `aggregate` / `timeseries` serve the typed GraphQL fields by building one from
 *   their arguments and shaping the answer.
 */
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError } from '../../errors.js';
import {
  DEFAULT_SIZE,
  MAX_SIZE,
  FlowQueryAbortedError,
  FlowQueryError,
  FlowQueryTimeoutError,
  aggregateTerms,
  searchRecordPages,
  type FlowEngine,
  type InstancePage,
  type SearchRequest,
  type SearchResponse,
  type TermsRequest,
  type TermsResponse,
  type TimeseriesResult,
} from '../../flowstore/index.js';
import type { Logger } from '../../infra/logger.js';
import type { RawJson } from '../../infra/raw-json.js';

/** The whole request (every statement of it) must finish within this; the SDK itself gives up at 30 s. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 25_000;

export const searchValidationError = (message: string, details: Record<string, unknown>) => new DomainError(400, 'validation_error', message, { details });

export const invalid = (field: string, message: string) => searchValidationError(message, { field });

/**
 * The instances a search names (`instance_ids` on the wire, `instanceIds` in GraphQL): a non-empty
 * list of non-empty strings, each kept once. The flow store's own cap on their number
 * (MAX_INSTANCES) comes after authorization, so that a long list of foreign ids is a 403.
 */
export function readInstanceIds(ids: unknown): string[] {
  if (ids === undefined || ids === null) throw invalid('instance_ids', 'instance_ids is required');
  if (!Array.isArray(ids) || ids.length === 0) throw invalid('instance_ids', 'instance_ids must be a non-empty array of strings');
  if (!ids.every((id) => typeof id === 'string' && id !== '')) throw invalid('instance_ids', 'instance_ids must be non-empty strings');
  return [...new Set(ids as string[])];
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
   * A records search (POST /search/records/1.0, investigations' traffic links): the envelope keyed
   * by instance id, each page's records as the JSON text the engine wrote (rendered as is by
   * rest-compat).
   */
  async records(session: Session, request: SearchRequest): Promise<SearchResponse<RawJson>> {
    session.assert('flows.search');
    await this.authorize(session, request.customerIds);
    const size = typeof request.size === 'number' ? request.size : DEFAULT_SIZE;
    if (typeof request.page === 'number' && request.page * size > MAX_OFFSET) {
      throw invalid('page', 'page × size is beyond the last possible record');
    }
    return this.run('records', (opts) => searchRecordPages(this.engine, request, opts));
  }

  /** A terms aggregation per instance (POST /search/agg/1.0, docs/search.md). */
  async terms(session: Session, request: TermsRequest): Promise<TermsResponse> {
    session.assert('flows.search');
    await this.authorize(session, request.customerIds);
    return this.run('terms', (opts) => aggregateTerms(this.engine, request, opts));
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
    const customerIds = this.instanceIds(session, [args.instanceId]);
    const request = (p: number): SearchRequest => ({
      customerIds,
      sentence: args.sentence,
      start: args.start,
      end: args.end,
      sort: args.sort,
      fields: args.fields,
      size,
      page: p,
    });
    const [first, second] = await Promise.all([this.records(session, request(page)), skip === 0 ? undefined : this.records(session, request(page + 1))]);
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
    const response = await this.terms(session, {
      customerIds: this.instanceIds(session, args.instanceIds),
      sentence: args.sentence,
      start: args.start,
      end: args.end,
      field: args.field,
      size: args.size ?? undefined,
      metric: args.metric,
      order: args.order,
    });
    return Object.entries(response).map(([instanceId, terms]) => ({ instanceId, ...terms }));
  }

  /** GraphQL `flowTimeseries`: buckets per instance (a records search with size 0). */
  async timeseries(session: Session, args: TimeseriesArgs) {
    const response = await this.records(session, {
      customerIds: this.instanceIds(session, args.instanceIds),
      sentence: args.sentence,
      start: args.start,
      end: args.end,
      size: 0,
      timeseries: { interval: args.interval, metric: args.metric },
    });
    return Object.entries(response).map(([instanceId, page]) => ({
      instanceId,
      found: page.found,
      total: page.total,
      took: page.took,
      ...(page.timeseries as TimeseriesResult),
    }));
  }

  /**
   * GraphQL's instance ids, read as the REST body's: after the scope, as a token without it
   * learns nothing of a request's rules (`records`/`terms` ask for the scope too, for their other
   * callers).
   */
  private instanceIds(session: Session, ids: readonly string[]): string[] {
    session.assert('flows.search');
    return readInstanceIds(ids);
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
        throw new DomainError(
          504,
          'query_timeout',
          `The search ran past its ${this.timeoutMs / 1000} s limit and was cancelled; narrow the time window or the sentence`,
          {
            details: { reason: 'query_timeout', timeout_ms: this.timeoutMs },
          },
        );
      }
      throw error;
    }
  }
}
