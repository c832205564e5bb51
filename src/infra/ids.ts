import { randomBytes } from 'node:crypto';

const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';

/** Lowercase base32 of random bytes: URL-safe, dot-free (access keys split at the first dot). */
export function randomToken(bytes: number): string {
  const buf = randomBytes(bytes);
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
