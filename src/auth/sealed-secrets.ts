import type pg from 'pg';
import type { Logger } from '../infra/logger.js';
import type { SecretsKey } from '../infra/secrets-key.js';
import { openLegacyWebhookSecret, webhookSecretContext } from '../modules/automation/webhook-secrets.js';
import { privateJwkContext } from './keyring.js';

/** How many values a re-seal wrote, per kind. */
export interface ResealCount {
  signing_keys: number;
  webhook_secrets: number;
}

/**
 * Every secret the database keeps, sealed under the secrets key: the token signing keys' private
 * JWKs and the automation rules' webhook secrets. `legacy` seals only what an older version left
 * in its own form (plaintext private JWKs, webhook secrets under a key derived from a signing key;
 * they keep their value, receivers already hold them); `all` re-seals everything under the current
 * key (`secrets rotate`). One transaction, with writers of both tables waiting until it commits,
 * so no value sealed meanwhile under an older key is missed.
 */
export async function resealSecrets(pool: pg.Pool, secretsKey: SecretsKey, which: 'legacy' | 'all'): Promise<ResealCount> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE signing_keys, automation_rules IN SHARE ROW EXCLUSIVE MODE');
    const { rows: keys } = await client.query<{ kid: string; legacy_private_jwk: { d: string } | null; private_box: Buffer | null }>(
      'SELECT kid, legacy_private_jwk, private_box FROM signing_keys /* reseal.signing_keys */',
    );
    const privateJwk = (row: (typeof keys)[number]): string =>
      row.legacy_private_jwk ? JSON.stringify(row.legacy_private_jwk) : secretsKey.open(privateJwkContext(row.kid), row.private_box!);
    const resealedKeys = keys.filter((row) => which === 'all' || row.legacy_private_jwk);
    await client.query(
      `UPDATE signing_keys k SET private_box = v.box, legacy_private_jwk = NULL
         FROM unnest($1::text[], $2::bytea[]) AS v (kid, box) WHERE k.kid = v.kid /* reseal.signing_keys_update */`,
      [resealedKeys.map((row) => row.kid), resealedKeys.map((row) => secretsKey.seal(privateJwkContext(row.kid), privateJwk(row)))],
    );

    const { rows: rules } = await client.query<{ id: string; legacy_secret_kid: string | null; secret_box: Buffer }>(
      `SELECT id, legacy_secret_kid, secret_box FROM automation_rules
        WHERE secret_box IS NOT NULL AND ($1 OR legacy_secret_kid IS NOT NULL) /* reseal.webhook_secrets */`,
      [which === 'all'],
    );
    const boxes = rules.map((rule) => {
      const secret = rule.legacy_secret_kid ? openLegacy(rule, keys, privateJwk) : secretsKey.open(webhookSecretContext(rule.id), rule.secret_box);
      return secretsKey.seal(webhookSecretContext(rule.id), secret);
    });
    await client.query(
      `UPDATE automation_rules r SET secret_box = v.box, legacy_secret_kid = NULL
         FROM unnest($1::text[], $2::bytea[]) AS v (id, box) WHERE r.id = v.id /* reseal.webhook_secrets_update */`,
      [rules.map((rule) => rule.id), boxes],
    );
    await client.query('COMMIT');
    return { signing_keys: resealedKeys.length, webhook_secrets: rules.length };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function openLegacy<K extends { kid: string }>(
  rule: { id: string; legacy_secret_kid: string | null; secret_box: Buffer },
  keys: K[],
  privateJwk: (key: K) => string,
): string {
  const key = keys.find((k) => k.kid === rule.legacy_secret_kid);
  if (!key) throw new Error(`the webhook secret of rule ${rule.id} was sealed under signing key ${rule.legacy_secret_kid}, which is gone`);
  return openLegacyWebhookSecret({ kid: key.kid, d: (JSON.parse(privateJwk(key)) as { d: string }).d }, rule.id, rule.secret_box);
}

/** At start: seal what an older version left unsealed; a cheap look when there is nothing. */
export async function sealLegacySecrets(pool: pg.Pool, secretsKey: SecretsKey, logger: Logger): Promise<void> {
  const { rows } = await pool.query<{ legacy: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM signing_keys WHERE legacy_private_jwk IS NOT NULL)
         OR EXISTS (SELECT 1 FROM automation_rules WHERE legacy_secret_kid IS NOT NULL) AS legacy /* reseal.any_legacy */`,
  );
  if (!rows[0]!.legacy) return;
  const count = await resealSecrets(pool, secretsKey, 'legacy');
  logger.info('secrets.legacy_sealed', { ...count });
}
