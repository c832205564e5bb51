import { Scopes } from '../../src/auth/scopes.js';
import { EventRecordsDocument, EventTopicsDocument } from '../../src/generated/operations.js';
import { defineRoute, integer, type Route } from '../route.js';

/** Events (api-spec.md section 4 Events; shapes in docs/events.md). */
export const eventRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/events/1.0/:customerId',
    access: Scopes.searchApi,
    operation: EventTopicsDocument,
    variables: ({ params }) => ({ customerId: params.customerId }),
    render: ({ topics }) => ({ customer_id: topics.customer_id, topics: topics.topics, count: topics.topics.length }),
  }),
  defineRoute({
    method: 'GET',
    // `eventId` of the spec's path is the topic name.
    path: '/rest/events/1.0/:customerId/:topic',
    access: Scopes.searchApi,
    operation: EventRecordsDocument,
    variables: ({ params, query }) => ({
      customerId: params.customerId,
      topic: params.topic,
      kind: query.get('kind'),
      limit: integer(query, 'limit'),
      offset: integer(query, 'offset'),
      cursor: query.get('cursor'),
    }),
    render: ({ page }) => page,
  }),
];
