import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { restCompatRoute } from '../rest-compat/routes.js';
import type { Config } from './config.js';
import { consoleRoute } from './console/console.js';
import { GraphqlEnvelope } from './graphql/envelope.js';
import { graphqlRoute } from './graphql/graphql.http.js';
import { listenStarting, serveRoutes } from './http/server.js';
import { routeTable } from './http/routes.js';
import { controlRoute } from './modules/control/control.http.js';
import { ingestRoute } from './modules/ingest/ingest.http.js';
import { oidcRoute } from './modules/users/oidc.http.js';
import { jwksRoute } from './modules/oauth/jwks.http.js';
import { startOperationsEndpoints } from './modules/operations/operations.http.js';
import type { FlowEngine } from './flowstore/index.js';
import { type Database, openDatabase } from './infra/database.js';
import { SecretsKey } from './infra/secrets-key.js';
import { sealLegacySecrets } from './auth/sealed-secrets.js';
import { SealedSecretStore } from './auth/sealed-secrets.store.js';
import { openFlowEngine, prepareFlowEngine } from './infra/flow-engine.js';
import { type Logger, createLogger } from './infra/logger.js';
import { type Services, createServices } from './services.js';

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
  // The port first, answering 503 until the service is ready (http/server.ts).
  const server = await listenStarting(config.port, config.host);
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
  services.audit.start();
  await services.tenantDeletions.start();

  const envelope = new GraphqlEnvelope({ prisma: db.prisma, services, trustedProxies: config.trustedProxies, logger });
  const operations = await startOperationsEndpoints(config, { db, flows, services, logger });
  const graphql = await graphqlRoute(envelope, { db, services, logger });
  const table = routeTable([
    ...graphql.routes,
    restCompatRoute(envelope, services, logger),
    consoleRoute,
    ingestRoute(services, logger),
    controlRoute(services.control),
    ...operations.routes,
    jwksRoute(services),
    oidcRoute(services, config.trustedProxies, logger),
  ]);
  serveRoutes(server, table, logger);
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
      await graphql.stop();
      await services.automationRunner.stop();
      await services.detection.stop();
      await services.purge.stop();
      await services.tenantDeletions.stop();
      await services.control.stop();
      services.ingest.activity.stop();
      await services.ingest.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Every request has ended: what the audit writer still holds is written before the pool closes.
      await services.audit.stop();
      await db.close();
      services.explore.dataset.stop();
      if (!options.flowEngine) await flows.close();
    },
  };
}
