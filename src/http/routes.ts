/**
 * The server's one route table: every path it answers, over plain HTTP or as a WebSocket upgrade.
 * Each module exports its rows (`/graphql` from src/graphql, `/rest` and `/search` from
 * rest-compat, `/collector/...` from ingest and control, `/console`, `/health`, `/ready`,
 * `/metrics`, jwks); app.ts only lists them. A row owns its answers once matched: its own 405s
 * and error bodies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export interface HttpRoute {
  /** Exact paths, or prefixes written `/rest/*` that take every path under them. */
  paths: readonly string[];
  /** When given, other methods pass this row by (the server's 404), as for the fixed read-only paths. */
  methods?: readonly string[];
  serve?: (req: IncomingMessage, res: ServerResponse, url: URL, requestId: string) => void | Promise<void>;
  /** A WebSocket upgrade to the path (graphql-ws, the collector control channel). */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** The request log's level for the row: `debug` where answers are summed up elsewhere (ingest). */
  requestLog?: 'debug';
}

/** GET and HEAD: node:http answers HEAD as GET with the body left out. */
export const READ_METHODS = ['GET', 'HEAD'] as const;

export interface RouteTable {
  /** The row answering a request for `pathname` with `method`, if any. */
  request(pathname: string, method: string | undefined): HttpRoute | undefined;
  /** The row taking a WebSocket upgrade to `pathname`, if any. */
  upgrade(pathname: string): HttpRoute | undefined;
}

export function routeTable(routes: readonly HttpRoute[]): RouteTable {
  const exact = new Map<string, HttpRoute>();
  const prefixes: [string, HttpRoute][] = [];
  for (const route of routes) {
    for (const path of route.paths) {
      const taken = path.endsWith('/*') ? prefixes.find(([p]) => p === path.slice(0, -1))?.[1] : exact.get(path);
      if (taken) throw new Error(`Two routes for ${path}`);
      if (path.endsWith('/*')) prefixes.push([path.slice(0, -1), route]);
      else exact.set(path, route);
    }
  }
  const find = (pathname: string) => exact.get(pathname) ?? prefixes.find(([prefix]) => pathname.startsWith(prefix))?.[1];
  return {
    request(pathname, method) {
      const route = find(pathname);
      return route?.serve && (!route.methods || route.methods.includes(method ?? '')) ? route : undefined;
    },
    upgrade(pathname) {
      const route = find(pathname);
      return route?.upgrade ? route : undefined;
    },
  };
}
