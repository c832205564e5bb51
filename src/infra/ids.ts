import { randomBytes } from 'node:crypto';

const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';

/** Lowercase base32 of random bytes: URL-safe, dot-free (access keys split at the first dot). */
export const randomToken = (bytes: number): string => base32(randomBytes(bytes));

/** RFC 4648 base32 in lowercase, without padding. */
export function base32(buf: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** Prefixed ids with 80 random bits: unguessable enough for identifiers that are not secrets. */
export const newId = (prefix: string) => `${prefix}_${randomToken(10)}`;

/** Ids callers send are at most this long: a longer one names nothing, and is not echoed whole. */
export const MAX_ID_LENGTH = 200;

/**
 * Whether `id` could name a stored row at all: a lookup with an empty, overlong or NUL-holding id
 * answers "not found" without a statement (PostgreSQL's text cannot hold NUL; the GraphQL doors
 * refuse it, graphql/nul-text.ts, but services are also called from elsewhere).
 */
export const plausibleId = (id: string) => id.length > 0 && id.length <= MAX_ID_LENGTH && !id.includes('\u0000');
