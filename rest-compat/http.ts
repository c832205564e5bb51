import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '../src/errors.js';
import { releaseWhenClosed, serializeJson } from '../src/infra/raw-json.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Writes `body` as JSON; raw JSON inside it (a page of flows) goes out as the bytes it is. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const json = serializeJson(body);
  const { chunks } = json;
  releaseWhenClosed(res, json);
  let length = 0;
  for (const c of chunks) length += c.byteLength;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': length,
    ...headers,
  });
  if (length > SLICE_BYTES) return writeInSlices(res, chunks);
  if (chunks.length === 1) return void res.end(chunks[0]);
  res.cork(); // one writev for the chunks; end() uncorks
  for (const c of chunks) res.write(c);
  res.end();
}

/**
 * The most a response hands the kernel in one event-loop turn. Over loopback, a client reading as
 * fast as we write kept one writev of a 63 MB page in the kernel for 20–40 ms, and every request
 * behind it (token issuance) waited that long; a megabyte takes ~1 ms.
 */
export const SLICE_BYTES = 1024 * 1024;

/**
 * Writes the chunks a slice per turn. A write the kernel takes whole calls back within the same
 * turn (process.nextTick), so the next slice waits for setImmediate, after the turn's other I/O.
 */
function writeInSlices(res: ServerResponse, chunks: readonly Uint8Array[]): void {
  const pieces = chunks.filter((c) => c.byteLength > 0);
  let index = 0;
  let offset = 0;
  const writeSlice = (): void => {
    if (res.destroyed) return;
    if (index === pieces.length) return void res.end();
    res.cork(); // the slice's pieces (envelope and records) in one writev
    for (let room = SLICE_BYTES; room > 0 && index < pieces.length; ) {
      const piece = pieces[index]!.subarray(offset, offset + room);
      room -= piece.byteLength;
      offset += piece.byteLength;
      if (offset === pieces[index]!.byteLength) {
        index++;
        offset = 0;
      }
      const last = room === 0 || index === pieces.length;
      res.write(piece, last ? afterSlice : undefined);
    }
    res.uncork();
  };
  const afterSlice = (error?: Error | null) => {
    if (!error) setImmediate(writeSlice);
  };
  writeSlice();
}

/**
 * Reads the body, refusing more than `maxBytes` before buffering it. Plain stream events: an
 * async iterator over the request cost ~0.05 ms a request, most of a small body's read.
 */
export function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume(); // drain the rest unread; the answer is already decided
      reject(tooLarge(maxBytes));
    };
    // A client that hangs up mid-body gets no answer, but is no internal error either.
    const cutOff = () => reject(new DomainError(400, 'incomplete_body', 'The request body ended early'));
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', cutOff);
    req.once('close', () => req.complete || cutOff());
  });
}

export const tooLarge = (maxBytes: number) =>
  new DomainError(413, 'payload_too_large', `Request body must be at most ${maxBytes} bytes`);

/**
 * Request bodies as the documented clients send them: JSON objects (also on GET, and empty with
 * a JSON content type), or form-encoded fields for the token endpoint.
 */
export function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  const text = raw.toString('utf8');
  if (text.trim() === '') return {};
  if (contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DomainError(400, 'invalid_json', 'Request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DomainError(400, 'invalid_json', 'Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
