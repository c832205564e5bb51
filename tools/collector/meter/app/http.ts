// HTTP/1.x requests (RFC 9112) from the client's first payload: method, request target, Host and
// User-Agent. Only the first 8 KiB are looked at; a request cut inside its headers still yields
// the request line and the headers before the cut.

import type { AppHints, PayloadSelection } from '../packet.js';
import { asciiPrefix } from '../payload-selection.js';
import type { Inspection } from './inspection.js';

/** Each method with the space that follows it in a request line. */
const METHODS = ['GET ', 'POST ', 'PUT ', 'DELETE ', 'HEAD ', 'OPTIONS ', 'PATCH ', 'CONNECT ', 'TRACE '];
const WINDOW = 8192;
/** Longest request target kept: long enough for real paths, short enough for a flow record. */
const MAX_URI = 2048;
const MAX_HEADER_VALUE = 512;

/** A client's payloads that start with a known method and a space. */
export const HTTP_REQUESTS: PayloadSelection = { ports: [], prefixes: METHODS.map((method) => asciiPrefix(method, true)) };

export function inspectHttp(payload: Uint8Array): Inspection {
  const text = latin1(payload, 0, Math.min(payload.length, WINDOW));
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd >= 0 ? text.slice(0, headEnd) : text;
  // The request line is read by position, and header lines are split only when there are any
  // (splitting cost more than the rest for requests cut by a short snap length).
  const requestEnd = head.indexOf('\r\n');
  const headerLines = requestEnd < 0 ? [] : head.slice(requestEnd + 2).split('\r\n');
  // Without the blank line the last line may be cut mid-value: a cut Host would mislead, so it goes.
  const complete = headEnd >= 0 ? headerLines.length : headerLines.length - 1;
  const { method, uri, protocol } = requestLine(requestEnd < 0 ? head : head.slice(0, requestEnd));
  const http: NonNullable<AppHints['http']> = { method };
  if (protocol !== undefined) http.uri = clean(uri!, MAX_URI); // the space after it says it is whole
  for (let i = 0; i < complete; i++) {
    const line = headerLines[i];
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    // Only the two kept values are cleaned: a request carries many headers, and the cleaning is a regex.
    if (name === 'host' && http.host === undefined) http.host = headerValue(line, colon);
    else if (name === 'user-agent' && http.user_agent === undefined) http.user_agent = headerValue(line, colon);
  }
  const hints: AppHints = { app_name: 'HTTP', http };
  if (complete < 0) return { hints, problem: 'http.truncated' }; // the request line itself is cut
  if (!protocol?.startsWith('HTTP/1.')) return { hints, problem: 'http.bad_request_line' };
  return headEnd >= 0 ? { hints } : { hints, problem: 'http.truncated' };
}

/** The request line's first three space-separated fields, as `line.split(' ', 3)` gives them. */
function requestLine(line: string): { method: string; uri?: string; protocol?: string } {
  const afterMethod = line.indexOf(' ');
  if (afterMethod < 0) return { method: line };
  const method = line.slice(0, afterMethod);
  const afterUri = line.indexOf(' ', afterMethod + 1);
  if (afterUri < 0) return { method, uri: line.slice(afterMethod + 1) };
  const afterProtocol = line.indexOf(' ', afterUri + 1);
  return { method, uri: line.slice(afterMethod + 1, afterUri), protocol: line.slice(afterUri + 1, afterProtocol < 0 ? undefined : afterProtocol) };
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

function headerValue(line: string, colon: number): string {
  return clean(line.slice(colon + 1).trim(), MAX_HEADER_VALUE);
}

/** Control characters would corrupt logs and UIs downstream; they are dropped, and the text bounded. */
function clean(value: string, max: number): string {
  return value.replace(/[\x00-\x1f\x7f]/g, '').slice(0, max);
}
