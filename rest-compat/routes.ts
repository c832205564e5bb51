import type { Route } from './route.js';
import { deploymentRoutes } from './routes/deployments.js';
import { oauthRoutes } from './routes/oauth.js';

/**
 * Every documented /rest and /search path this server answers, one file per family under
 * routes/. Adding a path is adding a row there and an operation under schema/operations.
 */
export const routes: Route[] = [...oauthRoutes, ...deploymentRoutes];
