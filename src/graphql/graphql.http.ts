/**
 * `/graphql`: graphql-yoga for requests, graphql-ws for WebSocket upgrades on the same path. Both
 * go through the envelope (envelope.ts) for context, NUL, limits and error masking.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { CSRF_HEADER, type Context } from '../context.js';
import { MAX_BODY_BYTES } from '../http/kit.js';
import type { HttpRoute } from '../http/routes.js';
import type { Database } from '../infra/database.js';
import type { Logger } from '../infra/logger.js';
import type { Services } from '../services.js';
import type { GraphqlEnvelope } from './envelope.js';
import { graphiqlAssetsRoute, serveGraphiqlPage, wantsGraphiql } from './graphiql.js';
import { countOperation, outcomeOf } from './operation-metrics.js';
import { SocketSessions } from './socket-sessions.js';

export const GRAPHQL_PATH = '/graphql';

export async function graphqlRoute(
  envelope: GraphqlEnvelope,
  app: { db: Database; services: Services; logger: Logger },
): Promise<{ routes: HttpRoute[]; stop(): Promise<void> }> {
  const yoga = createYoga<{ req: IncomingMessage; res: ServerResponse; requestId: string }>({
    schema: envelope.schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    // Yoga's own GraphiQL loads from a CDN; ours (graphiql.ts) is served before yoga sees the request.
    graphiql: false,
    logging: false,
    plugins: envelope.yogaPlugins(),
    maxRequestBodySize: false, // limitRequestBodies holds bodies to MAX_BODY_BYTES
    context: ({ request, requestId, req, res }) => {
      const csrfSafe = request.headers.has(CSRF_HEADER);
      return envelope.createRequestContext(request.headers.get('authorization'), requestId, req, {
        csrfSafe,
        http: { userAgent: request.headers.get('user-agent'), csrfSafe, setCookie: (header) => void res.appendHeader('set-cookie', header) },
      });
    },
    maskedErrors: { maskError: envelope.maskError },
  });

  // A message over the body limit closes its socket (1009); a document over the other limits is
  // refused in an error message (document-limits.ts).
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES });
  const socketSessions = new SocketSessions(({ authorization, sessionCookie }) =>
    authorization
      ? app.services.auth.authenticate(authorization)
      : sessionCookie
        ? app.services.signIn.authenticate(sessionCookie)
        : Promise.resolve(undefined),
  );
  const recheck = (kind: 'client' | 'user') => (id: string) =>
    socketSessions.actorChanged({ kind, id }).catch((error) => app.logger.error('graphql.ws_client_check_failed', { kind, id, error }));
  const stopWatchingClients = await app.db.listen('auth_client_changed', recheck('client'));
  const stopWatchingPeople = await app.db.listen('user_sessions_changed', recheck('user'));
  const presented = (errors: readonly Error[]) => errors.map((error) => envelope.maskError(error).toJSON());
  const ws = useServer(
    {
      schema: envelope.schema,
      onSubscribe: (ctx, _id, payload) => envelope.subscription(payload, authorizationOf(ctx.connectionParams), ctx.extra.request),
      onOperation: async (_ctx, _id, _payload, args, result) => {
        const settled = await result;
        countOperation(args.document, args.operationName, 'ws', outcomeOf(settled));
        envelope.recordMutations(args, settled);
      },
      onConnect: async (ctx) =>
        void (await socketSessions.opened(ctx.extra.socket, {
          authorization: authorizationOf(ctx.connectionParams),
          sessionCookie: envelope.socketCookie(ctx.extra.request),
        })),
      onNext: (_ctx, _id, _payload, args, result) => {
        envelope.nextEvent(args.contextValue as Context);
        return result.errors ? { ...result, errors: presented(result.errors) } : undefined;
      },
      onError: (_ctx, _id, _payload, errors) => presented(errors),
    },
    wss,
  );
  // ws closes a socket itself when its client breaks the protocol or sends a message over
  // maxPayload (1009); graphql-ws would print each such error with a stack trace, as its own bug.
  wss.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: NodeJS.ErrnoException) => app.logger.info('graphql.ws_client_error', { code: error.code, message: error.message }));
  });

  return {
    routes: [
      {
        paths: [GRAPHQL_PATH],
        serve: (req, res, _url, requestId) => (wantsGraphiql(req) ? serveGraphiqlPage(req, res) : void yoga(req, res, { req, res, requestId })),
        upgrade: (req, socket, head) => wss.handleUpgrade(req, socket, head, (client) => wss.emit('connection', client, req)),
      },
      graphiqlAssetsRoute,
    ],
    async stop() {
      await stopWatchingClients();
      await stopWatchingPeople();
      await ws.dispose();
      wss.close();
    },
  };
}

/** The `authorization` a graphql-ws client sends in its connection parameters. */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | null {
  return typeof params?.authorization === 'string' ? params.authorization : null;
}
