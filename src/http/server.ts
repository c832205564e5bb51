/**
 * The one http server: listening answers 503 until the service is ready, then every request and
 * upgrade goes through the route table. What every request gets whatever its row: a request id
 * (`x-request-id`), one log line and the HTTP metric when it is answered, a 400 for a target that
 * is no path, a 404 where no row answers.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../errors.js';
import { answerClientError } from '../infra/client-errors.js';
import { observeHttpRequest } from '../infra/http-metrics.js';
import { listen } from '../infra/listen.js';
import type { Logger } from '../infra/logger.js';
import { sendError } from './errors.js';
import type { RouteTable } from './routes.js';

/**
 * The port first: a taken one stops the start in a second, before the engines open (the embedded
 * ones take a while, and write to DATA_DIR). Until `serveRoutes`, requests are answered 503.
 */
export async function listenStarting(port: number, host: string): Promise<Server> {
  const server = createServer(answerStarting);
  server.on('upgrade', refuseUpgradeWhileStarting);
  server.on('clientError', answerClientError);
  await listen(server, port, host);
  return server;
}

/** From now on `server` answers through `table`. */
export function serveRoutes(server: Server, table: RouteTable, logger: Logger): void {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const requestId = (req.headers['x-request-id'] as string | undefined)?.slice(0, 100) || randomUUID();
    res.setHeader('x-request-id', requestId);
    const url = requestUrl(req);
    const route = url && table.request(url.pathname, req.method);
    res.on('finish', () => {
      const ms = performance.now() - started;
      observeHttpRequest(req, url?.pathname, res.statusCode, ms / 1000);
      const log = route?.requestLog === 'debug' ? logger.debug : logger.info;
      log('http.request', { requestId, method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 });
    });
    if (!url) return sendError(res, new DomainError(400, 'bad_request', 'The request target is not a valid path'));
    if (route) return void route.serve!(req, res, url, requestId);
    sendError(res, new DomainError(404, 'not_found', `No such endpoint: ${req.method} ${url.pathname}`));
  };
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = requestUrl(req)?.pathname;
    const route = pathname === undefined ? undefined : table.upgrade(pathname);
    if (route) route.upgrade!(req, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  };
  server.off('request', answerStarting).on('request', handle);
  server.off('upgrade', refuseUpgradeWhileStarting).on('upgrade', upgrade);
}

function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  sendError(res, new DomainError(503, 'starting', 'The service is starting; try again in a moment', { headers: { 'retry-after': '1' } }));
}

function refuseUpgradeWhileStarting(_req: IncomingMessage, socket: Duplex): void {
  socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}

/**
 * The request's target as a URL, or undefined when it is none (`//[`, `//a:b@`): such a target
 * would otherwise throw inside the server's callback and take the process down.
 */
function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}
