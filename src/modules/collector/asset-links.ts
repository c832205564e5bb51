import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** How long a download link stays valid: enough to follow the redirect, not to share the link. */
export const ASSET_LINK_LIFETIME_SECONDS = 300;

/** One HMAC key per token signing key (see `SigningSecret`). */
export interface LinkKey {
  kid: string;
  key: Buffer;
  createdAt: Date;
  retiredAt: Date | null;
}

/** The raw material a link key is derived from: a token signing key's private scalar. */
export interface SigningSecret {
  kid: string;
  /** The private JWK's `d`, base64url. */
  d: string;
  createdAt: Date;
  retiredAt: Date | null;
}

const SALT = 'breach-detection/collector-asset-link/v1';

/**
 * Link keys must be the same in every server process and survive restarts, and there is no table
 * for a separate secret. The token signing keys already are exactly that (PostgreSQL, shared,
 * rotated with `key rotate`, sealed at rest under the secrets key so a dump yields neither), so
 * each link key is HKDF-SHA256 of a signing key's private `d`, with a salt that names this use: a
 * link MAC reveals nothing about the JWT key, and the JWT key is never used as an HMAC key directly.
 */
export function deriveLinkKey(secret: SigningSecret): LinkKey {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret.d, 'base64url'), SALT, secret.kid, 32));
  return { kid: secret.kid, key, createdAt: secret.createdAt, retiredAt: secret.retiredAt };
}

/** What is signed: the path and the expiry, i.e. the whole link but for its signature. */
const signedText = (path: string, expires: number) => `${path}?expires=${expires}`;

export function signLink(key: LinkKey, path: string, expires: number): string {
  return createHmac('sha256', key.key).update(signedText(path, expires)).digest('hex');
}

export type LinkCheck = 'valid' | 'expired' | 'invalid';

/**
 * Links are signed with the newest unretired key. After a rotation the previous key keeps
 * verifying: a link signed at `expires - lifetime` was signed by a key not retired before then.
 */
export function checkLink(keys: LinkKey[], path: string, expires: string | null, signature: string | null, nowSeconds: number): LinkCheck {
  if (!expires || !/^\d{1,12}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/i.test(signature)) return 'invalid';
  const at = Number(expires);
  // Never issued by us: a lifetime longer than ours means the link was not produced here.
  if (at - nowSeconds > ASSET_LINK_LIFETIME_SECONDS + 60) return 'invalid';
  const issuedAt = (at - ASSET_LINK_LIFETIME_SECONDS) * 1000;
  const given = Buffer.from(signature.toLowerCase(), 'hex');
  const matches = keys
    .filter((k) => k.retiredAt === null || k.retiredAt.getTime() > issuedAt)
    .some((k) => timingSafeEqual(Buffer.from(signLink(k, path, at), 'hex'), given));
  if (!matches) return 'invalid';
  return at < nowSeconds ? 'expired' : 'valid';
}

/** The key new links are signed with: the newest one not retired. */
export const currentLinkKey = (keys: LinkKey[]): LinkKey | undefined =>
  keys
    .filter((k) => k.retiredAt === null)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
    .at(-1);
