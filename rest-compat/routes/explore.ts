import { Scopes } from '../../src/auth/scopes.js';
import {
  ExploreOrganizationsDocument,
  ExploreOrgAccessDocument,
  ExploreOrgCadenceDocument,
  ExploreOrgHeaderDocument,
  ExploreOrgReachDocument,
  ExploreOrgTemporalDocument,
  ExploreOrgTransferDocument,
} from '../../src/generated/operations.js';
import { defineRoute, integer, type RestRequest, type Route } from '../route.js';

/**
 * The explore request (wire.md 9.1): the JSON body the SDK sends on GET, with query parameters
 * as a fallback (`instance_ids` repeated or comma-separated, `start`/`end` as a JSON
 * DateTimeFilter or an ISO date, `size`, `src_ip`). The body wins where both give a field. The
 * SDK sends a single instance id as a bare string (wire.md 9.1): that one field is wrapped here,
 * on purpose; a value of any other wrong type is refused (rest-compat/variables.ts).
 */
function exploreRequest({ body, query }: RestRequest) {
  const fromQuery = (name: string): unknown => {
    const raw = query.get(name);
    if (raw === null) return undefined;
    if (raw.trim().startsWith('{')) {
      try {
        return JSON.parse(raw);
      } catch {
        return raw; // refused by the service as an invalid date
      }
    }
    return raw;
  };
  const ids = query.getAll('instance_ids').flatMap((v) => v.split(','));
  const request: Record<string, unknown> = {
    instanceIds: typeof body.instance_ids === 'string' ? [body.instance_ids] : (body.instance_ids ?? (ids.length ? ids : undefined)),
    start: body.start ?? fromQuery('start'),
    end: body.end ?? fromQuery('end'),
    size: body.size ?? integer(query, 'size') ?? undefined,
    srcIp: body.src_ip ?? query.get('src_ip') ?? undefined,
  };
  return Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined));
}

const ORG = '/rest/explore/1.0/egress/organizations/:org';
const perOrg = (req: RestRequest) => ({ org: req.params.org!, request: exploreRequest(req) });

/** Explore ▸ Egress organizations (wire.md §9): flat errors (wire.md 2.3); `{org}` arrives percent-decoded. */
export const exploreRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/explore/1.0/egress/organizations',
    access: Scopes.searchApi,
    operation: ExploreOrganizationsDocument,
    variables: (req) => ({ request: exploreRequest(req) }),
    render: ({ view }) => view,
  }),
  defineRoute({ method: 'GET', path: ORG, access: Scopes.searchApi, operation: ExploreOrgHeaderDocument, variables: perOrg, render: ({ view }) => view }),
  defineRoute({
    method: 'GET',
    path: `${ORG}/temporal`,
    access: Scopes.searchApi,
    operation: ExploreOrgTemporalDocument,
    variables: perOrg,
    render: ({ view }) => view,
  }),
  defineRoute({
    method: 'GET',
    path: `${ORG}/cadence`,
    access: Scopes.searchApi,
    operation: ExploreOrgCadenceDocument,
    variables: perOrg,
    render: ({ view }) => view,
  }),
  defineRoute({
    method: 'GET',
    path: `${ORG}/transfer`,
    access: Scopes.searchApi,
    operation: ExploreOrgTransferDocument,
    variables: perOrg,
    render: ({ view }) => view,
  }),
  defineRoute({
    method: 'GET',
    path: `${ORG}/reach`,
    access: Scopes.searchApi,
    operation: ExploreOrgReachDocument,
    variables: perOrg,
    render: ({ view }) => view,
  }),
  defineRoute({
    method: 'GET',
    path: `${ORG}/access`,
    access: Scopes.searchApi,
    operation: ExploreOrgAccessDocument,
    variables: perOrg,
    render: ({ view }) => view,
  }),
];
