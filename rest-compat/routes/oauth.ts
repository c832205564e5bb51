import { IssueTokenDocument } from '../../src/generated/operations.js';
import { clientAuthErrorHeaders, clientCredentials } from '../client-auth.js';
import { defineRoute, field, type Route } from '../route.js';

/** OAuth2 (api-spec.md section 4); the token endpoint also takes HTTP Basic client authentication. */
export const oauthRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/token/1.0',
    access: 'public',
    form: true,
    operation: IssueTokenDocument,
    variables: ({ body, headers }) => {
      const { clientId, clientSecret } = clientCredentials(headers.authorization, body);
      return { clientId: clientId as string, clientSecret: clientSecret as string, grantType: field(body, 'grant_type') as string };
    },
    render: (data) => data.token,
    errorHeaders: ({ headers }, error) => clientAuthErrorHeaders(headers.authorization, error.status),
  }),
];
