import { builder } from '../../graphql/builder.js';

const AccessToken = builder.simpleObject('AccessToken', {
  description: 'A bearer token for the client credentials (api-spec.md section 2, Token response).',
  fields: (t) => ({
    accessToken: t.string(),
    expiresIn: t.int({ description: 'Lifetime in seconds.' }),
    expiresAt: t.int({ description: 'Unix time of expiry.' }),
    tokenType: t.string(),
  }),
});

builder.mutationFields((t) => ({
  issueToken: t.field({
    type: AccessToken,
    description: 'Exchanges client credentials (or the two halves of an access_key) for a JWT.',
    args: {
      clientId: t.arg.string({ required: false }),
      clientSecret: t.arg.string({ required: false }),
      grantType: t.arg.string({ required: false, description: 'OAuth2 `grant_type`: absent, or `client_credentials`.' }),
    },
    resolve: async (_root, args, ctx) => {
      const token = await ctx.services.auth.requestToken(ctx.origin, args.clientId, args.clientSecret, args.grantType);
      return {
        accessToken: token.access_token,
        expiresIn: token.expires_in,
        expiresAt: token.expires_at,
        tokenType: token.token_type,
      };
    },
  }),
}));
