import type { IncomingHttpHeaders } from 'node:http';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Scope } from '../src/auth/scopes.js';
import type { DomainError } from '../src/errors.js';
import type { BodySchema } from '../src/modules/search/search.wire.js';
import type { Services } from '../src/services.js';

/** A REST request as a route sees it: path parameters, query string, parsed body, headers. */
export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/**
 * Who may call a path: anyone, any valid bearer token, or a token holding the scope (api-spec.md
 * section 5). The services enforce it by the actions of src/auth/actions.ts; the route states it for
 * the OpenAPI document, and tests hold the three together (test/contract/openapi-security.test.ts,
 * test/contract/authorization.test.ts).
 */
export type Access = 'public' | 'token' | Scope;

/**
 * One documented path: which GraphQL operation serves it, how its variables are read from the
 * request, and how the operation's data becomes the documented body. No rules live here.
 */
export interface Route<TData = any, TVars = any> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  access: Access;
  operation: TypedDocumentNode<TData, TVars>;
  variables: (req: RestRequest) => TVars;
  /** The documented JSON body, or a RawResponse for redirects, scripts and binary payloads. */
  render: (data: TData) => unknown;
  status?: number;
  /** `nested` is the search service's error envelope (wire.md 2.2 B); `flat` everywhere else. */
  errors?: 'flat' | 'nested';
  /** The body may also come form-encoded (the token endpoint, api-spec.md section 4); elsewhere it is JSON whatever its content type. */
  form?: true;
  /** The body a path takes when its operation receives the whole body as one JSON value (search): the schema its service reads it by. */
  bodySchema?: BodySchema;
  /** Headers an error answer carries for this request (the token endpoint's `WWW-Authenticate`). */
  errorHeaders?: (req: RestRequest, error: DomainError) => Record<string, string> | undefined;
}

export const defineRoute = <TData, TVars>(route: Route<TData, TVars>): Route<TData, TVars> => route;

/** A body value as a GraphQL String variable; anything else is passed on for GraphQL to refuse. */
export const field = (body: Record<string, unknown>, name: string): unknown => body[name] ?? null;

/** A non-JSON answer (a redirect, a script, bytes): rendered as given. */
export class RawResponse {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string | Buffer = '',
  ) {}
}

/**
 * A path answered with bytes a service reads directly, not through a GraphQL operation: only for
 * payloads an operation could carry only as base64 (collector tarballs). Rules stay in the service.
 */
export interface ServedRoute {
  method: 'GET';
  path: string;
  access: Access;
  /** What the OpenAPI document says of it: there is no operation to read this from. */
  doc: ServedRouteDoc;
  serve: (req: RestRequest, services: Services) => Promise<RawResponse>;
}

export interface ServedRouteDoc {
  summary: string;
  description: string;
  query?: readonly string[];
  /** The answer's media types (the first is the answer's for JSON paths, which give its schema). */
  contentTypes: readonly string[];
  schema?: Record<string, unknown>;
}

/** A boolean query flag as the SDK sends it (`services=true`); absent or anything else is false. */
export const flag = (query: URLSearchParams, name: string): boolean => ['true', '1', 'yes'].includes((query.get(name) ?? '').toLowerCase());

/**
 * An integer query parameter; absent gives null. Anything else is passed through as NaN-free
 * text for GraphQL to refuse with a 400, so `log_lines=abc` is an error, not a default.
 */
export const integer = (query: URLSearchParams, name: string): number | null => {
  const raw = query.get(name);
  if (raw === null || raw.trim() === '') return null;
  const value = Number(raw);
  // Out-of-range numbers are pinned to GraphQL's Int range; the service clamps them further.
  return Number.isFinite(value) ? Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(value))) : (raw as unknown as number);
};
