import type { GraphqlEnvelope } from '../src/graphql/envelope.js';
import { schema } from '../src/graphql/schema.js';
import type { HttpRoute } from '../src/http/routes.js';
import type { Logger } from '../src/infra/logger.js';
import type { Services } from '../src/services.js';
import { openApiDocument } from './openapi/document.js';
import { apiDocsRoutes } from './openapi/served.js';
import type { Route, ServedRoute } from './route.js';
import { createRestRouter } from './router.js';
import { collectorRoutes, collectorServedRoutes } from './routes/collector.js';
import { deploymentRoutes } from './routes/deployments.js';
import { deviceAuthRoutes } from './routes/device-auth.js';
import { eventRoutes } from './routes/events.js';
import { automationRoutes } from './routes/automation.js';
import { nodeRoutes } from './routes/nodes.js';
import { oauthRoutes } from './routes/oauth.js';
import { profileRoutes } from './routes/profiles.js';
import { exploreRoutes } from './routes/explore.js';
import { searchRoutes } from './routes/search.js';
import { investigationRoutes } from './routes/investigations.js';

/**
 * Every documented /rest and /search path this server answers, one file per family under
 * routes/. Adding a path is adding a row there and an operation under schema/operations.
 */
export const routes: Route[] = [
  ...oauthRoutes,
  ...deviceAuthRoutes,
  ...deploymentRoutes,
  ...nodeRoutes,
  ...profileRoutes,
  ...collectorRoutes,
  ...searchRoutes,
  ...exploreRoutes,
  ...eventRoutes,
  ...automationRoutes,
  ...investigationRoutes,
];

/** Paths answered with bytes straight from a service (see ServedRoute), and the document of them all. */
export const servedRoutes: ServedRoute[] = [...collectorServedRoutes, ...apiDocsRoutes(() => openApiDocument({ schema, routes, served: servedRoutes }))];

/** The server's row for /rest and /search: every path above, its operation run through the envelope. */
export const restCompatRoute = (envelope: GraphqlEnvelope, services: Services, logger: Logger): HttpRoute => ({
  paths: ['/rest/*', '/search/*'],
  serve: createRestRouter({ routes, schema, served: { routes: servedRoutes, services }, logger, execute: envelope.run }),
});
