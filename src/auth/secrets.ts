import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { newId } from '../infra/ids.js';

/** 256 random bits, base64url: no dots, so `<client_id>.<client_secret>` splits unambiguously. */
export const generateSecret = () => randomBytes(32).toString('base64url');
export const generateClientId = () => newId('cl');

/**
 * A plain SHA-256 is enough for a 256-bit random secret (nothing to brute-force), and it keeps
 * token issuance fast.
 */
export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

export function secretMatches(secret: string, hash: Uint8Array): boolean {
  const candidate = hashSecret(secret);
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}

/** `<client_id>.<client_secret>`, split at the first dot as the SDK does. */
export function splitAccessKey(accessKey: string): { clientId: string; clientSecret: string } | undefined {
  const dot = accessKey.indexOf('.');
  if (dot <= 0 || dot === accessKey.length - 1) return undefined;
  return { clientId: accessKey.slice(0, dot), clientSecret: accessKey.slice(dot + 1) };
}
