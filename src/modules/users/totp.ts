import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { base32 } from '../../infra/ids.js';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 30-second steps,
 * 6 digits, as every authenticator app reads an `otpauth://` URI. Tested against RFC 6238's
 * appendix B vectors (totp.unit.test.ts).
 */
const TOTP_STEP_SECONDS = 30;
const TOTP_DIGITS = 6;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 in capitals without padding: how authenticator apps take a secret. */
export const base32Encode = (bytes: Uint8Array): string => base32(bytes).toUpperCase();

export function base32Decode(text: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('not base32');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new secret: 160 bits, RFC 4226's recommended length for HMAC-SHA1. */
export const newTotpSecret = () => base32Encode(randomBytes(20));

/** RFC 4226 5.3: the HOTP value of `counter`, with `digits` digits and the given HMAC. */
export function hotp(key: Uint8Array, counter: bigint, digits = TOTP_DIGITS, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(counter);
  const mac = createHmac(algorithm, key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(binary).padStart(digits, '0');
}

/** The time step of an instant (ms). */
export const totpStep = (atMs: number): bigint => BigInt(Math.floor(atMs / 1000 / TOTP_STEP_SECONDS));

/**
 * The step `code` is valid for, within one step either side of `atMs` (clocks drift), or null.
 * Every candidate is compared, in constant time, so the answer's timing tells nothing.
 */
export function matchingStep(secret: string, code: string, atMs: number): bigint | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const key = base32Decode(secret);
  const now = totpStep(atMs);
  let found: bigint | null = null;
  for (const step of [now - 1n, now, now + 1n]) {
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(code)) && found === null) found = step;
  }
  return found;
}

/** What an authenticator app scans: `otpauth://totp/Issuer:email?secret=…&issuer=Issuer`. */
export function otpauthUri(secret: string, account: string, issuer = 'Breach Detection'): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_SECONDS}`;
}
