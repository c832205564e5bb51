import { type CryptoKey, type JWK, exportJWK, generateKeyPair, importJWK } from 'jose';
import { newId } from '../infra/ids.js';
import { SealedValueError, type SecretsKey } from '../infra/secrets-key.js';
import type { SigningSecret } from '../modules/collector/asset-links.js';
import type { NewSigningKey, SigningKeyStore } from './signing-keys.store.js';

export const SIGNING_ALG = 'ES256';

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  signKey: CryptoKey;
  /** The private JWK's `d`: collector download links are signed with keys derived from it. */
  d: string;
  createdAt: Date;
  retiredAt: Date | null;
}

/** What the sealed private JWK of signing key `kid` is bound to (the associated data). */
export const privateJwkContext = (kid: string) => `signing_keys.private_jwk:${kid}`;

/**
 * The token signing keys of this deployment, persisted in PostgreSQL so that every process and
 * every restart signs and verifies with the same set. The newest unretired key signs; a rotated
 * key keeps verifying until its `retired_at` (the old key's tokens have expired by then). Private
 * keys are stored sealed under the secrets key, so a database dump cannot mint tokens.
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private signer: LoadedKey | undefined;
  private lastReload = 0;

  constructor(
    private readonly store: SigningKeyStore,
    private readonly tokenTtlSeconds: number,
    private readonly secretsKey: SecretsKey,
  ) {}

  async load(): Promise<void> {
    const rows = await this.store.all();
    if (!rows.some((r) => r.retiredAt === null)) {
      await this.store.add(await this.newKey());
      return this.load();
    }
    const keys = new Map<string, LoadedKey>();
    for (const row of rows) {
      const privateJwk = this.openPrivateJwk(row);
      keys.set(row.kid, {
        kid: row.kid,
        publicJwk: row.publicJwk as JWK,
        verifyKey: (await importJWK(row.publicJwk as JWK, row.alg)) as CryptoKey,
        signKey: (await importJWK(privateJwk, row.alg)) as CryptoKey,
        d: privateJwk.d!,
        createdAt: row.createdAt,
        retiredAt: row.retiredAt,
      });
    }
    this.keys = keys;
    this.signer = [...keys.values()].filter((k) => k.retiredAt === null).at(-1);
    this.lastReload = Date.now();
  }

  /** A new key signs from now on; the previous ones verify until their tokens have expired. */
  async rotate(): Promise<string> {
    const retireAt = new Date(Date.now() + this.tokenTtlSeconds * 1000);
    const key = await this.newKey();
    await this.store.rotate(retireAt, key);
    await this.load();
    return key.kid;
  }

  signingKey(): { kid: string; key: CryptoKey } {
    if (!this.signer) throw new Error('key ring not loaded');
    return { kid: this.signer.kid, key: this.signer.signKey };
  }

  /** Unknown kids trigger at most one reload a second: another process may just have rotated. */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    let key = this.keys.get(kid);
    if (!key && Date.now() - this.lastReload > 1000) {
      await this.load();
      key = this.keys.get(kid);
    }
    if (!key || (key.retiredAt && key.retiredAt.getTime() <= Date.now())) return undefined;
    return key.verifyKey;
  }

  /** Every key's private scalar, oldest first: collector download links derive their keys from them. */
  signingSecrets(): SigningSecret[] {
    return [...this.keys.values()].map(({ kid, d, createdAt, retiredAt }) => ({ kid, d, createdAt, retiredAt }));
  }

  jwks(): { keys: JWK[] } {
    const now = Date.now();
    return {
      keys: [...this.keys.values()]
        .filter((k) => !k.retiredAt || k.retiredAt.getTime() > now)
        .map((k) => ({ ...k.publicJwk, kid: k.kid, alg: SIGNING_ALG, use: 'sig' })),
    };
  }

  /** A new key pair, its private half sealed under the secrets key. */
  private async newKey(): Promise<NewSigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = newId('key');
    return {
      kid,
      alg: SIGNING_ALG,
      privateBox: new Uint8Array(this.secretsKey.seal(privateJwkContext(kid), JSON.stringify(await exportJWK(privateKey)))),
      publicJwk: { ...(await exportJWK(publicKey)) },
    };
  }

  /** A key that does not open stops the start: a new signing key in its place would be silent. */
  private openPrivateJwk(row: { kid: string; privateBox: Uint8Array | null }): JWK {
    if (!row.privateBox) throw new Error(`signing key ${row.kid} is not sealed yet: start the server once, it seals it`);
    try {
      return JSON.parse(this.secretsKey.open(privateJwkContext(row.kid), row.privateBox)) as JWK;
    } catch (error) {
      if (!(error instanceof SealedValueError)) throw error;
      throw new Error(`${this.secretsKey.source} does not open the stored signing keys: ${error.message}`);
    }
  }
}
