import { sendJson } from '../../http/kit.js';
import { type HttpRoute, READ_METHODS } from '../../http/routes.js';
import type { Services } from '../../services.js';

/** The public keys our tokens are signed with, for anyone to verify them. */
export const jwksRoute = (services: Services): HttpRoute => ({
  paths: ['/.well-known/jwks.json'],
  methods: READ_METHODS,
  serve: (_req, res) => sendJson(res, 200, services.keys.jwks(), { 'cache-control': 'public, max-age=300' }),
});
