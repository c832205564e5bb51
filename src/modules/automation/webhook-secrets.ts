import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { SigningSecret } from '../collector/asset-links.js';

export const SECRET_PREFIX = 'whsec_';
const SALT = 'breach-detection/automation-webhook-secret/v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** 256 random bits, shown to the rule's creator once. */
export const generateWebhookSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64url');

/**
 * The `X-Signature` header value: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * the key being the secret's text exactly as shown. The timestamp lets receivers refuse replays.
 */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface SealedSecret {
  kid: string;
  box: Buffer;
}

/**
 * Webhook secrets at rest. The server signs every delivery, so it needs the secret itself and a
 * hash would not do; it is kept AES-256-GCM-encrypted under a key that is HKDF-SHA256 of a token
 * signing key's private scalar (as collector download links are: the signing keys are already a
 * shared, persistent, rotated secret, and a purpose-named salt keeps the uses apart). The rule id
 * is the associated data, so a sealed secret cannot be moved to another rule. Signing keys are
 * retired on rotation but never deleted, so old secrets stay readable.
 */
export class WebhookSecrets {
  private keys = new Map<string, { key: Buffer; createdAt: Date; retired: boolean }>();

  constructor(private readonly signingSecrets: () => Promise<SigningSecret[]>) {}

  async seal(ruleId: string, secret: string): Promise<SealedSecret> {
    await this.load();
    const current = [...this.keys.entries()].filter(([, k]) => !k.retired).sort(([, a], [, b]) => a.createdAt.getTime() - b.createdAt.getTime()).at(-1);
    if (!current) throw new Error('no signing key to seal webhook secrets with');
    const [kid, { key }] = current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(ruleId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return { kid, box: Buffer.concat([iv, cipher.getAuthTag(), sealed]) };
  }

  async open(ruleId: string, sealed: SealedSecret): Promise<string> {
    if (!this.keys.has(sealed.kid)) await this.load();
    const entry = this.keys.get(sealed.kid);
    if (!entry) throw new Error(`signing key ${sealed.kid} of this webhook secret is gone`);
    const box = Buffer.from(sealed.box);
    const decipher = createDecipheriv('aes-256-gcm', entry.key, box.subarray(0, IV_BYTES)).setAAD(Buffer.from(ruleId));
    decipher.setAuthTag(box.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(box.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  private async load(): Promise<void> {
    const keys = new Map<string, { key: Buffer; createdAt: Date; retired: boolean }>();
    for (const secret of await this.signingSecrets()) {
      const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret.d, 'base64url'), SALT, secret.kid, 32));
      keys.set(secret.kid, { key, createdAt: secret.createdAt, retired: secret.retiredAt !== null });
    }
    this.keys = keys;
  }
}
