// HTTP/1.x requests (RFC 9112) from the client's first payload: method, request target, Host and
// User-Agent. Only the first 8 KiB are looked at; a request cut inside its headers still yields
// the request line and the headers before the cut.

import type { AppHints } from '../packet.js';
import { startsWithAscii, type Inspection } from './inspection.js';

/** Each method with the space that follows it in a request line. */
const METHODS = ['GET ', 'POST ', 'PUT ', 'DELETE ', 'HEAD ', 'OPTIONS ', 'PATCH ', 'CONNECT ', 'TRACE '];
const WINDOW = 8192;
/** Longest request target kept: long enough for real paths, short enough for a flow record. */
const MAX_URI = 2048;
const MAX_HEADER_VALUE = 512;

/** True when the payload starts with a known method and a space. */
export function looksLikeHttpRequest(payload: Uint8Array): boolean {
  for (const method of METHODS) if (startsWithAscii(payload, method)) return true;
  return false;
}

export function inspectHttp(payload: Uint8Array): Inspection {
  const text = latin1(payload, 0, Math.min(payload.length, WINDOW));
  const headEnd = text.indexOf('\r\n\r\n');
  const lines = (headEnd >= 0 ? text.slice(0, headEnd) : text).split('\r\n');
  // Without the blank line the last line may be cut mid-value: a cut Host would mislead, so it goes.
  const complete = headEnd >= 0 ? lines.length : lines.length - 1;
  const [method, uri, protocol] = lines[0].split(' ', 3);
  const http: NonNullable<AppHints['http']> = { method };
  if (protocol !== undefined) http.uri = clean(uri, MAX_URI); // the space after it says it is whole
  for (let i = 1; i < complete; i++) {
    const line = lines[i];
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = clean(line.slice(colon + 1).trim(), MAX_HEADER_VALUE);
    if (name === 'host' && http.host === undefined) http.host = value;
    else if (name === 'user-agent' && http.user_agent === undefined) http.user_agent = value;
  }
  const hints: AppHints = { app_name: 'HTTP', http };
  if (complete === 0) return { hints, problem: 'http.truncated' }; // the request line itself is cut
  if (!protocol?.startsWith('HTTP/1.')) return { hints, problem: 'http.bad_request_line' };
  return headEnd >= 0 ? { hints } : { hints, problem: 'http.truncated' };
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/** Control characters would corrupt logs and UIs downstream; they are dropped, and the text bounded. */
function clean(value: string, max: number): string {
  return value.replace(/[\x00-\x1f\x7f]/g, '').slice(0, max);
}
