import { Scopes } from '../../src/auth/scopes.js';
import { CreateProfileDocument, DeleteProfileDocument, ListProfilesDocument } from '../../src/generated/operations.js';
import { defineRoute, field, type Route } from '../route.js';

/** Profiles (api-spec.md section 4, wire.md 12). */
export const profileRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/profiles/1.0',
    access: Scopes.nodeApi,
    operation: ListProfilesDocument,
    variables: () => ({}),
    render: ({ profiles }) => ({
      status: 'success',
      profiles: profiles.edges.map((edge) => edge.node),
      count: profiles.count,
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/profiles/1.0',
    access: Scopes.nodeApi,
    operation: CreateProfileDocument,
    variables: ({ body }) => ({
      input: {
        name: field(body, 'name') as string,
        description: field(body, 'description') as string,
        services: field(body, 'services'),
        tags: field(body, 'tags') as string[],
        updateChannel: field(body, 'update_channel') as string,
        fleetStaging: field(body, 'fleet_staging') as boolean,
        autoUpdate: field(body, 'auto_update') as boolean,
        customerId: field(body, 'customer_id') as string,
      },
    }),
    status: 201,
    render: ({ created }) => ({ status: 'success', profile: created.profile }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/rest/profiles/1.0/:profileId',
    access: Scopes.nodeApi,
    operation: DeleteProfileDocument,
    variables: ({ params }) => ({ profileId: params.profileId }),
    render: ({ removed }) => ({ status: 'success', ...removed }),
  }),
];
