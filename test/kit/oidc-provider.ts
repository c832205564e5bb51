import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestAccount {
  email: string;
  emailVerified?: boolean;
  groups?: string[];
  /** The `name` claim, when the account has one. */
  name?: string;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by the login name typed at the provider's (development) sign-in form. */
  accounts: Map<string, TestAccount>;
  stop(): Promise<void>;
}

/**
 * A real OpenID provider (the npm `oidc-provider`) on a loopback port, with one confidential
 * client whose redirect URI is `redirectUri`, and its development sign-in and consent forms
 * (any password). ID tokens carry `email`, `email_verified`, `groups` and, when the account has one, `name`.
 */
export async function startOidcProvider(redirectUri: string): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, TestAccount>();
  const clientId = 'breach-detection-console';
  const clientSecret = 'a client secret of the test provider, long enough';
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], response_types: ['code'], grant_types: ['authorization_code'] },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['groups', 'name'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['test cookie key of the oidc provider'] },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: account.email,
          email_verified: account.emailVerified ?? true,
          groups: account.groups ?? [],
          ...(account.name === undefined ? {} : { name: account.name }),
        }),
      };
    },
  });
  // Its development-only interactions say so on stderr at every start.
  provider.on('server_error', () => undefined);
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A browser's way through a sign-on that starts at `startUrl`: redirects followed by hand with a
 * cookie jar per host, the provider's sign-in form filled with `login`, its consent accepted.
 * Ends with the service's answer at `callbackPath` (or the first answer that is neither a
 * redirect nor a form of the provider): that response, its URL and the cookies the service set.
 */
export async function browseSignOn(
  startUrl: string,
  issuer: string,
  login: string,
  callbackPath = '/auth/oidc/callback',
): Promise<{ final: Response; url: string; cookies: Map<string, string> }> {
  const jars = new Map<string, Map<string, string>>();
  const jarOf = (url: string) => jars.get(new URL(url).host) ?? jars.set(new URL(url).host, new Map()).get(new URL(url).host)!;
  let url = startUrl;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const jar = jarOf(url);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie && { cookie }) } });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (new URL(url).pathname === callbackPath) return { final: res, url, cookies: jarOf(startUrl) };
    if (location) {
      url = new URL(location, url).href;
      init = {};
      continue;
    }
    const html = url.startsWith(issuer) && res.status === 200 ? await res.text() : '';
    const form = /action="([^"]+)"[\s\S]*?name="prompt" value="(\w+)"/.exec(html);
    if (!form) return { final: res, url, cookies: jarOf(startUrl) };
    url = new URL(form[1]!, url).href;
    const body = new URLSearchParams(form[2] === 'login' ? { prompt: 'login', login, password: 'any' } : { prompt: form[2]! });
    init = { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error(`sign-on did not end within 20 steps, at ${url}`);
}
