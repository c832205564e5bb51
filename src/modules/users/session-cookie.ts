/** The cookie a person's session travels in (docs/users.md). */
const SESSION_COOKIE = 'bd_session';

/** The value of the cookie `name` in a Cookie header, or null. */
export function cookieOf(header: string | undefined | null, name: string): string | null {
  if (!header) return null;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || null;
  }
  return null;
}

/** The session cookie's value in a Cookie header, or null. */
export const sessionCookieOf = (header: string | undefined | null) => cookieOf(header, SESSION_COOKIE);

/**
 * `Set-Cookie` for a session: HttpOnly (no script reads it), SameSite=Lax (no cross-site request
 * but a top-level navigation carries it), Secure when served over https, gone with the session's
 * absolute end.
 */
export function sessionCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; Path=/; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}${secure ? '; Secure' : ''}`;
}

export const clearedSessionCookieHeader = (secure: boolean) => sessionCookieHeader('', 0, secure);
