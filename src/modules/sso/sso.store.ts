import type { TenantScope } from '../../auth/session.js';
import type { SsoConnection } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import type { SealedColumn } from '../../auth/sealed-secrets.store.js';
import type { RoleRule } from './role-rules.js';

/** The sealing context of a tenant's client secret: the value opens only on its own row. */
export const secretContext = (customerId: string) => `sso_connections.client_secret_box:${customerId}`;

/** The client secrets, as `secrets rotate` re-seals them. */
export const ssoSecretColumn: SealedColumn = {
  name: 'sso_client_secrets',
  table: 'sso_connections',
  idColumn: 'customer_id',
  boxColumn: 'client_secret_box',
  context: secretContext,
};

/** A connection as the service has checked it, its client secret already sealed. */
export interface SsoConnectionRow {
  issuer: string;
  clientId: string;
  clientSecretBox: Uint8Array<ArrayBuffer>;
  groupsClaim: string;
  roleRules: RoleRule[];
}

/** A sign-in sent to the provider, waiting for its callback. */
export interface PendingSignIn {
  customerId: string;
  codeVerifier: string;
  nonce: string;
  returnTo: string;
  expiresAt: Date;
}

const inScope = (scope: TenantScope, customerId: string) => {
  if (!scope.tenantIds.has(customerId)) throw new Error(`customer ${customerId} is outside the scope`);
  return { customerId };
};

/**
 * `sso_connections` and `sso_sign_ins`. An admin's reads and writes take the caller's scope first.
 * The sign-in flow's statements take none: a browser starting a sign-in names the tenant whose
 * provider it wants (there is no caller yet), and a callback is found by the hash of its state,
 * the capability the provider hands back.
 */
export class SsoStore {
  constructor(private readonly prisma: Prisma) {}

  find(scope: TenantScope, customerId: string): Promise<SsoConnection | null> {
    return this.prisma.ssoConnection.findUnique({ where: inScope(scope, customerId) });
  }

  save(scope: TenantScope, customerId: string, row: SsoConnectionRow): Promise<SsoConnection> {
    const where = inScope(scope, customerId);
    return this.prisma.ssoConnection.upsert({ where, create: { ...where, ...row }, update: row });
  }

  /** The connection's rules and issuer changed, its sealed secret kept (no new secret was given). */
  update(scope: TenantScope, customerId: string, row: Omit<SsoConnectionRow, 'clientSecretBox'>): Promise<SsoConnection> {
    return this.prisma.ssoConnection.update({ where: inScope(scope, customerId), data: row });
  }

  async delete(scope: TenantScope, customerId: string): Promise<boolean> {
    const { count } = await this.prisma.ssoConnection.deleteMany({ where: inScope(scope, customerId) });
    return count > 0;
  }

  /** The provider of a tenant a browser names to sign in with (the service checks the tenant is live). */
  ofTenant(customerId: string): Promise<SsoConnection | null> {
    return this.prisma.ssoConnection.findUnique({ where: { customerId } });
  }

  async begin(stateHash: Uint8Array<ArrayBuffer>, pending: PendingSignIn): Promise<void> {
    await this.prisma.ssoSignIn.create({ data: { stateHash, ...pending } });
  }

  /** Takes the sign-in of a callback: once only, and only before it expires. */
  async take(stateHash: Uint8Array<ArrayBuffer>, now: Date): Promise<PendingSignIn | undefined> {
    const rows = await this.prisma.$queryRaw<PendingSignIn[]>`/* sso.take_sign_in */
      DELETE FROM sso_sign_ins WHERE state_hash = ${stateHash} AND expires_at > ${now}
      RETURNING customer_id AS "customerId", code_verifier AS "codeVerifier", nonce, return_to AS "returnTo", expires_at AS "expiresAt"`;
    return rows[0];
  }

  async purgeExpired(now: Date): Promise<number> {
    const { count } = await this.prisma.ssoSignIn.deleteMany({ where: { expiresAt: { lte: now } } });
    return count;
  }
}
