import { DomainError } from '../src/errors.js';
import { field } from './route.js';

const BASIC = /^Basic[ ]+([A-Za-z0-9+/]*={0,2})[ ]*$/i;

const malformed = () => new DomainError(401, 'invalid_credentials', 'Authorization header must be "Basic " and base64 of client_id:client_secret');

/**
 * The client credentials of a token request. api-spec.md puts them in the body (`client_id`,
 * `client_secret`); OAuth2 client libraries send them by default as HTTP Basic (RFC 6749 2.3.1:
 * each half form-urlencoded, then `id:secret` in base64). Either is taken, not both: a request
 * uses one authentication method (RFC 6749 2.3). Another scheme in the header (a Bearer token) is
 * no client authentication and is ignored, as it always was here.
 */
export function clientCredentials(authorization: string | undefined, body: Record<string, unknown>): { clientId: unknown; clientSecret: unknown } {
  if (!usesBasic(authorization)) return { clientId: field(body, 'client_id'), clientSecret: field(body, 'client_secret') };
  if (body.client_id !== undefined || body.client_secret !== undefined) {
    throw new DomainError(400, 'invalid_request', 'Send the client credentials in the Authorization header or in the body, not both');
  }
  const encoded = BASIC.exec(authorization!)?.[1];
  if (!encoded || encoded.length % 4 !== 0) throw malformed();
  const pair = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  if (colon < 0) throw malformed();
  return { clientId: formDecoded(pair.slice(0, colon)), clientSecret: formDecoded(pair.slice(colon + 1)) };
}

/** Whether a request authenticates its client with HTTP Basic. */
const usesBasic = (authorization: string | undefined) => /^Basic(?: |$)/i.test(authorization ?? '');

/**
 * The headers of a token request's error: a client that authenticated with HTTP Basic and is
 * refused is answered with the challenge of its scheme (RFC 6749 5.2), which libraries read.
 */
export function clientAuthErrorHeaders(authorization: string | undefined, status: number): Record<string, string> | undefined {
  return status === 401 && usesBasic(authorization) ? { 'www-authenticate': 'Basic realm="token", charset="UTF-8"' } : undefined;
}

/** application/x-www-form-urlencoded decoding of one value: `+` is a space, `%XX` a byte. */
function formDecoded(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    throw malformed();
  }
}
