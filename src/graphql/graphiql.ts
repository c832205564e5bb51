/**
 * GraphiQL at GET /graphql for a browser (Accept: text/html), working with no internet access:
 * the editor is @graphql-yoga/render-graphiql's bundle, served by this server as files of its own
 * under /graphql/graphiql/ (the package's own page inlines 9 MB of script, which a strict
 * Content-Security-Policy would refuse). The files are built on the first request for the page, so
 * a server nobody browses never loads the bundle.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRoute } from '../http/routes.js';
import { labelRoute } from '../infra/http-metrics.js';
import { IMMUTABLE, REVALIDATE, type StaticFile, contentHash, sendStaticFile, sendText, staticFile } from '../http/static-files.js';

export const GRAPHIQL_ASSETS = '/graphql/graphiql/';

/**
 * The note a person reads first: where a token comes from. Requests carry the console's session
 * too (`credentials: same-origin`, and the CSRF header yoga asks of a cookie-authenticated request).
 */
const DEFAULT_QUERY = `# GraphiQL for this service's GraphQL API.
# Signed in to /console in this browser? Requests carry that session.
# Otherwise put {"Authorization": "Bearer <token>"} in Headers below,
# with a token from POST /rest/oauth2/token/1.0 given an API client's
# {"client_id": "cl_…", "client_secret": "…"} (README: Admin CLI,
# npm run -s admin -- client create --customer cus_… --scopes …).

query WhoAmI {
  viewer {
    customerId
    scopes
  }
}
`;

/**
 * Scripts, workers and connections (HTTP and graphql-ws) from this origin only; styles and fonts
 * may also be inline or data: URLs, as the editor (Monaco) writes them.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; " +
    "font-src 'self' data:; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const JS = 'text/javascript; charset=utf-8';

interface GraphiqlFiles {
  page: StaticFile;
  assets: Map<string, StaticFile>;
}

let built: Promise<GraphiqlFiles> | undefined;

/** The bundle's parts under content-hashed names, and the page naming them. */
async function buildFiles(): Promise<GraphiqlFiles> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const assets = new Map<string, StaticFile>();
  const gzipping: Promise<unknown>[] = [];
  const add = (name: string, ext: string, body: Buffer | string, type: string) => {
    const path = `${GRAPHIQL_ASSETS}${name}.${contentHash(body)}.${ext}`;
    gzipping.push(staticFile(body, type, IMMUTABLE).then((file) => assets.set(path, file)));
    return path;
  };
  const start = readFileSync(new URL('graphiql-start.js', import.meta.url), 'utf8');
  const settings = {
    // Monaco's workers by the labels it asks for them by.
    workers: {
      editorWorkerService: add('editor.worker', 'js', bundle.editorWorkerService, JS),
      json: add('json.worker', 'js', bundle.jsonWorker, JS),
      graphql: add('graphql.worker', 'js', bundle.graphqlWorker, JS),
    },
    graphiql: {
      endpoint: '/graphql',
      title: 'GraphiQL · breach detection',
      defaultQuery: DEFAULT_QUERY,
      credentials: 'same-origin',
      additionalHeaders: { 'x-graphql-yoga-csrf': '1' },
      subscriptionsProtocol: 'WS',
    },
  };
  // `<` escaped so that no value can close the script element holding the settings.
  const settingsJson = JSON.stringify(settings).replace(/</g, '\\u003c');
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${settings.graphiql.title}</title>
    <link rel="icon" href="${add('favicon', 'ico', dataUrlBytes(bundle.favicon), 'image/x-icon')}" />
    <link rel="stylesheet" href="${add('graphiql', 'css', bundle.css, 'text/css; charset=utf-8')}" />
  </head>
  <body>
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root" style="height: 100vh"></div>
    <script type="application/json" id="graphiql-settings">${settingsJson}</script>
    <script src="${add('graphiql', 'js', bundle.js, JS)}"></script>
    <script src="${add('start', 'js', start, JS)}"></script>
  </body>
</html>
`;
  await Promise.all(gzipping);
  return { page: await staticFile(page, 'text/html; charset=utf-8', REVALIDATE), assets };
}

/** The bytes of a base64 `data:` URL (the bundle's favicon). */
const dataUrlBytes = (url: string) => Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');

/** Built once; a failure is answered (503) and tried again on the next request. */
const files = () =>
  (built ??= buildFiles().catch((error: unknown) => {
    built = undefined;
    throw error;
  }));

const unavailable = (res: ServerResponse, error: unknown) => sendText(res, 503, `GraphiQL could not be loaded: ${(error as Error).message}`, PAGE_HEADERS);

/** A browser asking for /graphql: a GET (or HEAD) that takes HTML, as yoga itself tells GraphiQL requests. */
export function wantsGraphiql(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && String(req.headers.accept ?? '').includes('text/html');
}

export async function serveGraphiqlPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
  await files().then(
    ({ page }) => sendStaticFile(req, res, page, PAGE_HEADERS),
    (error: unknown) => unavailable(res, error),
  );
}

/** GET /graphql/graphiql/<name>.<hash>.<ext>: the page's scripts, workers, style sheet and icon. */
export const graphiqlAssetsRoute: HttpRoute = {
  paths: [`${GRAPHIQL_ASSETS}*`],
  methods: ['GET', 'HEAD'],
  async serve(req, res, url) {
    labelRoute(req, `${GRAPHIQL_ASSETS}*`);
    const graphiql = await files().catch((error: unknown) => unavailable(res, error));
    if (!graphiql) return;
    const file = graphiql.assets.get(url.pathname);
    if (file) return sendStaticFile(req, res, file, PAGE_HEADERS);
    sendText(res, 404, 'Not found', PAGE_HEADERS);
  },
};
