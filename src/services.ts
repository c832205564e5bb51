import { AuthService } from './auth/auth.service.js';
import { ClientCredentialCache, ClientStore } from './auth/clients.store.js';
import { ClientService } from './auth/clients.service.js';
import { KeyRing } from './auth/keyring.js';
import { SigningKeyStore } from './auth/signing-keys.store.js';
import { TokenService } from './auth/tokens.js';
import type { ClickHouseServer, Config } from './config.js';
import { type FlowEngine, type FlowsRemovalProgress, advanceFlowsRemoval } from './flowstore/index.js';
import type { Database } from './infra/database.js';
import { PeriodicJob } from './infra/jobs.js';
import type { SecretsKey } from './infra/secrets-key.js';
import { PublicLinks } from './infra/links.js';
import type { Logger } from './infra/logger.js';
import { PubSub } from './infra/pubsub.js';
import { RateLimiter } from './infra/rate-limits.js';
import { InProcessRateLimitCounters, RateLimitStore } from './infra/rate-limits.store.js';
import { CollectorService } from './modules/collector/collector.service.js';
import { CollectorStore } from './modules/collector/collector.store.js';
import { DeploymentService } from './modules/deployments/deployments.service.js';
import { DeviceAuthService } from './modules/device-auth/device-auth.service.js';
import { DeviceAuthorizationStore } from './modules/device-auth/device-auth.store.js';
import { type EventRecorder, EventService } from './modules/events/events.service.js';
import { EventStore } from './modules/events/events.store.js';
import { Actions } from './modules/automation/actions.js';
import { AutomationService } from './modules/automation/automation.service.js';
import { AutomationStore } from './modules/automation/automation.store.js';
import { AutomationRunner } from './modules/automation/runner.js';
import { WebhookSecrets } from './modules/automation/webhook-secrets.js';
import { NodeService } from './modules/nodes/nodes.service.js';
import { NodeStore } from './modules/nodes/nodes.store.js';
import { NodeCommandService } from './modules/control/commands.service.js';
import { ControlStore } from './modules/control/control.store.js';
import { ControlHub } from './modules/control/hub.js';
import { IngestService } from './modules/ingest/ingest.service.js';
import { IngestClaimsStore } from './modules/ingest/ingest-claims.store.js';
import { IngestNodeStore } from './modules/ingest/ingest-nodes.store.js';
import { IngestWorkers } from './modules/ingest/ingest-workers.js';
import { FlowInsertQueue } from './flowstore/insert-queue.js';
import { IngestActivity } from './modules/ingest/ingest.activity.js';
import { ExploreService } from './modules/explore/explore.service.js';
import { OwnNetworkService } from './modules/networks/networks.service.js';
import { OwnNetworkStore } from './modules/networks/networks.store.js';
import { DetectionPostgresStore } from './modules/detection/detection-postgres.store.js';
import { DetectionStore } from './modules/detection/detection.store.js';
import type { Detector } from './modules/detection/episode.js';
import { type DetectionOptions, DetectionService } from './modules/detection/runner.js';
import { InvestigationService } from './modules/investigations/investigations.service.js';
import { InvestigationStore } from './modules/investigations/investigations.store.js';
import { TriageService } from './modules/investigations/triage.service.js';
import { TriageStore } from './modules/investigations/triage.store.js';
import { ActorNames } from './modules/users/actor-names.js';
import { ActorNameStore } from './modules/users/actor-names.store.js';
import { type DictionarySource, IpOrgDataset } from './flowstore/index.js';
import { ProfileService } from './modules/profiles/profiles.service.js';
import { ProfileStore } from './modules/profiles/profiles.store.js';
import { SearchService } from './modules/search/search.service.js';
import { TenantDeletionHooks } from './tenancy/deletion-hooks.js';
import { TenantDeletionWorker } from './tenancy/deletion-worker.js';
import { TenantDeletionStore } from './tenancy/tenant-deletions.store.js';
import { TenantDirectory } from './tenancy/tenant-directory.js';
import { tenantScopeLoader } from './tenancy/tenant-scope.js';
import { TenancyService } from './tenancy/tenancy.service.js';
import { TenantService } from './tenancy/tenants.service.js';
import { TenantStore } from './tenancy/tenants.store.js';
import { AuditService } from './modules/audit/audit.service.js';
import { AuditStore } from './modules/audit/audit.store.js';
import { AuditWriter } from './modules/audit/audit-writer.js';
import { OidcService } from './modules/users/oidc.service.js';
import { OidcStore } from './modules/users/oidc.store.js';
import { SecondFactorService } from './modules/users/second-factor.service.js';
import { SignInGuard } from './modules/users/sign-in-guard.js';
import { SignInService } from './modules/users/sign-in.service.js';
import { UserSessionStore } from './modules/users/user-sessions.store.js';
import { UserService } from './modules/users/users.service.js';
import { UserStore } from './modules/users/users.store.js';
import { ApiClientService } from './modules/api-clients/api-clients.service.js';
import { ApiClientStore } from './modules/api-clients/api-clients.store.js';

export interface Services {
  links: PublicLinks;
  keys: KeyRing;
  auth: AuthService;
  clients: ClientService;
  tenants: TenantService;
  tenancy: TenancyService;
  deployments: DeploymentService;
  pubsub: PubSub;
  deviceAuth: DeviceAuthService;
  collector: CollectorService;
  nodes: NodeService;
  profiles: ProfileService;
  control: ControlHub;
  ingest: IngestService;
  explore: ExploreService;
  networks: OwnNetworkService;
  search: SearchService;
  nodeCommands: NodeCommandService;
  deletionHooks: TenantDeletionHooks;
  /** Started and stopped by the server (buildApp), not by the admin CLI. */
  tenantDeletions: TenantDeletionWorker;
  logger: Logger;
  events: EventService;
  automation: AutomationService;
  /** Started and stopped by the server (buildApp), not by the admin CLI. */
  automationRunner: AutomationRunner;
  investigations: InvestigationService;
  triage: TriageService;
  /** Names of people and API clients who acted, per request (triage, audit). */
  actorNames: ActorNames;
  /** Its schedule is started and stopped by the server (buildApp), not by the admin CLI. */
  detection: DetectionService;
  /** Deletes expired device authorizations, ended rate-limit windows and audit entries past retention; started by the server (buildApp). */
  purge: PeriodicJob;
  /** The audit log; its batching writer is started and stopped by the server (buildApp). */
  audit: AuditService;
  users: UserService;
  signIn: SignInService;
  secondFactor: SecondFactorService;
  oidc: OidcService;
  /** API clients as the admins of a tree manage them (GraphQL); the admin CLI uses `clients`. */
  apiClients: ApiClientService;
}

/** How often a server looks for tenant deletions nobody woke it for, and polls one in progress (docs/architecture.md). */
const DELETION_SWEEP_MS = 30_000;
const DELETION_POLL_MS = 500;

/** Wires the domain services over one database; shared by the server and the admin CLI. */
export async function createServices(config: Config, db: Database, flows: FlowEngine, logger: Logger, secretsKey: SecretsKey): Promise<Services> {
  const { prisma } = db;
  const keys = new KeyRing(new SigningKeyStore(prisma), config.tokenTtlSeconds, secretsKey);
  await keys.load();
  const clientStore = new ClientStore(prisma);
  const credentials = new ClientCredentialCache(clientStore);
  await db.listen('auth_client_changed', (clientId) => credentials.forget(clientId));
  await db.listen('auth_keys_changed', () => {
    keys.load().catch((error) => logger.error('auth.key_reload_failed', { error }));
  });
  const deletionHooks = new TenantDeletionHooks();
  deletionHooks.register('flows', (customerId, last) => advanceFlowsRemoval(flows, customerId, last as FlowsRemovalProgress | undefined));
  const deletionStore = new TenantDeletionStore(prisma);
  const tenantStore = new TenantStore(prisma);
  const directory = new TenantDirectory(tenantStore);
  await db.listen('tenant_changed', (payload) => directory.handleNotification(payload));
  const tenants = new TenantService(tenantStore, deletionStore, directory);
  const clients = new ClientService(clientStore, tenantStore);
  const links = new PublicLinks(config.publicBaseUrl);
  const pubsub = new PubSub(db, logger);
  // Embedded PGlite is one process by construction; a PostgreSQL server may be shared by several.
  const counters = config.databaseUrl ? new RateLimitStore(db.pool) : new InProcessRateLimitCounters();
  const rateLimits = new RateLimiter(counters, config.rateLimits);
  const auth = new AuthService(
    new TokenService(keys, config.tokenTtlSeconds),
    credentials,
    tenantScopeLoader(directory),
    async (id) => Boolean(await directory.get(id)),
    rateLimits,
  );
  const events = new EventService(new EventStore(prisma), pubsub, logger);
  const nodeStore = new NodeStore(prisma);
  const profileStore = new ProfileStore(prisma);
  const nodes = new NodeService(nodeStore, profileStore, clients, tenants, pubsub, events);
  const control = new ControlHub(db, new ControlStore(prisma, db.pool), pubsub, auth, nodes, logger, events);
  await control.start();
  const collector = new CollectorService(new CollectorStore(prisma), links, config, logger, () => keys.signingSecrets());
  const nodeCommands = new NodeCommandService(nodes, nodeStore, control, collector, config.commandTimeoutScale);
  const automationStore = new AutomationStore(prisma, db.pool);
  const automation = new AutomationService(automationStore, new WebhookSecrets(secretsKey), {
    allowPrivateTargets: config.automationAllowPrivateTargets,
  });
  events.react(automation.reaction);
  const automationActions = new Actions({
    secretOf: automation.secretOf,
    nodeCommands,
    loadScope: tenantScopeLoader(directory),
    allowPrivateTargets: config.automationAllowPrivateTargets,
    webhookTimeoutMs: 10_000,
  });
  const deviceAuth = new DeviceAuthService(
    new DeviceAuthorizationStore(prisma),
    pubsub,
    links,
    logger,
    rateLimits,
    {
      lifetimeSeconds: config.deviceCodeTtlSeconds,
      pollIntervalSeconds: config.devicePollIntervalSeconds,
    },
    events,
  );
  const networks = new OwnNetworkService(new OwnNetworkStore(prisma));
  const search = new SearchService(flows, logger);
  const auditStore = new AuditStore(prisma, db.pool);
  const audit = new AuditService(
    auditStore,
    new AuditWriter((entries) => auditStore.insert(entries), logger),
    (id) => auth.tenantOfClient(id),
    config.auditRetentionDays,
    logger,
  );
  const userStore = new UserStore(prisma);
  const userSessions = new UserSessionStore(prisma);
  const signInGuard = new SignInGuard(userStore, events, config.signIn);
  const secondFactor = new SecondFactorService(userStore, secretsKey, signInGuard);
  const users = new UserService(userStore, userSessions, links, signInGuard, tenantScopeLoader(directory));
  const actorNames = new ActorNames(new ActorNameStore(prisma));
  const signIn = new SignInService(
    userStore,
    userSessions,
    secondFactor,
    rateLimits,
    signInGuard,
    tenantScopeLoader(directory),
    async (id) => Boolean(await directory.get(id)),
    config.signIn,
  );
  const oidcStore = new OidcStore(prisma);
  const automationRunner = new AutomationRunner(automationStore, automationActions, events, pubsub, logger, {
    retryBaseMs: config.automationRetryBaseMs,
  });
  return {
    links,
    keys,
    auth,
    clients,
    tenants,
    tenancy: new TenancyService(directory),
    deployments: new DeploymentService(tenants),
    pubsub,
    deviceAuth,
    purge: new PeriodicJob(
      'purge',
      config.purgeIntervalSeconds * 1000,
      async () => {
        const counters = await rateLimits.purge();
        const devices = await deviceAuth.purgeExpired();
        const auditEntries = await audit.purge();
        const sessions = await signIn.purgeEnded();
        const signOns = await oidcStore.purgeLogins();
        if (counters || devices || auditEntries || sessions || signOns)
          logger.info('purge.done', { rateLimitCounters: counters, deviceAuthorizations: devices, auditEntries, userSessions: sessions, oidcLogins: signOns });
      },
      logger,
    ),
    collector,
    nodes,
    profiles: new ProfileService(profileStore),
    control,
    ingest: new IngestService(
      new IngestNodeStore(prisma),
      flows,
      new FlowInsertQueue(flows, { claims: new IngestClaimsStore(prisma), maxQueuedRows: config.ingestQueueFlows }),
      new IngestWorkers(config.ingestWorkers),
      logger,
      new IngestActivity(logger, config.ingestLogIntervalSeconds * 1000),
    ),
    explore: new ExploreService(flows, startIpOrgDataset(config, flows, logger), (ids) => networks.rangesOf(ids)),
    networks,
    search,
    nodeCommands,
    deletionHooks,
    tenantDeletions: new TenantDeletionWorker(db, deletionStore, deletionHooks, logger, {
      intervalMs: DELETION_SWEEP_MS,
      pollMs: DELETION_POLL_MS,
      crossProcessLock: config.databaseUrl !== undefined,
    }),
    logger,
    events,
    automation,
    automationRunner,
    audit,
    investigations: new InvestigationService(new InvestigationStore(prisma), search),
    triage: new TriageService(
      new TriageStore(prisma),
      new InvestigationStore(prisma),
      events,
      (userId, customerId) => users.mayTake(userId, 'investigations.triage', customerId),
      actorNames,
    ),
    actorNames,
    detection: createDetectionService(
      db,
      flows,
      logger,
      {
        intervalMs: config.detectionIntervalSeconds * 1000,
        windowMs: config.detectionWindowMinutes * 60_000,
        crossProcessLock: config.databaseUrl !== undefined,
      },
      { networks, events },
    ),
    users,
    signIn,
    secondFactor,
    oidc: new OidcService(oidcStore, userStore, signIn, secretsKey, links, rateLimits, config.oidcAllowPrivateIssuers),
    apiClients: new ApiClientService(new ApiClientStore(prisma), (clientId) => credentials.forget(clientId)),
  };
}

/**
 * Detection over one database and flow store: the server's, and the one `detect run` starts when
 * no server answers. Without `networks` it reads the tenants' own networks through a store of its own.
 */
export function createDetectionService(
  db: Database,
  flows: FlowEngine,
  logger: Logger,
  options: DetectionOptions,
  wiring: { networks?: OwnNetworkService; events?: EventRecorder; detectors?: readonly Detector[] } = {},
): DetectionService {
  const networks = wiring.networks ?? new OwnNetworkService(new OwnNetworkStore(db.prisma));
  const flowStore = new DetectionStore(flows, (ids) => networks.rangesOf(ids));
  return new DetectionService(
    db,
    new DetectionPostgresStore(db.prisma),
    flowStore,
    new InvestigationStore(db.prisma),
    new TriageStore(db.prisma),
    logger,
    options,
    wiring.events,
    wiring.detectors,
  );
}

/** How the dictionary reads its table on a ClickHouse server: as the service does (chDB needs nothing). */
function dictionarySource(server: ClickHouseServer | undefined): DictionarySource {
  if (!server) return {};
  return { database: server.database, ...(server.user ? { user: server.user } : {}), ...(server.password ? { password: server.password.reveal() } : {}) };
}

/** IP → organization enrichment for explore, loaded in the background (docs/explore.md). */
function startIpOrgDataset(config: Config, flows: FlowEngine, logger: Logger): IpOrgDataset {
  const dataset = new IpOrgDataset(flows, {
    mode: config.ipOrgDataset,
    source: dictionarySource(config.clickhouse),
    log: (event, fields) => (event.endsWith('failed') ? logger.error(event, fields) : logger.info(event, fields)),
  });
  dataset.start();
  return dataset;
}
