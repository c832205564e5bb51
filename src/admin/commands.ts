import { parseArgs } from 'node:util';
import { ClientService } from '../auth/clients.service.js';
import { KeyRing } from '../auth/keyring.js';
import { resealSecrets } from '../auth/sealed-secrets.js';
import type { Config } from '../config.js';
import { badRequest } from '../errors.js';
import type { Tenant, TenantDeletion } from '../generated/prisma/client.js';
import type { Database } from '../infra/database.js';
import { SecretsKey } from '../infra/secrets-key.js';
import { publishReleaseCommand, releaseUsage } from '../modules/collector/collector.admin.js';
import { detectRunCommand, detectUsage } from '../modules/detection/detection.admin.js';
import { importNetworksCommand, listNetworksCommand, networksUsage } from '../modules/networks/networks.admin.js';
import { TenantDeletionStore } from '../tenancy/tenant-deletions.store.js';
import { TenantDirectory } from '../tenancy/tenant-directory.js';
import { TenantService } from '../tenancy/tenants.service.js';

const tenantService = (db: Database) => new TenantService(db.prisma, new TenantDeletionStore(db.prisma), new TenantDirectory(db.prisma));

export const usage = `usage: npm run -s admin -- <command>
  tenant create --name NAME --handle HANDLE [--parent CUSTOMER_ID] [--msp]
  tenant list
  tenant deletions [--customer CUSTOMER_ID]
  client create --customer CUSTOMER_ID --scopes SCOPE[,SCOPE...] [--description TEXT]
  client list --customer CUSTOMER_ID
  client revoke --client-id CLIENT_ID
  key rotate
  secrets rotate
${releaseUsage}
${detectUsage}
${networksUsage}`;

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

type Command = (args: string[], db: Database, config: Config) => Promise<unknown>;

const option = (values: Record<string, unknown>, name: string): string => {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw badRequest('usage', `--${name} is required\n${usage}`);
  return value;
};

const commands: Record<string, Command> = {
  'tenant create': async (args, db) => {
    const { values } = parseArgs({
      args,
      options: { name: { type: 'string' }, handle: { type: 'string' }, parent: { type: 'string' }, msp: { type: 'boolean' } },
    });
    const tenant = await tenantService(db).create({
      name: option(values, 'name'),
      handle: option(values, 'handle'),
      parentId: values.parent,
      msp: values.msp,
    });
    return tenantView(tenant);
  },
  'tenant list': async (_args, db) => {
    return (await tenantService(db).list()).map(tenantView);
  },
  'tenant deletions': async (args, db) => {
    const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
    return (await new TenantDeletionStore(db.prisma).list(values.customer)).map(deletionView);
  },
  'client create': async (args, db) => {
    const { values } = parseArgs({
      args,
      options: { customer: { type: 'string' }, scopes: { type: 'string' }, description: { type: 'string' } },
    });
    const scopes = option(values, 'scopes').split(',').map((s) => s.trim()).filter(Boolean);
    const created = await new ClientService(db.prisma).create({
      customerId: option(values, 'customer'),
      scopes,
      description: values.description,
    });
    return created;
  },
  'client list': async (args, db) => {
    const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
    return new ClientService(db.prisma).list(option(values, 'customer'));
  },
  'client revoke': async (args, db) => {
    const { values } = parseArgs({ args, options: { 'client-id': { type: 'string' } } });
    return new ClientService(db.prisma).revoke(option(values, 'client-id'));
  },
  'key rotate': async (_args, db, config) => {
    const keys = new KeyRing(db.prisma, config.tokenTtlSeconds, SecretsKey.load(config, { create: false }));
    await keys.load();
    return { kid: await keys.rotate(), jwks: keys.jwks() };
  },
  'secrets rotate': rotateSecretsKey,
  'release publish': publishReleaseCommand,
  'detect run': detectRunCommand,
  'networks import': importNetworksCommand,
  'networks list': listNetworksCommand,
};

/**
 * Every sealed value re-sealed under a new secrets key, in one transaction, while servers run.
 * With the key file (SECRETS_KEY unset) a new key is generated into it first, the current one kept
 * second: servers re-read the file when they seal or meet a value under a key they do not hold.
 * With SECRETS_KEY, the new key is its first one (docs/secrets.md has the steps).
 */
async function rotateSecretsKey(_args: string[], db: Database, config: Config) {
  const secretsKey = SecretsKey.load(config, { create: false });
  const previous = secretsKey.currentId;
  const current = secretsKey.fromFile ? secretsKey.addNewKey() : previous;
  const resealed = await resealSecrets(db.pool, secretsKey, 'all');
  secretsKey.dropOldKeys();
  return { secrets_key_id: current, previous_key_id: secretsKey.fromFile ? previous : null, source: secretsKey.source, resealed };
}

export function findCommand(argv: string[]): { run: Command; args: string[] } | undefined {
  const name = argv.slice(0, 2).join(' ');
  return Object.hasOwn(commands, name) ? { run: commands[name], args: argv.slice(2) } : undefined;
}
