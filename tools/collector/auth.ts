// collector-protocol.md 1: the access key is exchanged for a bearer token at the token endpoint,
// and exchanged again before the token expires. The key itself never goes anywhere else.

import { joinUrl, request, errorText, type Fetch } from './http.js';
import type { Logger } from './logring.js';

export const TOKEN_PATH = '/rest/oauth2/token/1.0';

/** The token endpoint refused the key (401/400/403): it is wrong or revoked; retrying cannot help. */
export class CredentialRejected extends Error {
  override readonly name = 'CredentialRejected';
}

export function splitAccessKey(key: string): { clientId: string; clientSecret: string } {
  const trimmed = key.trim();
  const dot = trimmed.indexOf('.');
  if (dot <= 0 || dot === trimmed.length - 1) throw new Error('the access key must look like <client_id>.<client_secret>');
  return { clientId: trimmed.slice(0, dot), clientSecret: trimmed.slice(dot + 1) };
}

/** The JWT payload, read without verifying it (the collector only needs its own tenant id). */
export function decodeJwtPayload(token: string): Record<string, unknown> {
  const part = token.split('.')[1];
  if (!part) return {};
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

interface CachedToken {
  token: string;
  expiresAtMs: number;
  refreshAtMs: number;
  customerId?: string;
}

export interface TokenSourceOptions {
  baseUrl: string;
  accessKey: string;
  logger: Logger;
  fetch?: Fetch;
  /** Refresh this long before expiry, at most half the token's lifetime. Default 300 s. */
  refreshMarginS?: number;
}

/** A cached bearer token, re-minted before it expires; concurrent callers share one request. */
export class TokenSource {
  private cached?: CachedToken;
  private inflight?: Promise<CachedToken>;
  private readonly credentials: { clientId: string; clientSecret: string };
  refreshes = 0;

  constructor(private readonly options: TokenSourceOptions) {
    this.credentials = splitAccessKey(options.accessKey);
  }

  get clientId(): string {
    return this.credentials.clientId;
  }

  /** The tenant the token was minted for (JWT `aud`), once a token was fetched. */
  get customerId(): string | undefined {
    return this.cached?.customerId;
  }

  get expiresAtMs(): number | undefined {
    return this.cached?.expiresAtMs;
  }

  async token(): Promise<string> {
    const cached = this.cached;
    if (cached && Date.now() < cached.refreshAtMs) return cached.token;
    this.inflight ??= this.mint().finally(() => (this.inflight = undefined));
    return (await this.inflight).token;
  }

  /** The server refused the token (401 or close 4401): the next call mints a new one. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async mint(): Promise<CachedToken> {
    const res = await request(joinUrl(this.options.baseUrl, TOKEN_PATH), {
      json: { client_id: this.credentials.clientId, client_secret: this.credentials.clientSecret },
      timeoutMs: 15_000,
      fetch: this.options.fetch,
    });
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      throw new CredentialRejected(`the access key was refused (${errorText(res)})`);
    }
    const body = res.body as { access_token?: unknown; expires_at?: unknown; expires_in?: unknown } | undefined;
    if (res.status !== 200 || typeof body?.access_token !== 'string') {
      throw new Error(`token request failed (${errorText(res)})`);
    }
    const now = Date.now();
    const expiresAtMs =
      Number(body.expires_at) > 0 ? Number(body.expires_at) * 1000 : now + (Number(body.expires_in) > 0 ? Number(body.expires_in) : 300) * 1000;
    const lifetime = Math.max(0, expiresAtMs - now);
    const margin = Math.min((this.options.refreshMarginS ?? 300) * 1000, lifetime / 2);
    const aud = decodeJwtPayload(body.access_token).aud;
    this.refreshes++;
    this.options.logger.debug('token.minted', { expires_at: new Date(expiresAtMs).toISOString() });
    this.cached = {
      token: body.access_token,
      expiresAtMs,
      refreshAtMs: expiresAtMs - margin,
      customerId: typeof aud === 'string' && aud ? aud : undefined,
    };
    return this.cached;
  }
}
