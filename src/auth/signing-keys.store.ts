import type { Prisma as PrismaTypes, SigningKey } from '../generated/prisma/client.js';
import type { Prisma } from '../infra/database.js';

/** A signing key to store: its private JWK already sealed (KeyRing). */
export interface NewSigningKey {
  kid: string;
  alg: string;
  privateBox: Uint8Array<ArrayBuffer>;
  publicJwk: PrismaTypes.InputJsonObject;
}

/** `signing_keys`: the deployment's own token signing keys, shared by every tenant, so no scope. */
export class SigningKeyStore {
  constructor(private readonly prisma: Prisma) {}

  /** Oldest first. */
  all(): Promise<SigningKey[]> {
    return this.prisma.signingKey.findMany({ orderBy: { createdAt: 'asc' } });
  }

  async add(key: NewSigningKey): Promise<void> {
    await this.prisma.signingKey.create({ data: key });
  }

  /** In one transaction: every key that signs now is retired at `retireAt`, and `key` is added. */
  async rotate(retireAt: Date, key: NewSigningKey): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.signingKey.updateMany({ where: { retiredAt: null }, data: { retiredAt: retireAt } }),
      this.prisma.signingKey.create({ data: key }),
    ]);
  }
}
