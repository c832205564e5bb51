import DataLoader from 'dataloader';
import type { Session } from '../../auth/session.js';
import { DomainError, badRequest } from '../../errors.js';
import { parseIsoDate } from '../../flowstore/index.js';
import type { Investigation, Node } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import type { SearchService } from '../search/search.service.js';
import { DISPOSITIONS, type Disposition, type TrafficQuery } from './investigation.model.js';
import type { TriageAnswer, TriageStatus } from './triage.model.js';
import type { InvestigationFilter, InvestigationSelection, InvestigationStore, NodeKey } from './investigations.store.js';

/** wire.md 8.1: `limit` 1..200 (clamped), default 50. */
export const PAGE_LIMITS = { min: 1, default: 50, max: 200 } as const;
const SORTS = ['severity', 'recent', 'triage_status', 'answer', 'assignee'] as const;

/**
 * How many traffic-link searches (`TrafficLink.flows`) one request may start. Each is a flow
 * search of its own, so a page of investigations × findings × links (× aliases) would otherwise
 * start hundreds; past this the extra fields answer 400 `too_many_searches` (docs/detections.md).
 */
export const TRAFFIC_LINK_SEARCHES_PER_REQUEST = 50;

const tooManySearches = () =>
  new DomainError(
    400,
    'too_many_searches',
    `A request may replay at most ${TRAFFIC_LINK_SEARCHES_PER_REQUEST} traffic-link searches (TrafficLink.flows); ask for fewer investigations or links at once`,
    { details: { reason: 'too_many_searches', limit: TRAFFIC_LINK_SEARCHES_PER_REQUEST } },
  );

/** The list query as it arrives (REST query parameters or GraphQL arguments). */
export interface ListArgs {
  limit?: number | null;
  offset?: number | null;
  disposition?: string | null;
  minConfidence?: number | null;
  since?: string | null;
  until?: string | null;
  sort?: string | null;
  /** Triage filters (GraphQL only; their enums have checked the values). */
  triageStatus?: TriageStatus | null;
  /** true: not yet resolved; false: resolved (GraphQL only). */
  open?: boolean | null;
  answer?: TriageAnswer | null;
  assigneeId?: string | null;
  /** One tenant of the caller's tree (GraphQL only); the whole tree without it. */
  customerId?: string | null;
}

/** A validated list query: the filter and the page. */
export interface ListQuery {
  filter: InvestigationFilter;
  customerId?: string;
  limit: number;
  offset: number;
}

const invalid = (field: string, message: string) => badRequest('invalid_request', message, { field });
const given = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined && v !== '';

/**
 * An ISO 8601 instant from a query parameter. A `+` offset sent unencoded arrives as a space
 * (form decoding), so `2026-04-09T22:00:00 00:00` is read as `+00:00`.
 */
function instant(field: string, raw: string): Date {
  const text = raw.trim().replace(/ (\d{2}(:?\d{2})?)$/, '+$1');
  const ms = parseIsoDate(text);
  if (ms === null || !/^\d{4}-\d{2}-\d{2}/.test(text)) throw invalid(field, `${field} must be an ISO 8601 date-time, e.g. 2026-04-09T22:00:00+00:00`);
  return new Date(ms);
}

/**
 * Investigations (wire.md 8): read-only, with the search_api scope, over the caller's tree. An
 * investigation outside the tree, or still `running` (analysis in progress), behaves as missing.
 */
export interface NodeLoaders {
  byAddress: DataLoader<string, Node | null>;
  byId: DataLoader<string, Node | null>;
}

/** The search path traffic links replay through: the search service's deadline and error mapping. */
export type FlowSearch = Pick<SearchService, 'records'>;

export class InvestigationService {
  /** Per-request loaders, keyed by the request's context object (collected with it). */
  private readonly loaders = new WeakMap<object, NodeLoaders>();
  /** Traffic-link searches started per request, keyed the same way. */
  private readonly searchesStarted = new WeakMap<object, number>();

  constructor(
    private readonly store: InvestigationStore,
    private readonly search: FlowSearch,
  ) {}

  /** Validates the list parameters (400 `invalid_request` naming the field); `limit` is clamped. */
  query(session: Session, args: ListArgs): ListQuery {
    session.assert('investigations.read');
    if (given(args.offset) && (!Number.isInteger(args.offset) || args.offset < 0)) throw invalid('offset', 'offset must be a non-negative integer');
    if (given(args.limit) && !Number.isInteger(args.limit)) throw invalid('limit', 'limit must be an integer');
    if (given(args.disposition) && !DISPOSITIONS.includes(args.disposition as Disposition)) {
      throw invalid('disposition', `disposition must be one of ${DISPOSITIONS.join(', ')}`);
    }
    if (given(args.minConfidence) && !(Number.isFinite(args.minConfidence) && args.minConfidence >= 0 && args.minConfidence <= 1)) {
      throw invalid('min_confidence', 'min_confidence must be a number from 0 to 1');
    }
    if (given(args.sort) && !SORTS.includes(args.sort as (typeof SORTS)[number])) throw invalid('sort', `sort must be one of ${SORTS.join(', ')}`);
    const since = given(args.since) ? instant('since', args.since) : undefined;
    const until = given(args.until) ? instant('until', args.until) : undefined;
    if (since && until && since > until) throw invalid('since', 'since must not be after until');
    return {
      filter: {
        ...(given(args.disposition) ? { disposition: args.disposition as Disposition } : {}),
        ...(given(args.minConfidence) ? { minConfidence: args.minConfidence } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(given(args.triageStatus) ? { triageStatus: args.triageStatus } : {}),
        ...(given(args.open) ? { open: args.open } : {}),
        ...(given(args.answer) ? { answer: args.answer } : {}),
        ...(given(args.assigneeId) ? { assigneeId: args.assigneeId } : {}),
        sort: (given(args.sort) ? args.sort : 'severity') as InvestigationFilter['sort'],
      },
      limit: Math.max(PAGE_LIMITS.min, Math.min(PAGE_LIMITS.max, given(args.limit) ? args.limit : PAGE_LIMITS.default)),
      offset: given(args.offset) ? args.offset : 0,
      ...(given(args.customerId) ? { customerId: args.customerId } : {}),
    };
  }

  async list(session: Session, q: ListQuery, select: InvestigationSelection = {}): Promise<Investigation[]> {
    return this.store.list(await session.listScope('investigations.read', q.customerId), q.filter, q, select);
  }

  async total(session: Session, q: ListQuery): Promise<number> {
    return this.store.count(await session.listScope('investigations.read', q.customerId), q.filter);
  }

  /** A finished investigation of the caller's tree, or null (missing, elsewhere, or still running). */
  async find(session: Session, id: string, select: InvestigationSelection = {}): Promise<Investigation | null> {
    session.assert('investigations.read');
    if (!plausibleId(id)) return null;
    return this.store.findFinished(await session.tenantScope(), id, select);
  }

  /**
   * Batch loaders for the nodes of listed investigations, one pair per request (`key`, whose
   * caller is `session`): a page of investigations asks for its nodes in one statement per kind,
   * not one per investigation.
   */
  private nodeLoaders(session: Session, key: object): NodeLoaders {
    let loaders = this.loaders.get(key);
    if (!loaders) {
      const parse = (keys: readonly string[]) => keys.map((k) => JSON.parse(k) as NodeKey);
      loaders = {
        byAddress: new DataLoader(async (keys: readonly string[]) => {
          const wanted = parse(keys);
          const nodes = await this.store.nodesAt(await session.tenantScope(), wanted);
          return wanted.map(([customerId, ip]) => nodes.find((n) => n.customerId === customerId && n.localIp === ip) ?? null);
        }),
        byId: new DataLoader(async (keys: readonly string[]) => {
          const wanted = parse(keys);
          const nodes = await this.store.nodesById(await session.tenantScope(), wanted);
          return wanted.map(([customerId, id]) => nodes.find((n) => n.customerId === customerId && n.id === id) ?? null);
        }),
      };
      this.loaders.set(key, loaders);
    }
    return loaders;
  }

  /** The collector running on the investigation's source host, when there is one (node details need `node_api`). */
  async sourceNode(session: Session, investigation: Pick<Investigation, 'customerId' | 'source'>, key: object): Promise<Node | null> {
    session.assert('nodes.read');
    if (!investigation.source) return null;
    return this.nodeLoaders(session, key).byAddress.load(JSON.stringify([investigation.customerId, investigation.source]));
  }

  /** The collectors whose flows show the activity (node details need `node_api`). */
  async observers(session: Session, investigation: Pick<Investigation, 'customerId' | 'nodeIds'>, key: object): Promise<Node[]> {
    session.assert('nodes.read');
    const loader = this.nodeLoaders(session, key).byId;
    const nodes = await Promise.all(investigation.nodeIds.map((id) => loader.load(JSON.stringify([investigation.customerId, id]))));
    return nodes.filter((n): n is Node => n !== null);
  }

  /**
   * Replays a traffic link's search for the investigation's tenant (the caller must see it),
   * through the search service (its deadline: 504 `query_timeout`; its validation errors), and
   * within the request's budget of such searches (`key`: the request, as for `nodeLoaders`).
   */
  async linkedFlows(session: Session, key: object, customerId: string, link: TrafficQuery, size: number): Promise<Record<string, unknown>[]> {
    session.assert('investigations.read');
    // Counted before any await, so the fields that fit are the first ones the query asks for.
    const started = this.searchesStarted.get(key) ?? 0;
    if (started >= TRAFFIC_LINK_SEARCHES_PER_REQUEST) throw tooManySearches();
    this.searchesStarted.set(key, started + 1);
    if (!(await session.canSee(customerId))) return [];
    const response = await this.search.records(session, {
      customerIds: [customerId],
      sentence: link.query,
      start: link.start,
      end: link.end,
      size: Math.max(1, Math.min(1000, size)),
      sort: [{ field: '@timestamp', order: 'asc' }],
    });
    const page = response[customerId];
    if (!page) return [];
    const flows = page.flows.parse() as Record<string, unknown>[];
    page.flows.release();
    return flows;
  }
}
