import type { IncomingMessage } from 'node:http';
import { boundedLabel, httpRequestDuration } from './metrics.js';

/** The route template a router matched for a request (`/rest/nodes/:id`): never the path with its ids. */
const templates = new WeakMap<IncomingMessage, string>();
const routeLabel = boundedLabel();

/** Names the route template that answers `req` (rest-compat's router does, for every row it matches). */
export function labelRoute(req: IncomingMessage, template: string): void {
  templates.set(req, template);
}

/**
 * Counts an answered request under its route: the template a router named, else `unmatched` for
 * a 404 or a target that is no path (`path` undefined), else the path itself, which outside the
 * routers is one of the server's fixed paths (src/http/routes.ts). The label is capped all the same (metrics.ts).
 */
export function observeHttpRequest(req: IncomingMessage, path: string | undefined, status: number, seconds: number): void {
  const route = templates.get(req) ?? (status === 404 || path === undefined ? 'unmatched' : path);
  httpRequestDuration.observe({ method: req.method ?? 'unknown', route: routeLabel(route), status: String(status) }, seconds);
}
