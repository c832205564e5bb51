import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type DocumentNode, GraphQLError, specifiedRules, validate } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { createRestRouter } from '../rest-compat/router.js';
import { routes, servedRoutes } from '../rest-compat/routes.js';
import { MAX_BODY_BYTES, sendJson } from '../rest-compat/http.js';
import type { Config } from './config.js';
import { isConsolePath, serveConsole } from './console/console.js';
import { type Context, RequestAuth } from './context.js';
import { compiledOperations } from './graphql/compiled-operations.js';
import { limitDocuments, parseWithinLimits } from './graphql/document-limits.js';
import { presentError } from './graphql/error-codes.js';
import { Loaders } from './graphql/loaders.js';
import { noNulTextLiterals, nulTextAt, nulTextError, refuseNulText } from './graphql/nul-text.js';
import { rawJsonResults } from './graphql/raw-json-results.js';
import { limitRequestBodies } from './graphql/request-bodies.js';
import { countOperation, operationMetrics, outcomeOf } from './graphql/operation-metrics.js';
import { schema } from './graphql/schema.js';
import { SocketSessions } from './graphql/socket-sessions.js';
import { CONTROL_PATH } from './modules/control/hub.js';
import { INGEST_PATH, serveIngest } from './modules/ingest/ingest.http.js';
import { startOperationsEndpoints } from './modules/operations/operations.http.js';
import type { FlowEngine } from './flowstore/index.js';
import { type Database, openDatabase } from './infra/database.js';
import { SecretsKey } from './infra/secrets-key.js';
import { sealLegacySecrets } from './auth/sealed-secrets.js';
import { SealedSecretStore } from './auth/sealed-secrets.store.js';
import { openFlowEngine, prepareFlowEngine } from './infra/flow-engine.js';
import { clientAddress } from './infra/client-address.js';
import { observeHttpRequest } from './infra/http-metrics.js';
import { type Logger, createLogger } from './infra/logger.js';
import { answerClientError } from './infra/client-errors.js';
import { listen } from './infra/listen.js';
import { type Services, createServices } from './services.js';

export const SERVICE_NAME = 'breach-detection-api';
export const SERVICE_VERSION = '0.1.0';

export interface App {
  url: string;
  server: Server;
  db: Database;
  flows: FlowEngine;
  services: Services;
  logger: Logger;
  /** Where /metrics is served when METRICS_PORT gives it a port of its own. */
  metricsUrl: string | undefined;
  stop(): Promise<void>;
}

/** Everything the service is, on one http server: GraphQL (+ graphql-ws), REST paths, health. */
export interface BuildOptions {
  /** A ClickHouse engine shared with other app instances (tests); the app does not close it. */
  flowEngine?: FlowEngine;
}

export async function buildApp(config: Config, logger = createLogger(config.logLevel), options: BuildOptions = {}): Promise<App> {
  // The port first: a taken one stops the start in a second, before the engines open (the
  // embedded ones take a while, and write to DATA_DIR). Until the service is ready, requests on
  // it are answered 503.
  const server = createServer(answerStarting);
  server.on('upgrade', refuseUpgradeWhileStarting);
  server.on('clientError', answerClientError);
  await listen(server, config.port, config.host);
  try {
    return await serve(server, config, logger, options);
  } catch (error) {
    server.closeAllConnections();
    server.close();
    throw error;
  }
}

async function serve(server: Server, config: Config, logger: Logger, options: BuildOptions): Promise<App> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger, role: 'server' });
  const flows = options.flowEngine ?? (await openFlowEngine(config, logger));
  if (options.flowEngine) await prepareFlowEngine(flows, config, logger);
  let services: Services;
  try {
    // Generated on a first start when neither SECRETS_KEY nor the key file exists (docs/secrets.md).
    const secretsKey = SecretsKey.load(config, { create: true });
    await sealLegacySecrets(new SealedSecretStore(db.pool), secretsKey, logger);
    services = await createServices(config, db, flows, logger, secretsKey);
  } catch (error) {
    // A secrets key that opens nothing stops the start; what it opened is let go (the embedded
    // directory above all), for whoever starts again in this process.
    await db.close();
    if (!options.flowEngine) await flows.close();
    throw error;
  }
  await services.automationRunner.start();
  await services.detection.start();
  services.purge.start();
  await services.tenantDeletions.start();

  const reportGraphqlBug = (error: unknown) => logger.error('graphql.unhandled_error', { error });
  const contextFor = (authorization: string | null, requestId: string, req: IncomingMessage): Context => ({
    requestId,
    origin: { address: clientAddress(req, config.trustedProxies) },
    prisma: db.prisma,
    services,
    auth: new RequestAuth(authorization, (header) => services.auth.authenticate(header)),
    loaders: new Loaders(db.prisma),
  });

  const yoga = createYoga<{ req: IncomingMessage; res: ServerResponse; requestId: string }>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    plugins: [limitRequestBodies(), refuseNulText(), rawJsonResults(), limitDocuments(), operationMetrics()],
    maxRequestBodySize: false, // limitRequestBodies holds bodies to MAX_BODY_BYTES
    context: ({ request, requestId, req }) => contextFor(request.headers.get('authorization'), requestId, req),
    maskedErrors: { maskError: (error) => presentError(error, reportGraphqlBug) },
  });

  const runOperation = compiledOperations(schema);
  const rest = createRestRouter({
    routes,
    schema,
    served: { routes: servedRoutes, services },
    logger,
    execute: (document: DocumentNode, variables, req, requestId) => runOperation(document, variables, contextFor(req.headers.authorization ?? null, requestId, req)),
  });

  const operations = await startOperationsEndpoints(config, { db, flows, services, logger });
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const requestId = (req.headers['x-request-id'] as string | undefined)?.slice(0, 100) || randomUUID();
    res.setHeader('x-request-id', requestId);
    res.on('finish', () => {
      const ms = performance.now() - started;
      observeHttpRequest(req, url?.pathname, res.statusCode, ms / 1000);
      // Collectors' batches are summed up per node instead (ingest.activity.ts).
      const log = url?.pathname === INGEST_PATH ? logger.debug : logger.info;
      log('http.request', { requestId, method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 });
    });
    const url = requestUrl(req);
    if (!url) return sendJson(res, 400, { error: 'bad_request', code: 'bad_request', message: 'The request target is not a valid path' });
    if (url.pathname === '/graphql') return void yoga(req, res, { req, res, requestId });
    if (url.pathname.startsWith('/rest/') || url.pathname.startsWith('/search/')) {
      return void rest(req, res, url, requestId);
    }
    if (isConsolePath(url.pathname)) return serveConsole(req, res, url);
    if (url.pathname === INGEST_PATH) return void serveIngest(req, res, services, logger);
    if (operations.serve(req, res, url.pathname)) return;
    // HEAD as GET: node:http sends its headers and leaves the body out.
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (url.pathname === '/health' && read) {
      return sendJson(res, 200, { status: 'ok', service: SERVICE_NAME, version: SERVICE_VERSION, timestamp: new Date().toISOString() });
    }
    if (url.pathname === '/.well-known/jwks.json' && read) {
      return sendJson(res, 200, services.keys.jwks(), { 'cache-control': 'public, max-age=300' });
    }
    sendJson(res, 404, { error: 'not_found', code: 'not_found', message: `No such endpoint: ${req.method} ${url.pathname}` });
  };

  // Two WebSocket endpoints share the http server: GraphQL subscriptions and the collector channel.
  // A message over the body limit closes its socket (1009); a document over the other limits is
  // refused in an error message (document-limits.ts).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES });
  const socketSessions = new SocketSessions((authorization) => services.auth.authenticate(authorization));
  const stopWatchingClients = await db.listen('auth_client_changed', (clientId) =>
    socketSessions.clientChanged(clientId).catch((error) => logger.error('graphql.ws_client_check_failed', { clientId, error })),
  );
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = requestUrl(req)?.pathname;
    if (path === '/graphql') wss.handleUpgrade(req, socket, head, (client) => wss.emit('connection', client, req));
    else if (path === CONTROL_PATH) void services.control.handleUpgrade(req, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  };
  const ws = useServer(
    {
      schema,
      // graphql-ws closes the socket (4500) on a document that fails to parse: it is parsed here,
      // and refused in an error message like any other invalid one.
      onSubscribe: (ctx, _id, payload) => {
        const nul = nulTextAt(payload.variables);
        if (nul) return [nulTextError(nul)];
        let document: DocumentNode;
        try {
          document = parseWithinLimits(payload.query);
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        const invalid = validate(schema, document, [...specifiedRules, noNulTextLiterals]);
        if (invalid.length > 0) return invalid;
        const contextValue = contextFor(authorizationOf(ctx.connectionParams), randomUUID(), ctx.extra.request);
        return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue };
      },
      onOperation: async (_ctx, _id, _payload, args, result) => countOperation(args.document, args.operationName, 'ws', outcomeOf(await result)),
      onConnect: async (ctx) => void (await socketSessions.opened(ctx.extra.socket, authorizationOf(ctx.connectionParams))),
      onNext: (_ctx, _id, _payload, args, result) => {
        // Every event of a subscription runs with the one context it started with: each event
        // starts from fresh loaders, so none shows a row an earlier event cached.
        (args.contextValue as Context).loaders = new Loaders(db.prisma);
        return result.errors ? { ...result, errors: result.errors.map((error) => presentError(error, reportGraphqlBug).toJSON()) } : undefined;
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => presentError(error, reportGraphqlBug).toJSON()),
    },
    wss,
  );
  // ws closes a socket itself when its client breaks the protocol or sends a message over
  // maxPayload (1009); graphql-ws would print each such error with a stack trace, as its own bug.
  wss.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: NodeJS.ErrnoException) => logger.info('graphql.ws_client_error', { code: error.code, message: error.message }));
  });

  server.off('request', answerStarting).on('request', handle);
  server.off('upgrade', refuseUpgradeWhileStarting).on('upgrade', upgrade);
  const address = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${address.port}`;
  services.links.setListeningUrl(url);

  return {
    url,
    server,
    db,
    flows,
    services,
    logger,
    metricsUrl: operations.metricsUrl,
    async stop() {
      await operations.stop();
      await stopWatchingClients();
      await ws.dispose();
      wss.close();
      await services.automationRunner.stop();
      await services.detection.stop();
      await services.purge.stop();
      await services.tenantDeletions.stop();
      await services.control.stop();
      services.ingest.activity.stop();
      await services.ingest.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
      services.explore.dataset.stop();
      if (!options.flowEngine) await flows.close();
    },
  };
}

function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, 503, { error: 'starting', code: 'starting', message: 'The service is starting; try again in a moment' }, { 'retry-after': '1' });
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

/** The `authorization` a graphql-ws client sends in its connection parameters. */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | null {
  return typeof params?.authorization === 'string' ? params.authorization : null;
}
