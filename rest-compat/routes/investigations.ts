import { Scopes } from '../../src/auth/scopes.js';
import { GetInvestigationDocument, ListInvestigationsDocument } from '../../src/generated/operations.js';
import { notFound } from '../../src/errors.js';
import { defineRoute, integer, type Route } from '../route.js';

/** A query parameter, or null when absent or empty (the SDK sends only the filters it was given). */
const text = (query: URLSearchParams, name: string): string | null => query.get(name)?.trim() || null;

/** A Float query parameter; anything not a finite number is passed on for GraphQL to refuse (400). */
const decimal = (query: URLSearchParams, name: string): number | null => {
  const raw = text(query, name);
  if (raw === null) return null;
  const value = Number(raw);
  return Number.isFinite(value) ? value : (raw as unknown as number);
};

type Timeline = { at: string; label: string; children?: Timeline[] };
/** The operation selects timelines to a fixed depth; the wire wants `children` on every event. */
const withChildren = (events: Timeline[] | null): Timeline[] | null => events?.map((e) => ({ ...e, children: withChildren(e.children ?? []) ?? [] })) ?? null;

/** Investigations (wire.md 8). */
export const investigationRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/investigations/1.0',
    access: Scopes.searchApi,
    operation: ListInvestigationsDocument,
    variables: ({ query }) => ({
      limit: integer(query, 'limit'),
      offset: integer(query, 'offset'),
      disposition: text(query, 'disposition'),
      minConfidence: decimal(query, 'min_confidence'),
      since: text(query, 'since'),
      until: text(query, 'until'),
      sort: text(query, 'sort'),
    }),
    render: ({ page }) => page,
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/investigations/1.0/:id',
    access: Scopes.searchApi,
    operation: GetInvestigationDocument,
    variables: ({ params }) => ({ id: params.id }),
    render: ({ investigation }) => {
      // Missing, outside the caller's tree, or still running: the SDK reads 404 as "not (yet) there".
      if (!investigation) throw notFound('not_found', 'Investigation not found');
      return {
        ...investigation,
        key_findings: investigation.key_findings.map((f) => ({ ...f, timeline: withChildren(f.timeline as Timeline[] | null) })),
      };
    },
  }),
];
