import { AuthService } from './auth/auth.service.js';
import { ClientCredentialCache } from './auth/clients.store.js';
import { ClientService } from './auth/clients.service.js';
import { KeyRing } from './auth/keyring.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import type { Database } from './infra/database.js';
import { PublicLinks } from './infra/links.js';
import type { Logger } from './infra/logger.js';
import { DeploymentService } from './modules/deployments/deployments.service.js';
import { TenantDeletionHooks } from './tenancy/deletion-hooks.js';
import { TenantDirectory } from './tenancy/tenant-directory.js';
import { tenantScopeLoader } from './tenancy/tenant-scope.js';
import { TenancyService } from './tenancy/tenancy.service.js';
import { TenantService } from './tenancy/tenants.service.js';

export interface Services {
  links: PublicLinks;
  keys: KeyRing;
  auth: AuthService;
  clients: ClientService;
  tenants: TenantService;
  tenancy: TenancyService;
  deployments: DeploymentService;
  deletionHooks: TenantDeletionHooks;
}

/** Wires the domain services over one database; shared by the server and the admin CLI. */
export async function createServices(config: Config, db: Database, logger: Logger): Promise<Services> {
  const { prisma } = db;
  const keys = new KeyRing(prisma, config.tokenTtlSeconds);
  await keys.load();
  const credentials = new ClientCredentialCache(prisma);
  await db.listen('auth_client_changed', (clientId) => credentials.forget(clientId));
  await db.listen('auth_keys_changed', () => {
    keys.load().catch((error) => logger.error('auth.key_reload_failed', { error }));
  });
  const deletionHooks = new TenantDeletionHooks();
  const directory = new TenantDirectory(prisma);
  await db.listen('tenant_changed', (payload) => directory.handleNotification(payload));
  const tenants = new TenantService(prisma, deletionHooks, directory);
  return {
    links: new PublicLinks(config.publicBaseUrl),
    keys,
    auth: new AuthService(new TokenService(keys, config.tokenTtlSeconds), credentials, tenantScopeLoader(directory)),
    clients: new ClientService(prisma),
    tenants,
    tenancy: new TenancyService(directory),
    deployments: new DeploymentService(tenants),
    deletionHooks,
  };
}
