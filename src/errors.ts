import { GraphQLError } from 'graphql';

/**
 * Every code an expected error carries on the wire (`code` in the flat body, `type` in the nested
 * envelope, `extensions.code` in GraphQL): the values clients may branch on. docs/errors.md lists
 * them, and a test keeps the two the same.
 */
export const ERROR_CODES = {
  // The request
  invalid_request: 'A field or parameter has a wrong value or type; the message (and `details.field`) names it',
  validation_error: 'A search or explore request is invalid; `details` names the field and, for a sentence, the position',
  missing_required_fields: 'Required fields are absent; `details.fields` lists them',
  invalid_json: 'The body is not JSON',
  invalid_encoding: 'The body is not what its Content-Encoding says (gzip)',
  incomplete_body: 'The request body ended before its announced length',
  payload_too_large: 'The body is over the size limit',
  unsupported_media_type: 'The body has a Content-Type the path does not take',
  method_not_allowed: 'The path does not take this HTTP method',
  bad_request: 'The request target is not a valid path',
  not_found: "No such path or resource, or one outside the caller's tenants",
  invalid_cursor: 'The cursor is not one this server issued',
  batch_too_large: 'A flow batch carries more flows than one batch may',
  error: "The device flow's start or poll lacks a required field (the spec's own code)",
  // Who is calling
  authentication_error: 'No token, or one that is invalid, expired or revoked',
  authorization_error: 'The token lacks the scope (`details.required_scope`) or the tenant for this action',
  unauthorized: 'The caller may not act for that parent or tenant',
  invalid_credentials: 'The client id or secret is wrong',
  unsupported_grant_type: 'The token endpoint takes client_credentials only',
  instance_not_authorized: 'Some instance_ids are not tenants the caller may read',
  rate_limited: 'Too many requests from this client or address; retry after `Retry-After`',
  // Tenants and deployments
  deployment_not_found: "No such deployment among the caller's children",
  handle_taken: 'The handle is already used under that parent',
  profile_not_found: 'No such profile for the tenant',
  // Nodes and collectors
  node_not_registered: "The collector's node is unknown or was removed",
  machine_mismatch: 'The machine id does not match the node the credential belongs to',
  enrolment_conflict: 'Another collector enrolled with this credential at the same moment',
  not_connected: 'The node has no open control channel',
  already_current: 'The node already runs the release it was asked to update to',
  update_failed: 'The collector could not update, or no release fits it',
  timeout: 'A legacy node did not answer in time',
  diagnostic_pull_failed: 'The collector did not send its diagnostics in time, or failed to',
  pprof_capture_failed: 'The collector did not send the profile in time, or failed to',
  invalid_type: 'The profile type is not one the collector can capture',
  unknown_operation: 'The manage operation is not one the node takes',
  // Collector releases
  release_exists: 'That release version is already published',
  release_not_found: 'No release for that platform and channel',
  release_lookup_failed: 'The release store could not be read',
  invalid_release_file: 'The release file is empty, too big or not a tarball with the collector',
  invalid_os: 'The os is not one releases are built for',
  invalid_arch: 'The arch is not one releases are built for',
  invalid_channel: 'The update channel is not stable or beta',
  invalid_version: 'The version is not a semantic version',
  invalid_signature: "The download link's signature does not match",
  link_expired: 'The download link has expired',
  unsupported_platform: 'No collector is built for that platform',
  // Device approval
  not_pending: 'The device authorization was already approved, denied or expired',
  // Own networks and automation
  own_network_exists: 'The tenant already names that address range',
  own_network_not_found: 'No such own network for the tenant',
  own_network_limit_reached: 'The tenant has as many own networks as it may',
  invalid_file: 'The own-networks file cannot be read or has a bad line',
  rule_limit_reached: 'The tenant has as many automation rules as it may',
  target_not_allowed: 'The webhook target is a private or loopback address',
  target_unresolvable: "The webhook target's host name does not resolve",
  // Flows, search and detection
  ingest_busy: 'The ingest queue is full; send the same batch again after `Retry-After`',
  store_unavailable: 'The flow store failed; retry the same batch',
  query_timeout: 'A search ran past its time limit and was cancelled',
  too_many_searches: 'An investigation page asked for more traffic searches than one request may run',
  detection_timeout: 'A detection run did not finish in time',
  detection_failed: 'A detection run failed',
  usage: 'The admin CLI was called with a missing or malformed option (printed with its usage)',
  // The service
  starting: 'The service is starting; retry in a moment',
  internal_error: 'A bug; quote the request id when reporting it',
  // Triage
  invalid_transition: 'The triage status cannot move that way; `details.allowed` lists where it can',
  comment_limit_reached: 'The investigation has as many comments as one may have',
  // Console users and sign-in
  email_taken: 'A user with that email already exists',
  invalid_link: 'The set-password link is unknown, used or expired',
  too_many_attempts: 'Too many failed sign-ins for the account or from the address; the message says when to try again',
  csrf_header_required: 'A request signed in with the session cookie lacks the `x-graphql-yoga-csrf` header',
  // API clients
  client_limit_reached: 'The tenant has as many active API clients as it may',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * An expected outcome the caller must see: a stable machine code, an HTTP status and a human
 * message. It travels through GraphQL unmasked (it is a GraphQLError) with the code and status in
 * `extensions`, and rest-compat renders the documented REST bodies from exactly those fields.
 * Anything that is not a DomainError is a bug: masked, logged with the request id, answered 500.
 */
export class DomainError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra fields the REST body carries beside error/code/message (e.g. `error_type`, `supported`). */
  readonly body: Record<string, unknown>;
  /** Structured reason for clients that read nested envelopes (`details`). */
  readonly details: Record<string, unknown>;
  /** Response headers that belong to the outcome (`Retry-After` of a 429). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: ErrorCode,
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

export const badRequest = (code: ErrorCode, message: string, details?: Record<string, unknown>) => new DomainError(400, code, message, { details });

export const missingFields = (fields: string[]) =>
  new DomainError(400, 'missing_required_fields', `Missing required fields: ${fields.join(', ')}`, {
    details: { fields },
  });

export const notFound = (code: ErrorCode, message: string, body?: Record<string, unknown>) => new DomainError(404, code, message, { body });

export const unauthorized = (message: string) => new DomainError(403, 'unauthorized', message);

export const conflict = (code: ErrorCode, message: string) => new DomainError(409, code, message);

export function authenticationError(reason: string, message: string): DomainError {
  return new DomainError(401, 'authentication_error', message, { details: { reason } });
}

export function authorizationError(message: string, details: Record<string, unknown> = { reason: 'forbidden' }): DomainError {
  return new DomainError(403, 'authorization_error', message, { details });
}
