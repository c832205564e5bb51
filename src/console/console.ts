import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRoute } from '../http/routes.js';
import { labelRoute } from '../infra/http-metrics.js';
import { IMMUTABLE, REVALIDATE, type StaticFile, sendStaticFile, sendText, staticFile } from '../http/static-files.js';

/**
 * Everything under /console: the console app (src/console/app, built by tools/build-console.ts
 * into build/console/) and the device approval page (plain files beside this one). The app's
 * assets have content-hashed names and are cached for a year; every page is revalidated on each
 * load. Each path maps to a file read once; nothing is looked up from the request path.
 */
/** build/console/ in the repository, dist/build/console/ beside a compiled build: where console-build.cjs says. */
const BUILD_DIR = fileURLToPath(new URL('../../build/console', import.meta.url));

const HTML = 'text/html; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

const deviceFiles = new Map<string, StaticFile>(
  await Promise.all(
    Object.entries({
      '/console/device': ['device.html', HTML],
      '/console/device.js': ['device.js', JS],
      '/console/graphql-ws.js': ['graphql-ws.js', JS],
      '/console/console.css': ['console.css', CSS],
    }).map(async ([path, [file, type]]) => [path, await staticFile(readFileSync(new URL(file!, import.meta.url)), type!, REVALIDATE)] as const),
  ),
);

const TYPES: Record<string, string> = { '.js': JS, '.css': CSS, '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2' };

interface AppBuild {
  index: StaticFile;
  assets: Map<string, StaticFile>;
}

let appBuild: Promise<AppBuild> | undefined;

/** The built app, read on its first request; undefined (asked again next time) while there is none or it cannot be read. */
async function loadAppBuild(): Promise<AppBuild | undefined> {
  if (!appBuild && existsSync(join(BUILD_DIR, 'index.html'))) {
    appBuild = readAppBuild().catch((error: unknown) => {
      appBuild = undefined;
      throw error;
    });
  }
  return appBuild?.catch(() => undefined);
}

async function readAppBuild(): Promise<AppBuild> {
  const assetsDir = join(BUILD_DIR, 'assets');
  const names = existsSync(assetsDir) ? readdirSync(assetsDir) : [];
  const assets = new Map<string, StaticFile>();
  for (const name of names) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (type) assets.set(`/console/assets/${name}`, await staticFile(readFileSync(join(assetsDir, name)), type, IMMUTABLE));
  }
  return { index: await staticFile(readFileSync(join(BUILD_DIR, 'index.html')), HTML, REVALIDATE), assets };
}

/**
 * Scripts, styles and connections (fetch and graphql-ws: `'self'` covers ws:/wss: to this origin)
 * from this origin only, no inline code, no framing, no form posts (forms are sent by script, and
 * the device page's URL carries its code).
 */
const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; font-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** A page of the app is any path without a file extension (the app routes it); a file path must name a file. */
const isAppPage = (pathname: string) => !/\.[^/]*$/.test(pathname);

/** Every path under /console: its file, 304 when unchanged, 404 or 405 otherwise; 503 while the app is not built. */
export const consoleRoute: HttpRoute = { paths: ['/console', '/console/*'], serve: serveConsole };

async function serveConsole(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, 'Method not allowed', { ...securityHeaders, allow: 'GET, HEAD' });
  const device = deviceFiles.get(url.pathname);
  if (device) return sendStaticFile(req, res, device, securityHeaders);
  const build = await loadAppBuild();
  const page = isAppPage(url.pathname);
  // The app's paths are the person's (an investigation's id...): one metrics label for all of them.
  labelRoute(req, page ? '/console/*' : '/console/assets/*');
  const file = page ? build?.index : build?.assets.get(url.pathname);
  if (file) return sendStaticFile(req, res, file, securityHeaders);
  if (!build && page) {
    return sendText(
      res,
      503,
      'The console is not built (or its build cannot be read): run npm run build, or npm start, which builds it when it is missing.',
      securityHeaders,
    );
  }
  sendText(res, 404, 'Not found', securityHeaders);
}
