import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the test provider knows: the login name is the account id. */
export interface ProviderAccount {
  email: string;
  emailVerified?: boolean;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

/**
 * A real OpenID provider (the npm `oidc-provider`, as identity products embed it) on a loopback
 * port, with one confidential client for `redirectUri`, PKCE required, and its development login
 * and consent pages, which `signInAtProvider` fills in as a browser would.
 */
export async function startTestProvider(redirectUri: string, accounts: Record<string, ProviderAccount>): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'breach-console';
  const clientSecret = 'provider-side-secret-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['groups'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, groups: account.groups ?? [] }),
      };
    },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['test-provider-cookie-key'] },
  });
  provider.on('server_error', (_ctx: unknown, error: Error) => console.error('provider:', error));
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser's cookie jar, per origin, as far as these flows need one. */
class CookieJar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Follows `authorizationUrl` as a browser would, signing in as `login` on the provider's login page
 * and consenting, until the provider redirects to `redirectUri`: that URL (with code and state).
 */
export async function signInAtProvider(authorizationUrl: string, login: string, redirectUri: string): Promise<URL> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, { method: body ? 'POST' : 'GET', body, headers: { cookie: jar.header() }, redirect: 'manual' });
    jar.take(res);
    body = undefined;
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      url = next.href;
      continue;
    }
    const page = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page);
    if (!form) throw new Error(`the provider answered ${res.status} without a form or a redirect:\n${page.slice(0, 500)}`);
    body = new URLSearchParams();
    for (const [input] of form[2].matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(input)?.[1];
      if (name) body.set(name, /value="([^"]*)"/.exec(input)?.[1] ?? '');
    }
    if (body.has('login')) body.set('login', login);
    if (body.has('password')) body.set('password', 'any');
    url = new URL(form[1], url).href;
  }
  throw new Error('the provider did not come back within 20 steps');
}
