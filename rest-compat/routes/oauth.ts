import { IssueTokenDocument } from '../../src/generated/operations.js';
import { defineRoute, field, type Route } from '../route.js';

/** OAuth2 (api-spec.md section 4). */
export const oauthRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/token/1.0',
    access: 'public',
    form: true,
    operation: IssueTokenDocument,
    variables: ({ body }) => ({
      clientId: field(body, 'client_id') as string,
      clientSecret: field(body, 'client_secret') as string,
      grantType: field(body, 'grant_type') as string,
    }),
    render: (data) => data.token,
  }),
];
