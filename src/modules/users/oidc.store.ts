import type { TenantScope } from '../../auth/session.js';
import type { OidcProvider } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

export interface RoleRule {
  group?: string;
  email_domain?: string;
  role: string;
}

interface ProviderSettings {
  issuer: string;
  clientId: string;
  clientSecretBox: Buffer;
  roleRules: RoleRule[];
  defaultRole: string | null;
}

/**
 * `oidc_providers` and `oidc_logins`. An admin configures within their scope; a sign-in names its
 * tenant (the start) or its state (the callback) before anybody is signed in, so those lookups
 * take the tenant id or the state.
 */
export class OidcStore {
  constructor(private readonly prisma: Prisma) {}

  async save(scope: TenantScope, customerId: string, settings: ProviderSettings): Promise<OidcProvider> {
    // The service has already checked this; a store never writes outside the scope it is given.
    if (!scope.tenantIds.has(customerId)) throw new Error(`tenant ${customerId} is outside the scope`);
    const data = {
      issuer: settings.issuer,
      clientId: settings.clientId,
      clientSecretBox: new Uint8Array(settings.clientSecretBox),
      roleRules: settings.roleRules as object[],
      defaultRole: settings.defaultRole,
      updatedAt: new Date(),
    };
    return this.prisma.oidcProvider.upsert({ where: { customerId }, create: { customerId, ...data }, update: data });
  }

  findInScope(scope: TenantScope, customerId: string): Promise<OidcProvider | null> {
    return this.prisma.oidcProvider.findFirst({ where: { AND: [{ customerId: { in: [...scope.tenantIds] } }, { customerId }] } });
  }

  /** The provider a sign-in names by its tenant. */
  find(customerId: string): Promise<OidcProvider | null> {
    return this.prisma.oidcProvider.findUnique({ where: { customerId } });
  }

  async startLogin(login: { stateHash: Buffer; customerId: string; codeVerifier: string; nonce: string; expiresAt: Date }): Promise<void> {
    await this.prisma.oidcLogin.create({ data: { ...login, stateHash: new Uint8Array(login.stateHash) } });
  }

  /** The login of a state, once, while it has not expired. */
  async takeLogin(stateHash: Buffer): Promise<{ customerId: string; codeVerifier: string; nonce: string } | null> {
    const rows = await this.prisma.$queryRaw<{ customer_id: string; code_verifier: string; nonce: string }[]>`/* oidc.take_login */
      DELETE FROM oidc_logins WHERE state_hash = ${stateHash} RETURNING customer_id, code_verifier, nonce, expires_at > now() AS live`;
    const row = rows[0] as (typeof rows)[number] & { live?: boolean };
    return row?.live ? { customerId: row.customer_id, codeVerifier: row.code_verifier, nonce: row.nonce } : null;
  }

  async purgeLogins(): Promise<number> {
    const { count } = await this.prisma.oidcLogin.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    return count;
  }
}
