import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRoute } from '../http/routes.js';

/**
 * The operator console pages this service serves itself: plain files, no build step. Each
 * path maps to one file read once at start; nothing is looked up from the request path.
 */
const files: Record<string, { file: string; type: string }> = {
  '/console/device': { file: 'device.html', type: 'text/html; charset=utf-8' },
  '/console/device.js': { file: 'device.js', type: 'text/javascript; charset=utf-8' },
  '/console/graphql-ws.js': { file: 'graphql-ws.js', type: 'text/javascript; charset=utf-8' },
  '/console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const assets = new Map<string, Asset>(
  Object.entries(files).map(([path, { file, type }]) => {
    const body = readFileSync(new URL(file, import.meta.url));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    return [path, { body, type, etag }];
  }),
);

/**
 * Scripts, styles and connections from this origin only (`'self'` covers ws:/wss: to it, for
 * graphql-ws), no inline code, no framing, no form posts: the page URL carries the device code.
 */
const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Every path under /console: the file, 304 when unchanged, 404 or 405 otherwise. */
export const consoleRoute: HttpRoute = { paths: ['/console', '/console/*'], serve: serveConsole };

function serveConsole(req: IncomingMessage, res: ServerResponse, url: URL): void {
  const asset = assets.get(url.pathname);
  if (!asset) return plain(res, 404, 'Not found');
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed', { allow: 'GET, HEAD' });
  const headers = {
    ...securityHeaders,
    'content-type': asset.type,
    etag: asset.etag,
    // Revalidated on every load (a cheap 304), so a deploy is picked up at once.
    'cache-control': 'no-cache',
  };
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, { ...headers, 'content-length': asset.body.length });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...securityHeaders, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}
