import { type ExecutionResult, GraphQLError } from 'graphql';
import { DomainError } from '../src/errors.js';

/**
 * The error a failed operation answers with: a DomainError; a 400 for GraphQL's own refusals of
 * the input (variable coercion, which carries no path, or an argument a plugin refused); anything
 * else is a bug, returned for the router to log and answer 500.
 */
export function errorOf(result: ExecutionResult): DomainError | GraphQLError | undefined {
  const first = result.errors?.[0];
  if (!first) return undefined;
  const original = first.originalError;
  if (original instanceof DomainError) return original;
  if (!first.path || original instanceof GraphQLError) return new DomainError(400, 'invalid_request', first.message);
  return first;
}

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

export const internalError = (requestId: string) =>
  new DomainError(500, 'internal_error', `Internal error; quote request id ${requestId} when reporting it`);
