import { SignJWT, errors as joseErrors, jwtVerify, decodeProtectedHeader } from 'jose';
import { authenticationError } from '../errors.js';
import { randomToken } from '../infra/ids.js';
import { type KeyRing, SIGNING_ALG } from './keyring.js';
import { hasLowS, withLowS } from './low-s.js';

export const TOKEN_ISSUER = 'breach-detection';

export interface TokenClaims {
  customerId: string;
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

export interface IssuedToken {
  access_token: string;
  expires_in: number;
  expires_at: number;
  token_type: 'Bearer';
}

/**
 * JWTs as the SDK reads them: `aud` is the customer_id as one string and `scopes` an array.
 * Verified tokens are remembered until they expire, so a client's steady stream of calls pays
 * for the signature check once; revocation is checked on every call by the caller of `verify`.
 */
export class TokenService {
  private verified = new Map<string, TokenClaims>();

  constructor(
    private readonly keys: KeyRing,
    private readonly ttlSeconds: number,
  ) {}

  async issue(claims: Omit<TokenClaims, 'expiresAt'>): Promise<IssuedToken> {
    const now = Math.floor(Date.now() / 1000);
    const expiresAt = now + this.ttlSeconds;
    const { kid, key } = this.keys.signingKey();
    const signed = await new SignJWT({ scopes: claims.scopes, client_id: claims.clientId })
      .setProtectedHeader({ alg: SIGNING_ALG, typ: 'JWT', kid })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(claims.customerId)
      .setSubject(claims.clientId)
      .setIssuedAt(now)
      .setExpirationTime(expiresAt)
      .setJti(randomToken(10))
      .sign(key);
    return { access_token: withLowS(signed), expires_in: this.ttlSeconds, expires_at: expiresAt, token_type: 'Bearer' };
  }

  async verify(token: string): Promise<TokenClaims> {
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.expiresAt * 1000 > Date.now()) return cached;
      this.verified.delete(token);
      throw authenticationError('token_expired', 'Access token expired');
    }
    const claims = await this.verifySignature(token);
    if (this.verified.size >= 20_000) this.verified.clear();
    this.verified.set(token, claims);
    return claims;
  }

  private async verifySignature(token: string): Promise<TokenClaims> {
    // Before the costly check: a high S is the malleated twin of a signature (low-s.ts).
    if (!hasLowS(token)) throw invalidToken();
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw invalidToken();
    }
    const key = kid ? await this.keys.verificationKey(kid) : undefined;
    if (!key) throw invalidToken();
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [SIGNING_ALG], issuer: TOKEN_ISSUER });
      const { aud, sub, scopes, exp } = payload;
      if (typeof aud !== 'string' || !aud || typeof sub !== 'string' || typeof exp !== 'number') throw invalidToken();
      if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) throw invalidToken();
      return { customerId: aud, clientId: sub, scopes, expiresAt: exp };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw authenticationError('token_expired', 'Access token expired');
      throw invalidToken();
    }
  }
}

const invalidToken = () => authenticationError('invalid_token', 'Access token is invalid');
