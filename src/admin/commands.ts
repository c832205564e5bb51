import { parseArgs } from 'node:util';
import { ClientService, clientView } from '../auth/clients.service.js';
import { ClientStore } from '../auth/clients.store.js';
import { KeyRing } from '../auth/keyring.js';
import { SigningKeyStore } from '../auth/signing-keys.store.js';
import { knownScopes } from '../auth/scopes.js';
import { resealSecrets } from '../auth/sealed-secrets.js';
import { SealedSecretStore } from '../auth/sealed-secrets.store.js';
import type { Config } from '../config.js';
import type { Tenant, TenantDeletion } from '../generated/prisma/client.js';
import type { Database } from '../infra/database.js';
import { SecretsKey } from '../infra/secrets-key.js';
import { ApiClientService } from '../modules/api-clients/api-clients.service.js';
import { ApiClientStore } from '../modules/api-clients/api-clients.store.js';
import { publishReleaseCommand, releaseUsage } from '../modules/collector/collector.admin.js';
import { detectRunCommand, detectUsage } from '../modules/detection/detection.admin.js';
import { importNetworksCommand, listNetworksCommand, networksImportUsage, networksListUsage } from '../modules/networks/networks.admin.js';
import {
  createUserCommand,
  disableUserCommand,
  listUsersCommand,
  resetPasswordCommand,
  userCreateUsage,
  userDisableUsage,
  userListUsage,
  userResetPasswordUsage,
} from '../modules/users/users.admin.js';
import { TenantDeletionStore } from '../tenancy/tenant-deletions.store.js';
import { TenantDirectory } from '../tenancy/tenant-directory.js';
import { TenantService } from '../tenancy/tenants.service.js';
import { TenantStore } from '../tenancy/tenants.store.js';
import { usageError } from './usage.js';

const tenantService = (db: Database) => {
  const store = new TenantStore(db.prisma);
  return new TenantService(store, new TenantDeletionStore(db.prisma), new TenantDirectory(store));
};
const clientService = (db: Database) => new ClientService(new ClientStore(db.prisma), new TenantStore(db.prisma));

export const tenantView = (t: Tenant) => ({
  customer_id: t.id,
  name: t.name,
  handle: t.handle,
  type: t.type,
  parent: t.parentId,
  is_msp: t.isMsp,
  org_code: t.orgCode,
  created_at: t.createdAt.toISOString(),
});

/** A deletion job as `tenant deletions` prints it: `steps` holds each step's recorded progress. */
export const deletionView = (d: TenantDeletion) => ({
  customer_id: d.customerId,
  parent: d.parentId,
  name: d.name,
  handle: d.handle,
  state: d.state,
  steps: d.steps,
  attempts: d.attempts,
  last_error: d.lastError,
  requested_at: d.requestedAt.toISOString(),
  updated_at: d.updatedAt.toISOString(),
  finished_at: d.finishedAt?.toISOString() ?? null,
});

type Run = (args: string[], db: Database, config: Config) => Promise<unknown>;
/** A command: its usage lines (indented two spaces, as in the full usage) and what it does. */
interface Command {
  usage: string;
  run: Run;
}

const required = (values: Record<string, unknown>, name: string, usage: string): string => {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw usageError(`--${name} is required`, usage);
  return value;
};

const tenantCreateUsage = '  tenant create --name NAME --handle HANDLE [--parent CUSTOMER_ID] [--msp]';
const clientCreateUsage = `  client create --customer CUSTOMER_ID --scopes SCOPE[,SCOPE...] [--description TEXT]
      SCOPE is one of ${knownScopes.join(', ')}`;
const clientListUsage = '  client list --customer CUSTOMER_ID';
const clientRevokeUsage = '  client revoke --client-id CLIENT_ID';

const commands: Record<string, Command> = {
  'tenant create': {
    usage: tenantCreateUsage,
    run: async (args, db) => {
      const { values } = parseArgs({
        args,
        options: { name: { type: 'string' }, handle: { type: 'string' }, parent: { type: 'string' }, msp: { type: 'boolean' } },
      });
      const tenant = await tenantService(db).create({
        name: required(values, 'name', tenantCreateUsage),
        handle: required(values, 'handle', tenantCreateUsage),
        parentId: values.parent,
        msp: values.msp,
      });
      return tenantView(tenant);
    },
  },
  'tenant list': {
    usage: '  tenant list',
    run: async (args, db) => {
      parseArgs({ args, options: {} });
      return (await tenantService(db).list()).map(tenantView);
    },
  },
  'tenant deletions': {
    usage: '  tenant deletions [--customer CUSTOMER_ID]',
    run: async (args, db) => {
      const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
      return (await new TenantDeletionStore(db.prisma).list(values.customer)).map(deletionView);
    },
  },
  'client create': {
    usage: clientCreateUsage,
    run: async (args, db) => {
      const { values } = parseArgs({
        args,
        options: { customer: { type: 'string' }, scopes: { type: 'string' }, description: { type: 'string' } },
      });
      const scopes = required(values, 'scopes', clientCreateUsage)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const { client, secret } = await new ApiClientService(new ApiClientStore(db.prisma), () => {}).createAsOperator({
        customerId: required(values, 'customer', clientCreateUsage),
        scopes,
        description: values.description,
      });
      return { ...clientView(client), client_secret: secret };
    },
  },
  'client list': {
    usage: clientListUsage,
    run: async (args, db) => {
      const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
      return clientService(db).list(required(values, 'customer', clientListUsage));
    },
  },
  'client revoke': {
    usage: clientRevokeUsage,
    run: async (args, db) => {
      const { values } = parseArgs({ args, options: { 'client-id': { type: 'string' } } });
      return clientService(db).revoke(required(values, 'client-id', clientRevokeUsage));
    },
  },
  'key rotate': {
    usage: '  key rotate   (new signing key; old tokens verify until they expire)',
    run: async (args, db, config) => {
      parseArgs({ args, options: {} });
      const keys = new KeyRing(new SigningKeyStore(db.prisma), config.tokenTtlSeconds, SecretsKey.load(config, { create: false }));
      await keys.load();
      return { kid: await keys.rotate(), jwks: keys.jwks() };
    },
  },
  'secrets rotate': { usage: '  secrets rotate   (re-seal signing keys and webhook secrets under a new secrets key)', run: rotateSecretsKey },
  'release publish': { usage: releaseUsage, run: publishReleaseCommand },
  'detect run': { usage: detectUsage, run: detectRunCommand },
  'networks import': { usage: networksImportUsage, run: importNetworksCommand },
  'networks list': { usage: networksListUsage, run: listNetworksCommand },
  'user create': { usage: userCreateUsage, run: createUserCommand },
  'user list': { usage: userListUsage, run: listUsersCommand },
  'user disable': { usage: userDisableUsage, run: disableUserCommand },
  'user reset-password': { usage: userResetPasswordUsage, run: resetPasswordCommand },
};

export const usage = `usage: npm run -s admin -- <command> [options]
       npm run -s admin -- <command> --help
Prints JSON on stdout. Commands:
${Object.values(commands)
  .map((c) => c.usage)
  .join('\n')}`;

/**
 * Every sealed value re-sealed under a new secrets key, in one transaction, while servers run.
 * With the key file (SECRETS_KEY unset) a new key is generated into it first, the current one kept
 * second: servers re-read the file when they seal or meet a value under a key they do not hold.
 * With SECRETS_KEY, the new key is its first one (docs/secrets.md has the steps).
 */
async function rotateSecretsKey(args: string[], db: Database, config: Config) {
  parseArgs({ args, options: {} });
  const secretsKey = SecretsKey.load(config, { create: false });
  const previous = secretsKey.currentId;
  const current = secretsKey.fromFile ? secretsKey.addNewKey() : previous;
  const resealed = await resealSecrets(new SealedSecretStore(db.pool), secretsKey, 'all');
  secretsKey.dropOldKeys();
  return { secrets_key_id: current, previous_key_id: secretsKey.fromFile ? previous : null, source: secretsKey.source, resealed };
}

/** The command `argv` names (its first two words) and the rest of its arguments. */
export function findCommand(argv: string[]): (Command & { args: string[] }) | undefined {
  const name = argv.slice(0, 2).join(' ');
  return Object.hasOwn(commands, name) ? { ...commands[name]!, args: argv.slice(2) } : undefined;
}

/** Every command's name (`tenant create`, ...), for documentation checks. */
export const commandNames = (): string[] => Object.keys(commands);
