import type { Logger } from '../infra/logger.js';
import type { SecretsKey } from '../infra/secrets-key.js';
import { openLegacyWebhookSecret, webhookSecretContext } from '../modules/automation/webhook-secrets.js';
import { oidcSecretContext } from '../modules/users/oidc.service.js';
import { totpSecretContext } from '../modules/users/second-factor.service.js';
import { privateJwkContext } from './keyring.js';
import type { SealedSecretStore, SealedSigningKey, SealedWebhookSecret } from './sealed-secrets.store.js';

/** How many values a re-seal wrote, per kind. */
export interface ResealCount {
  signing_keys: number;
  webhook_secrets: number;
  /** People with a TOTP secret (in use or being enrolled); `all` only: no older version sealed one otherwise. */
  totp_secrets: number;
  /** Tenants' single sign-on client secrets; `all` only, likewise. */
  oidc_secrets: number;
}

/**
 * Every secret the database keeps, sealed under the secrets key: the token signing keys' private
 * JWKs, the automation rules' webhook secrets, the console users' TOTP secrets and the tenants'
 * single sign-on client secrets. `legacy` seals only what an older version left
 * in its own form (plaintext private JWKs, webhook secrets under a key derived from a signing key;
 * they keep their value, receivers already hold them); `all` re-seals everything under the current
 * key (`secrets rotate`). One transaction, with writers of both tables waiting until it commits,
 * so no value sealed meanwhile under an older key is missed.
 */
export function resealSecrets(store: SealedSecretStore, secretsKey: SecretsKey, which: 'legacy' | 'all'): Promise<ResealCount> {
  return store.reseal(async (tx) => {
    const keys = await tx.signingKeys();
    const privateJwk = (row: SealedSigningKey): string =>
      row.legacy_private_jwk ? JSON.stringify(row.legacy_private_jwk) : secretsKey.open(privateJwkContext(row.kid), row.private_box!);
    const resealedKeys = keys.filter((row) => which === 'all' || row.legacy_private_jwk);
    await tx.sealSigningKeys(resealedKeys.map((row) => ({ kid: row.kid, box: secretsKey.seal(privateJwkContext(row.kid), privateJwk(row)) })));

    const rules = await tx.webhookSecrets(which === 'all');
    await tx.sealWebhookSecrets(
      rules.map((rule) => {
        const secret = rule.legacy_secret_kid ? openLegacy(rule, keys, privateJwk) : secretsKey.open(webhookSecretContext(rule.id), rule.secret_box);
        return { id: rule.id, box: secretsKey.seal(webhookSecretContext(rule.id), secret) };
      }),
    );
    const people = which === 'all' ? await tx.totpSecrets() : [];
    const reseal = (id: string, box: Buffer | null) => box && secretsKey.seal(totpSecretContext(id), secretsKey.open(totpSecretContext(id), box));
    await tx.sealTotpSecrets(people.map((p) => ({ id: p.id, totp_box: reseal(p.id, p.totp_box), totp_pending_box: reseal(p.id, p.totp_pending_box) })));
    const providers = which === 'all' ? await tx.oidcSecrets() : [];
    await tx.sealOidcSecrets(
      providers.map((p) => ({
        id: p.customer_id,
        box: secretsKey.seal(oidcSecretContext(p.customer_id), secretsKey.open(oidcSecretContext(p.customer_id), p.client_secret_box)),
      })),
    );
    return { signing_keys: resealedKeys.length, webhook_secrets: rules.length, totp_secrets: people.length, oidc_secrets: providers.length };
  });
}

function openLegacy<K extends { kid: string }>(rule: SealedWebhookSecret, keys: K[], privateJwk: (key: K) => string): string {
  const key = keys.find((k) => k.kid === rule.legacy_secret_kid);
  if (!key) throw new Error(`the webhook secret of rule ${rule.id} was sealed under signing key ${rule.legacy_secret_kid}, which is gone`);
  return openLegacyWebhookSecret({ kid: key.kid, d: (JSON.parse(privateJwk(key)) as { d: string }).d }, rule.id, rule.secret_box);
}

/** At start: seal what an older version left unsealed; a cheap look when there is nothing. */
export async function sealLegacySecrets(store: SealedSecretStore, secretsKey: SecretsKey, logger: Logger): Promise<void> {
  if (!(await store.anyLegacy())) return;
  const count = await resealSecrets(store, secretsKey, 'legacy');
  logger.info('secrets.legacy_sealed', { ...count });
}
