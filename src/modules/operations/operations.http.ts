import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Config } from '../../config.js';
import type { FlowEngine } from '../../flowstore/index.js';
import { DomainError } from '../../errors.js';
import { sendError } from '../../http/errors.js';
import { sendJson } from '../../http/kit.js';
import { type HttpRoute, READ_METHODS } from '../../http/routes.js';
import type { Database } from '../../infra/database.js';
import { listen, listeningUrl } from '../../infra/listen.js';
import type { Logger } from '../../infra/logger.js';
import { auditQueueEntries, collectorConnections, ingestQueueFlows, postgresPoolConnections, postgresPoolWaiting, registry } from '../../infra/metrics.js';
import type { Services } from '../../services.js';
import { Readiness } from './readiness.js';

export const METRICS_PATH = '/metrics';
export const READY_PATH = '/ready';
export const HEALTH_PATH = '/health';

const SERVICE_NAME = 'breach-detection-api';
const SERVICE_VERSION = '0.1.0';

/** `/health` (liveness), `/ready` and `/metrics` (docs/operations.md). */
export interface OperationsEndpoints {
  routes: HttpRoute[];
  /** The metrics listener's URL, when METRICS_PORT gives /metrics a port of its own. */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startOperationsEndpoints(
  config: Config,
  app: { db: Database; flows: FlowEngine; services: Services; logger: Logger },
): Promise<OperationsEndpoints> {
  const readiness = new Readiness(app.db.pool, app.flows, app.logger);
  const { token, port, host } = config.metrics;
  const metrics = (req: IncomingMessage, res: ServerResponse) =>
    void serveMetrics(req, res, token).catch((error) => {
      app.logger.error('metrics.failed', { error });
      if (!res.headersSent) sendError(res, new DomainError(500, 'internal_error', 'The metrics could not be collected'));
    });
  let metricsServer: Server | undefined;
  if (port !== undefined) {
    metricsServer = createServer((req, res) => {
      if (req.url?.split('?')[0] === METRICS_PATH) return metrics(req, res);
      notFound(res, `This port serves only ${METRICS_PATH}`);
    });
    await listen(metricsServer, port, host);
  }
  const unwatch = watchApp(app.db, app.services);

  return {
    routes: [
      {
        // Other methods are no path here: the server's 404.
        paths: [HEALTH_PATH],
        methods: READ_METHODS,
        serve: (_req, res) => sendJson(res, 200, { status: 'ok', service: SERVICE_NAME, version: SERVICE_VERSION, timestamp: new Date().toISOString() }),
      },
      {
        paths: [READY_PATH],
        serve: (req, res) => {
          if (!readOnly(req, res)) return;
          void readiness.check().then((report) => sendJson(res, report.status === 'ready' ? 200 : 503, report, { 'cache-control': 'no-store' }));
        },
      },
      {
        paths: [METRICS_PATH],
        serve: (req, res) => {
          if (metricsServer) notFound(res, `${METRICS_PATH} is served on its own port (METRICS_PORT)`);
          else if (token === undefined) notFound(res, `${METRICS_PATH} is off: set METRICS_TOKEN or METRICS_PORT`);
          else metrics(req, res);
        },
      },
    ],
    metricsUrl: metricsServer && listeningUrl(metricsServer, host),
    async stop() {
      unwatch();
      if (!metricsServer) return;
      const server = metricsServer;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The registry in Prometheus' text format, to a caller with the token when there is one. */
async function serveMetrics(req: IncomingMessage, res: ServerResponse, token: string | undefined): Promise<void> {
  if (!readOnly(req, res)) return;
  if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
    const reason = req.headers.authorization ? 'invalid_token' : 'missing_token';
    const refusal = new DomainError(401, 'authentication_error', `${METRICS_PATH} needs the METRICS_TOKEN as a bearer token`, {
      body: { details: { reason } },
      headers: { 'www-authenticate': 'Bearer' },
    });
    return sendError(res, refusal);
  }
  const body = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** Compared as digests, in constant time: neither the token's length nor its bytes show in the timing. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

const notFound = (res: ServerResponse, message: string) => sendError(res, new DomainError(404, 'not_found', message));

/** GET and HEAD (node:http leaves a HEAD's body out); anything else is answered 405 here. */
function readOnly(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  sendError(res, new DomainError(405, 'method_not_allowed', 'Use GET', { headers: { allow: 'GET, HEAD' } }));
  return false;
}

/** Reads this app's queue, channels and pools at each scrape; returns the unwatch. */
function watchApp(db: Database, services: Services): () => void {
  const pools = [
    ['prisma', db.prismaPool],
    ['raw', db.pool],
  ] as const;
  const unwatches = [
    ingestQueueFlows.watch((set) => set({}, services.ingest.queueDepth)),
    auditQueueEntries.watch((set) => set({}, services.audit.pending)),
    collectorConnections.watch((set) => set({}, services.control.heldCount)),
    postgresPoolConnections.watch((set) => {
      for (const [pool, { totalCount, idleCount }] of pools) {
        set({ pool, state: 'active' }, totalCount - idleCount);
        set({ pool, state: 'idle' }, idleCount);
      }
    }),
    postgresPoolWaiting.watch((set) => {
      for (const [pool, { waitingCount }] of pools) set({ pool }, waitingCount);
    }),
  ];
  return () => unwatches.forEach((unwatch) => unwatch());
}
