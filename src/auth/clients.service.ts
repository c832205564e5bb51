import { badRequest, notFound } from '../errors.js';
import type { TenantStore } from '../tenancy/tenants.store.js';
import type { ClientStore } from './clients.store.js';
import { knownScopes } from './scopes.js';
import { generateSecret, hashSecret } from './secrets.js';

export interface ClientView {
  client_id: string;
  customer_id: string;
  scopes: string[];
  description: string | null;
  kind: string;
  created_at: string;
  revoked_at: string | null;
}

export const clientView = (c: {
  id: string;
  customerId: string;
  scopes: string[];
  description: string | null;
  kind: string;
  createdAt: Date;
  revokedAt: Date | null;
}): ClientView => ({
  client_id: c.id,
  customer_id: c.customerId,
  scopes: c.scopes,
  description: c.description,
  kind: c.kind,
  created_at: c.createdAt.toISOString(),
  revoked_at: c.revokedAt?.toISOString() ?? null,
});

/** 400 naming the scopes that are not scopes (api-spec.md section 5), and the valid ones. */
export function checkKnownScopes(scopes: readonly string[]): void {
  const unknown = scopes.filter((s) => !knownScopes.includes(s));
  if (unknown.length)
    throw badRequest('invalid_request', `unknown scopes: ${unknown.join(', ')}; valid scopes: ${knownScopes.join(', ')}`, { valid_scopes: knownScopes });
}

/** Issues and revokes client credentials; the secret is returned once and stored only hashed. */
export class ClientService {
  constructor(
    private readonly store: ClientStore,
    private readonly tenants: TenantStore,
  ) {}

  async create(input: { customerId: string; scopes: string[]; description?: string; kind?: string }) {
    checkKnownScopes(input.scopes);
    if (!(await this.tenants.find(input.customerId))) throw notFound('not_found', `Customer ${input.customerId} was not found`);
    const secret = generateSecret();
    const client = await this.store.create({
      customerId: input.customerId,
      secretHash: hashSecret(secret),
      scopes: [...new Set(input.scopes)],
      description: input.description ?? null,
      kind: input.kind ?? 'api',
    });
    return { ...clientView(client), client_secret: secret };
  }

  async list(customerId: string): Promise<ClientView[]> {
    return (await this.store.list(customerId)).map(clientView);
  }

  async revoke(clientId: string): Promise<ClientView> {
    const client = await this.store.find(clientId);
    if (!client) throw notFound('not_found', `Client ${clientId} was not found`);
    if (client.revokedAt) return clientView(client);
    return clientView(await this.store.revoke(clientId));
  }
}
