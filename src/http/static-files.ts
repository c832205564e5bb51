/**
 * Files this server serves from memory (the console, GraphiQL): read or built once, each with an
 * ETag, and gzipped once when that saves bytes, so a page and its bundle cost one read of memory
 * per request and a 304 when the browser has them.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);

export interface StaticFile {
  body: Buffer;
  /** The gzipped body, when smaller; sent to a client that accepts gzip. */
  gzipped?: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

/** Content-hashed names never change meaning: a year in any cache. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Revalidated on every load (a cheap 304), so a deploy is picked up at once. */
export const REVALIDATE = 'no-cache';

/** Compressing a few hundred bytes gains nothing the headers do not cost back. */
const MIN_GZIP_BYTES = 1024;

/** Gzipped in libuv's thread pool: GraphiQL's 9 MB would hold the event loop for a quarter of a second. */
export async function staticFile(content: Buffer | string, type: string, cacheControl: string): Promise<StaticFile> {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content);
  const etag = `"${contentHash(body)}"`;
  const gzipped = body.length >= MIN_GZIP_BYTES && /^(text\/|application\/(json|javascript))/.test(type) ? await gzipAsync(body) : undefined;
  return { body, type, etag, cacheControl, ...(gzipped && gzipped.length < body.length && { gzipped }) };
}

/** 22 characters of the body's SHA-256 (base64url): enough to tell versions apart. */
export const contentHash = (body: Buffer | string) => createHash('sha256').update(body).digest('base64url').slice(0, 22);

/** GET or HEAD of `file`: 304 when the client's copy is current, gzip when it takes it. */
export function sendStaticFile(req: IncomingMessage, res: ServerResponse, file: StaticFile, headers: Record<string, string>): void {
  const common = { ...headers, 'content-type': file.type, etag: file.etag, 'cache-control': file.cacheControl, vary: 'accept-encoding' };
  if (req.headers['if-none-match'] === file.etag) {
    res.writeHead(304, common);
    return void res.end();
  }
  const gzip = file.gzipped && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? file.gzipped! : file.body;
  res.writeHead(200, { ...common, ...(gzip && { 'content-encoding': 'gzip' }), 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** A short text answer (404, 405, 503) under the same headers as the files beside it. */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
