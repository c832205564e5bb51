/**
 * ES256 signatures in their one accepted form. An ECDSA signature (r, s) has a twin (r, n − s)
 * that verifies just as well, so anyone holding a genuine token could mint a second, different
 * string that passes: a token would no longer be one string. WebCrypto neither produces nor
 * demands either half, so we do both: every token we sign carries the low S (s ≤ n/2), and a
 * token whose signature is not a low S, canonically base64url-encoded, is refused unverified.
 */

/** The order n of P-256's group, and n/2 rounded down. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_ORDER = P256_ORDER >> 1n;
const HALF = 32;

const sOf = (signature: Buffer): bigint => BigInt(`0x${signature.subarray(HALF).toString('hex')}`);

/** The compact JWS with its ES256 signature's S replaced by n − S when above n/2. */
export function withLowS(token: string): string {
  const cut = token.lastIndexOf('.');
  const signature = Buffer.from(token.slice(cut + 1), 'base64url');
  const s = sOf(signature);
  if (s <= HALF_ORDER) return token;
  const low = Buffer.from((P256_ORDER - s).toString(16).padStart(HALF * 2, '0'), 'hex');
  return `${token.slice(0, cut + 1)}${Buffer.concat([signature.subarray(0, HALF), low]).toString('base64url')}`;
}

/**
 * Whether a compact JWS's signature is 64 bytes with 0 < S ≤ n/2, written as base64url writes it
 * (unused trailing bits would otherwise give one signature several spellings).
 */
export function hasLowS(token: string): boolean {
  const encoded = token.slice(token.lastIndexOf('.') + 1);
  const signature = Buffer.from(encoded, 'base64url');
  if (signature.length !== HALF * 2 || signature.toString('base64url') !== encoded) return false;
  const s = sOf(signature);
  return s > 0n && s <= HALF_ORDER;
}
