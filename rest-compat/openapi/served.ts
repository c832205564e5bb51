import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { notFound } from '../../src/errors.js';
import { RawResponse, type ServedRoute } from '../route.js';
import { OPENAPI_PATH } from './document.js';

export const DOCS_PATH = '/rest/docs';

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The reference page's files, each read once when first asked for; nothing comes from the request path. */
const pageFiles: Record<string, { path: string; type: string }> = {
  'swagger-ui.css': { path: join(swaggerUi, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { path: join(swaggerUi, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'docs.js': { path: new URL('page/docs.js', import.meta.url).pathname, type: 'text/javascript; charset=utf-8' },
};

/**
 * Scripts, styles and connections from this origin only, so the page works offline and cannot
 * reach another host; inline styles are let in because Swagger UI sets them.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const once = <T>(make: () => T): (() => T) => {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
};

const asset = (body: Buffer | string, type: string, cache: string) =>
  new RawResponse(
    200,
    { ...PAGE_HEADERS, 'content-type': type, 'cache-control': cache, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` },
    body,
  );

/**
 * GET /rest/openapi.json (the document, built on first request) and GET /rest/docs (a reference
 * page rendering it), both public. `document` is called once.
 */
export function apiDocsRoutes(document: () => unknown): ServedRoute[] {
  const json = once(() => JSON.stringify(document()));
  const page = once(() => readFileSync(new URL('page/docs.html', import.meta.url)));
  const files = new Map(Object.entries(pageFiles).map(([name, { path, type }]) => [name, once(() => asset(readFileSync(path), type, 'public, max-age=3600'))]));
  return [
    {
      method: 'GET',
      path: OPENAPI_PATH,
      access: 'public',
      doc: {
        summary: 'OpenAPI document',
        description: 'This document: every /rest and /search path, generated from the route table.',
        contentTypes: ['application/json'],
        schema: { type: 'object' },
      },
      serve: async () => new RawResponse(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' }, json()),
    },
    {
      method: 'GET',
      path: DOCS_PATH,
      access: 'public',
      doc: {
        summary: 'API reference page',
        description: 'This document rendered for reading, served with its viewer from this server.',
        contentTypes: ['text/html'],
      },
      serve: async () => asset(page(), 'text/html; charset=utf-8', 'no-cache'),
    },
    {
      method: 'GET',
      path: `${DOCS_PATH}/:file`,
      access: 'public',
      doc: { summary: 'API reference page asset', description: "The viewer's script and style sheet.", contentTypes: ['text/css', 'text/javascript'] },
      serve: async ({ params }) => {
        const file = Object.hasOwn(pageFiles, params.file!) ? files.get(params.file!) : undefined;
        if (!file) throw notFound('not_found', `No such file: ${DOCS_PATH}/${params.file}`);
        return file();
      },
    },
  ];
}
