import { GraphQLError } from 'graphql';

/**
 * An expected outcome the caller must see: a stable machine code, an HTTP status and a human
 * message. It travels through GraphQL unmasked (it is a GraphQLError) with the code and status in
 * `extensions`, and rest-compat renders the documented REST bodies from exactly those fields.
 * Anything that is not a DomainError is a bug: masked, logged with the request id, answered 500.
 */
export class DomainError extends GraphQLError {
  readonly code: string;
  readonly status: number;
  /** Extra fields the REST body carries beside error/code/message (e.g. `error_type`, `supported`). */
  readonly body: Record<string, unknown>;
  /** Structured reason for clients that read nested envelopes (`details`). */
  readonly details: Record<string, unknown>;
  /** Response headers that belong to the outcome (`Retry-After` of a 429). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { body?: Record<string, unknown>; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    const body = options.body ?? {};
    const details = options.details ?? {};
    const headers = options.headers ?? {};
    super(message, { extensions: { code, http: { status, ...(options.headers && { headers }) }, details, body } });
    this.code = code;
    this.status = status;
    this.body = body;
    this.details = details;
    this.headers = headers;
  }
}

export const badRequest = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError(400, code, message, { details });

export const missingFields = (fields: string[]) =>
  new DomainError(400, 'missing_required_fields', `Missing required fields: ${fields.join(', ')}`, {
    details: { fields },
  });

export const notFound = (code: string, message: string, body?: Record<string, unknown>) =>
  new DomainError(404, code, message, { body });

export const unauthorized = (message: string) => new DomainError(403, 'unauthorized', message);

export const conflict = (code: string, message: string) => new DomainError(409, code, message);

export function authenticationError(reason: string, message: string): DomainError {
  return new DomainError(401, 'authentication_error', message, { details: { reason } });
}

export function authorizationError(
  message: string,
  details: Record<string, unknown> = { reason: 'forbidden' },
): DomainError {
  return new DomainError(403, 'authorization_error', message, { details });
}

export const isDomainError = (error: unknown): error is DomainError => error instanceof DomainError;
