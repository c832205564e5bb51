import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../../infra/ids.js';

/** 20 random bytes: 160 bits, 32 characters of lowercase base32 (URL-safe, no dots). */
const CODE_BYTES = 20;
export const DEVICE_CODE_PATTERN = /^[a-z2-7]{32}$/;
/** Longer input is refused as malformed before anything is hashed or looked up. */
export const MAX_DEVICE_CODE_LENGTH = 128;

export const generateDeviceCode = () => randomToken(CODE_BYTES);

/**
 * The one spelling a code is stored and compared in: surrounding blanks dropped, lowercase (a
 * code copied from a terminal or a mail client may pick up either).
 */
export const normalizeDeviceCode = (code: string) => code.trim().toLowerCase();

/** Codes are kept only as SHA-256: 160 random bits leave nothing to brute-force. */
export const hashDeviceCode = (normalized: string) => createHash('sha256').update(normalized, 'utf8').digest();

/** Constant-time, so a comparison never tells how much of a guess was right. */
export function sameCodeHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
