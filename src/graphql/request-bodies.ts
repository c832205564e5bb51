/**
 * What yoga reads of a request to /graphql: a body of at most MAX_BODY_BYTES, the one size every
 * body and graphql-ws message is held to (README, Errors), refused before it is buffered whole;
 * and only the content types it parses, anything else a 415 in the documented error body.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError } from '../errors.js';
import { flatError } from '../http/errors.js';
import { MAX_BODY_BYTES } from '../http/kit.js';

export function limitRequestBodies(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, endResponse, fetchAPI }) {
      // Other methods have no parser either: yoga answers them 405 after this hook.
      if (!requestParser) {
        if (request.method === 'POST') endResponse(unsupportedMediaType(fetchAPI.Response));
        return;
      }
      if (!request.body) return;
      if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) throw tooLarge();
      const parse = requestParser;
      setRequestParser(async (req) => parse(new fetchAPI.Request(req.url, { method: req.method, headers: req.headers, body: await bodyWithin(req) })));
    },
  };
}

/** The body, refused once it passes the limit (a chunked body declares no length). */
async function bodyWithin(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(read.value);
  }
  // One plain array: yoga's multipart reader fails on a Blob body.
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/** The rest of the body is left unread: the connection closes after the answer. */
const tooLarge = () =>
  new GraphQLError(`The request body is over ${MAX_BODY_BYTES} bytes (max_body_bytes)`, {
    extensions: { code: 'invalid_request', http: { status: 400, headers: { connection: 'close' } } },
  });

function unsupportedMediaType(Response: typeof globalThis.Response): Response {
  const message = 'POST /graphql takes application/json (or application/graphql, application/x-www-form-urlencoded, multipart/form-data)';
  return new Response(JSON.stringify(flatError(new DomainError(415, 'unsupported_media_type', message)).body), {
    status: 415,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}
