import type { ServerResponse } from 'node:http';
import { DomainError } from '../../errors.js';
import type { HttpRoute } from '../../http/routes.js';
import { clientAddress } from '../../infra/client-address.js';
import type { Logger } from '../../infra/logger.js';
import type { Services } from '../../services.js';
import { OIDC_CALLBACK_PATH, OIDC_START_PATH } from './oidc.service.js';
import { cookieOf, sessionCookieHeader } from './session-cookie.js';

/** Where a person lands once signed on: the console. */
const AFTER_SIGN_ON = '/console/';
/** The cookie holding a sign-on's state in the browser that started it, for as long as a sign-on may take. */
const STATE_COOKIE = 'bd_oidc_state';
const STATE_SECONDS = 600;
const stateCookie = (value: string, maxAge: number, secure: boolean) =>
  `${STATE_COOKIE}=${value}; HttpOnly; Path=${OIDC_CALLBACK_PATH}; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;

/**
 * The two browser doors of single sign-on (docs/users.md): `GET /auth/oidc/start?customer=…`
 * sends the browser to the tenant's provider; the provider sends it back to
 * `GET /auth/oidc/callback`, which sets the session cookie and goes on to the console. A refusal is
 * a plain page saying what to do.
 */
export function oidcRoute(services: Services, trustedProxies: ReadonlySet<string>, logger: Logger): HttpRoute {
  return {
    paths: [OIDC_START_PATH, OIDC_CALLBACK_PATH],
    // GET only: a sign-on starts a login row, which a HEAD (a link checker) has no business doing.
    methods: ['GET'],
    serve: async (req, res, url, requestId) => {
      try {
        const origin = { address: clientAddress(req, trustedProxies) };
        const { secureCookies, sessionMaxSeconds } = services.signIn.settings;
        if (url.pathname === OIDC_START_PATH) {
          const started = await services.oidc.start(url.searchParams.get('customer') ?? '', origin);
          res.setHeader('set-cookie', stateCookie(started.state, STATE_SECONDS, secureCookies));
          return redirect(res, 302, started.url.href);
        }
        const browserState = cookieOf(req.headers.cookie, STATE_COOKIE);
        const signedIn = await services.oidc.callback(url, browserState, origin, req.headers['user-agent'] ?? null);
        res.setHeader('set-cookie', [sessionCookieHeader(signedIn.cookieValue, sessionMaxSeconds, secureCookies), stateCookie('', 0, secureCookies)]);
        redirect(res, 303, AFTER_SIGN_ON);
      } catch (error) {
        if (!(error instanceof DomainError)) logger.error('oidc.failed', { requestId, error });
        const status = error instanceof DomainError ? error.status : 500;
        const message = error instanceof DomainError ? error.message : `Single sign-on failed; quote request ${requestId} when reporting it`;
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
        res.end(`${message}\n`);
      }
    },
  };
}

function redirect(res: ServerResponse, status: 302 | 303, location: string): void {
  res.writeHead(status, { location, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}
