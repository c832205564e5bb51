import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { DomainError } from '../src/errors.js';
import { labelRoute } from '../src/infra/http-metrics.js';
import type { Logger } from '../src/infra/logger.js';
import type { Services } from '../src/services.js';
import { flatError, internalError, nestedError, sendError, sendRendered } from '../src/http/errors.js';
import { parseBody, readBody, sendJson } from '../src/http/kit.js';
import { errorOf } from './errors.js';
import { RawResponse, type RestRequest, type Route, type ServedRoute } from './route.js';
import { variableChecker } from './variables.js';

export type ExecuteOperation = (
  document: DocumentNode,
  variables: Record<string, unknown>,
  req: IncomingMessage,
  requestId: string,
) => Promise<ExecutionResult>;

interface CompiledRoute {
  route: Route | ServedRoute;
  segments: string[];
}

/**
 * Serves the documented REST paths by running their GraphQL operations (`execute`: the GraphQL
 * envelope's `run`); a path under /rest or /search that no row takes is a 404 in the flat body.
 */
export function createRestRouter(options: {
  routes: Route[];
  /** The schema the operations run on: a request's values are checked against their variables' types first. */
  schema: GraphQLSchema;
  execute: ExecuteOperation;
  logger: Logger;
  /** Rows answered by a service directly (see ServedRoute), with the services they call. */
  served?: { routes: ServedRoute[]; services: Services };
}) {
  const compiled: CompiledRoute[] = [...options.routes, ...(options.served?.routes ?? [])].map((route) => ({
    route,
    segments: route.path.split('/'),
  }));
  const variableProblem = variableChecker(options.schema);

  return async function handle(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
    const segments = url.pathname.replace(/(.)\/+$/, '$1').split('/');
    const candidates = compiled
      .map((c) => ({ c, params: match(c.segments, segments) }))
      .filter((m): m is { c: CompiledRoute; params: Record<string, string> } => m.params !== undefined);
    // HEAD is answered as GET (RFC 9110 9.3.2): node:http leaves the body out.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const found = candidates.find((m) => m.c.route.method === method);
    if (candidates.length) labelRoute(req, (found ?? candidates[0]!).c.route.path);
    if (!found) {
      if (candidates.length) {
        const allow = [...new Set(candidates.map((m) => m.c.route.method))].join(', ');
        const render = renderOf(candidates[0]!.c.route);
        return sendRendered(res, render(new DomainError(405, 'method_not_allowed', `Use ${allow} on ${url.pathname}`)), { allow });
      }
      return sendError(res, new DomainError(404, 'not_found', `No such endpoint: ${req.method} ${url.pathname}`));
    }
    const { route } = found.c;
    const renderError = renderOf(route);
    let request: RestRequest | undefined;
    const render = (error: DomainError) => {
      const headers = request && 'errorHeaders' in route ? route.errorHeaders?.(request, error) : undefined;
      const rendered = renderError(error);
      return headers ? { ...rendered, headers: { ...rendered.headers, ...headers } } : rendered;
    };
    try {
      const body = parseBody(await readBody(req), req.headers['content-type'], 'form' in route && route.form === true);
      request = { params: found.params, query: url.searchParams, body, headers: req.headers };
      if ('serve' in route) return sendRaw(res, await route.serve(request, options.served!.services));
      const variables = route.variables(request) as Record<string, unknown>;
      const problem = variableProblem(route.operation, variables);
      if (problem) return sendRendered(res, render(problem));
      const result = await options.execute(route.operation, variables, req, requestId);
      const error = errorOf(result);
      if (error instanceof DomainError) return sendRendered(res, render(error));
      if (error) throw error;
      const rendered = route.render(result.data);
      if (rendered instanceof RawResponse) return sendRaw(res, rendered);
      sendJson(res, route.status ?? 200, rendered);
    } catch (error) {
      if (error instanceof DomainError) return sendRendered(res, render(error));
      options.logger.error('rest.unhandled_error', { requestId, path: url.pathname, error });
      sendRendered(res, render(internalError(requestId)));
    }
  };
}

/** A path's error envelope: the search paths' nested one, the flat one elsewhere. */
const renderOf = (route: Route | ServedRoute) => ('errors' in route && route.errors === 'nested' ? nestedError : flatError);

function sendRaw(res: ServerResponse, raw: RawResponse): void {
  res.writeHead(raw.status, { 'content-length': Buffer.byteLength(raw.body), ...raw.headers });
  res.end(raw.body);
}

/** Matches `/a/:id/b` patterns; a `:param` takes one percent-decoded segment. */
function match(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith(':')) {
      if (!actual[i]) return undefined;
      try {
        params[p.slice(1)] = decodeURIComponent(actual[i]);
      } catch {
        return undefined;
      }
      // No id or name may hold a NUL (src/graphql/nul-text.ts): such a segment names nothing, a 404.
      if (params[p.slice(1)]!.includes('\u0000')) return undefined;
    } else if (p !== actual[i]) return undefined;
  }
  return params;
}
