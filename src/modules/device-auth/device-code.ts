import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../../infra/ids.js';

/** 20 random bytes: 160 bits, 32 characters of lowercase base32 (URL-safe, no dots). */
const CODE_BYTES = 20;
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

/**
 * The user code (RFC 8628 section 6.1): 8 characters of 20 consonants, no vowels (no words) and
 * none that read alike (0/O, 1/I/L, 5/S...): 20^8 ≈ 2.6·10^10 codes. It is what a person reads on
 * the device and finds again on the approval page; it can see and approve a request, never poll.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
/** The stored spelling: the alphabet's letters only, so `bcdf-ghjk`, `BCDF GHJK` and `BCDFGHJK` are one code. */
export const USER_CODE_PATTERN = /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/;

export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** Uppercase, without the separators a person types or copies (`-`, blanks); may still be malformed. */
export const normalizeUserCode = (code: string) => code.toUpperCase().replace(/[\s-]+/g, '');

/** `XXXX-XXXX`, as the device and the page show it. */
export const formatUserCode = (normalized: string) => `${normalized.slice(0, 4)}-${normalized.slice(4)}`;

/**
 * Kept only as SHA-256, like the device code. Unlike it, 2.6·10^10 codes are few enough to search
 * offline, so the hash guards against casual reading of the table, not against a stolen copy;
 * online guessing is what the rate limits and the code's short life stop.
 */
export const hashUserCode = (normalized: string) => createHash('sha256').update(`user:${normalized}`, 'utf8').digest();

/** Constant-time, so a comparison never tells how much of a guess was right. */
export function sameCodeHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
