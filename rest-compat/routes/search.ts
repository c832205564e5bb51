import { Scopes } from '../../src/auth/scopes.js';
import { SearchAggregateDocument, SearchRecordsDocument } from '../../src/generated/operations.js';
import { RECORDS_BODY, TERMS_BODY } from '../../src/modules/search/search.wire.js';
import { defineRoute, type Route } from '../route.js';

/** Flow search (api-spec.md Search, wire.md 5 and 7): nested errors, 200 only (wire.md 1.5). */
export const searchRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/search/records/1.0',
    access: Scopes.searchApi,
    operation: SearchRecordsDocument,
    variables: ({ body }) => ({ body }),
    bodySchema: RECORDS_BODY.schema,
    render: ({ records }) => records,
    errors: 'nested',
  }),
  defineRoute({
    method: 'POST',
    path: '/search/agg/1.0',
    access: Scopes.searchApi,
    operation: SearchAggregateDocument,
    variables: ({ body }) => ({ body }),
    bodySchema: TERMS_BODY.schema,
    render: ({ terms }) => terms,
    errors: 'nested',
  }),
];
