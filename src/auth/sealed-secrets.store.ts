import type pg from 'pg';

/** A signing key's private half: sealed (`private_box`), or in an older version's plain form. */
export interface SealedSigningKey {
  kid: string;
  legacy_private_jwk: { d: string } | null;
  private_box: Buffer | null;
}

/** A webhook secret: sealed under the secrets key, or (`legacy_secret_kid`) under a signing key. */
export interface SealedWebhookSecret {
  id: string;
  legacy_secret_kid: string | null;
  secret_box: Buffer;
}

/** A person's TOTP secrets: the one in use and the one being enrolled, either may be absent. */
interface SealedTotpSecret {
  id: string;
  totp_box: Buffer | null;
  totp_pending_box: Buffer | null;
}

/** The statements of one re-seal, all in its transaction. */
export interface ResealTransaction {
  signingKeys(): Promise<SealedSigningKey[]>;
  /** The webhook secrets: every one, or only those sealed under a signing key. */
  webhookSecrets(all: boolean): Promise<SealedWebhookSecret[]>;
  sealSigningKeys(boxes: ReadonlyArray<{ kid: string; box: Buffer }>): Promise<void>;
  sealWebhookSecrets(boxes: ReadonlyArray<{ id: string; box: Buffer }>): Promise<void>;
  totpSecrets(): Promise<SealedTotpSecret[]>;
  sealTotpSecrets(rows: ReadonlyArray<SealedTotpSecret>): Promise<void>;
  /** The tenants' single sign-on client secrets. */
  oidcSecrets(): Promise<Array<{ customer_id: string; client_secret_box: Buffer }>>;
  sealOidcSecrets(boxes: ReadonlyArray<{ id: string; box: Buffer }>): Promise<void>;
}

/**
 * The sealed columns of `signing_keys`, `automation_rules`, `users` (TOTP secrets) and
 * `oidc_providers` (client secrets). The secrets key seals the values of
 * every tenant alike, so these functions take no tenant scope: their callers are the server's
 * start and the `secrets rotate` command.
 */
export class SealedSecretStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Whether an older version left a value in its own form. */
  async anyLegacy(): Promise<boolean> {
    const { rows } = await this.pool.query<{ legacy: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM signing_keys WHERE legacy_private_jwk IS NOT NULL)
           OR EXISTS (SELECT 1 FROM automation_rules WHERE legacy_secret_kid IS NOT NULL) AS legacy /* reseal.any_legacy */`,
    );
    return rows[0]!.legacy;
  }

  /**
   * Runs `work` in one transaction, with writers of these tables waiting until it commits, so that
   * no value sealed meanwhile under an older key is missed.
   */
  async reseal<T>(work: (tx: ResealTransaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('LOCK TABLE signing_keys, automation_rules, users, oidc_providers IN SHARE ROW EXCLUSIVE MODE');
      const result = await work(resealTransaction(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

function resealTransaction(client: pg.PoolClient): ResealTransaction {
  return {
    signingKeys: async () =>
      (await client.query<SealedSigningKey>('SELECT kid, legacy_private_jwk, private_box FROM signing_keys /* reseal.signing_keys */')).rows,
    webhookSecrets: async (all) =>
      (
        await client.query<SealedWebhookSecret>(
          `SELECT id, legacy_secret_kid, secret_box FROM automation_rules
            WHERE secret_box IS NOT NULL AND ($1 OR legacy_secret_kid IS NOT NULL) /* reseal.webhook_secrets */`,
          [all],
        )
      ).rows,
    sealSigningKeys: async (boxes) => {
      await client.query(
        `UPDATE signing_keys k SET private_box = v.box, legacy_private_jwk = NULL
           FROM unnest($1::text[], $2::bytea[]) AS v (kid, box) WHERE k.kid = v.kid /* reseal.signing_keys_update */`,
        [boxes.map((b) => b.kid), boxes.map((b) => b.box)],
      );
    },
    sealWebhookSecrets: async (boxes) => {
      await client.query(
        `UPDATE automation_rules r SET secret_box = v.box, legacy_secret_kid = NULL
           FROM unnest($1::text[], $2::bytea[]) AS v (id, box) WHERE r.id = v.id /* reseal.webhook_secrets_update */`,
        [boxes.map((b) => b.id), boxes.map((b) => b.box)],
      );
    },
    totpSecrets: async () =>
      (
        await client.query<SealedTotpSecret>(
          'SELECT id, totp_box, totp_pending_box FROM users WHERE totp_box IS NOT NULL OR totp_pending_box IS NOT NULL /* reseal.totp_secrets */',
        )
      ).rows,
    sealTotpSecrets: async (rows) => {
      await client.query(
        `UPDATE users u SET totp_box = v.box, totp_pending_box = v.pending
           FROM unnest($1::text[], $2::bytea[], $3::bytea[]) AS v (id, box, pending) WHERE u.id = v.id /* reseal.totp_secrets_update */`,
        [rows.map((r) => r.id), rows.map((r) => r.totp_box), rows.map((r) => r.totp_pending_box)],
      );
    },
    oidcSecrets: async () =>
      (
        await client.query<{ customer_id: string; client_secret_box: Buffer }>(
          'SELECT customer_id, client_secret_box FROM oidc_providers /* reseal.oidc_secrets */',
        )
      ).rows,
    sealOidcSecrets: async (boxes) => {
      await client.query(
        `UPDATE oidc_providers o SET client_secret_box = v.box
           FROM unnest($1::text[], $2::bytea[]) AS v (id, box) WHERE o.customer_id = v.id /* reseal.oidc_secrets_update */`,
        [boxes.map((b) => b.id), boxes.map((b) => b.box)],
      );
    },
  };
}
