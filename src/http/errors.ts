/**
 * The documented JSON error bodies (wire.md 2.2), rendered from a DomainError's code, status and
 * extras, for every path that answers outside GraphQL: rest-compat's rows, the ingest endpoint,
 * the server's own 404 and 400.
 */
import type { ServerResponse } from 'node:http';
import { DomainError } from '../errors.js';
import { sendJson } from './kit.js';

export interface RenderedError {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Flat body (wire.md 2.2 A): the code in `error` and `code`, a human `message`, plus extras. */
export function flatError(error: DomainError): RenderedError {
  return { status: error.status, headers: error.headers, body: { error: error.code, code: error.code, message: flatMessage(error), ...error.body } };
}

/**
 * The flat body has no `details`, where GraphQL and the nested envelope name a missing scope
 * (`required_scope`): its message names it instead, so a 403 says which scope to grant.
 */
function flatMessage(error: DomainError): string {
  const scope = error.details.required_scope;
  return typeof scope === 'string' ? `${error.message}: ${scope}` : error.message;
}

/** Nested body (wire.md 2.2 B), used by the search service. */
export function nestedError(error: DomainError): RenderedError {
  return {
    status: error.status,
    headers: error.headers,
    body: {
      error: { code: error.status, message: error.message, type: error.code, details: error.details },
      timestamp: new Date().toISOString().replace('Z', '000+00:00'),
    },
  };
}

export const internalError = (requestId: string) => new DomainError(500, 'internal_error', `Internal error; quote request id ${requestId} when reporting it`);

/** Writes a rendered error, `headers` on top of its own. */
export function sendRendered(res: ServerResponse, rendered: RenderedError, headers?: Record<string, string>): void {
  sendJson(res, rendered.status, rendered.body, { ...rendered.headers, ...headers });
}

/** Writes `error` in the flat body. */
export const sendError = (res: ServerResponse, error: DomainError): void => sendRendered(res, flatError(error));
