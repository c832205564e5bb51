import { createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { SecretsKey } from '../../infra/secrets-key.js';

export const SECRET_PREFIX = 'whsec_';
const LEGACY_SALT = 'breach-detection/automation-webhook-secret/v1';
const LEGACY_IV_BYTES = 12;
const LEGACY_TAG_BYTES = 16;

/** 256 random bits, shown to the rule's creator once. */
export const generateWebhookSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64url');

/**
 * The `X-Signature` header value: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * the key being the secret's text exactly as shown. The timestamp lets receivers refuse replays.
 */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a rule's sealed secret is bound to (the associated data): it cannot move to another rule. */
export const webhookSecretContext = (ruleId: string) => `automation_rules.secret_box:${ruleId}`;

/**
 * Webhook secrets at rest. The server signs every delivery, so it needs the secret itself and a
 * hash would not do: it is sealed under the secrets key (src/infra/secrets-key.ts), which lives
 * outside the database, with the rule id bound in.
 */
export class WebhookSecrets {
  constructor(private readonly secretsKey: SecretsKey) {}

  seal(ruleId: string, secret: string): Buffer {
    return this.secretsKey.seal(webhookSecretContext(ruleId), secret);
  }

  open(ruleId: string, sealed: Uint8Array): string {
    return this.secretsKey.open(webhookSecretContext(ruleId), sealed);
  }
}

/**
 * The scheme before the secrets key, read only to re-seal old rows at start (sealed-secrets.ts):
 * AES-256-GCM under HKDF-SHA256 of signing key `kid`'s private scalar, `iv | tag | ciphertext`,
 * the rule id as associated data. Receivers hold these secrets, so they keep their value.
 */
export function openLegacyWebhookSecret(signingKey: { kid: string; d: string }, ruleId: string, sealed: Uint8Array): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(signingKey.d, 'base64url'), LEGACY_SALT, signingKey.kid, 32));
  const box = Buffer.from(sealed);
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, LEGACY_IV_BYTES)).setAAD(Buffer.from(ruleId));
  decipher.setAuthTag(box.subarray(LEGACY_IV_BYTES, LEGACY_IV_BYTES + LEGACY_TAG_BYTES));
  return Buffer.concat([decipher.update(box.subarray(LEGACY_IV_BYTES + LEGACY_TAG_BYTES)), decipher.final()]).toString('utf8');
}
