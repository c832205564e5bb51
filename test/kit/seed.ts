import type { App } from '../../src/app.js';
import { Scopes } from '../../src/auth/scopes.js';
import type { Tenant } from '../../src/generated/prisma/client.js';
import { randomToken } from '../../src/infra/ids.js';

export const allScopes = Object.values(Scopes);

export interface Caller {
  customerId: string;
  clientId: string;
  clientSecret: string;
  token: string;
}

/** Seeds through the same services the admin CLI uses; every name is unique per call. */
export async function seedTenant(app: App, options: { msp?: boolean; parentId?: string; name?: string } = {}): Promise<Tenant> {
  const suffix = randomToken(5);
  return app.services.tenants.create({
    name: options.name ?? `Tenant ${suffix}`,
    handle: `t_${suffix}`,
    msp: options.msp,
    parentId: options.parentId,
  });
}

export async function seedCaller(app: App, customerId: string, scopes: string[] = allScopes): Promise<Caller> {
  const client = await app.services.clients.create({ customerId, scopes });
  const token = await app.services.auth.issueToken(client.client_id, client.client_secret);
  return { customerId, clientId: client.client_id, clientSecret: client.client_secret, token: token.access_token };
}

/** An MSP with two children, and a caller for each of the three. */
export async function seedTree(app: App) {
  const msp = await seedTenant(app, { msp: true });
  const childA = await seedTenant(app, { parentId: msp.id });
  const childB = await seedTenant(app, { parentId: msp.id });
  return {
    msp,
    childA,
    childB,
    mspCaller: await seedCaller(app, msp.id),
    childACaller: await seedCaller(app, childA.id),
    childBCaller: await seedCaller(app, childB.id),
  };
}
