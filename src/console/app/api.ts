/**
 * The console's one way to the server: GraphQL at /graphql, over fetch for queries and mutations
 * and graphql-ws for subscriptions. The person's session is the cookie (same origin only); yoga
 * refuses a cookie-authenticated request without the CSRF header, which a page of another site
 * cannot add.
 */
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import type { Client } from 'graphql-ws';

/** An operation typed by graphql-codegen (src/generated/console.ts). */
export type Operation<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & { toString(): string };

const ENDPOINT = '/graphql';
const CSRF_HEADER = { 'x-graphql-yoga-csrf': '1' };

/** A GraphQL error the server answered, with its machine code (docs/errors.md). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** The server's `extensions.details`: e.g. `{position}` of a query-language error, `{field}` of a bad argument. */
    readonly details?: { position?: number; field?: string },
  ) {
    super(message);
  }
}

interface GraphqlResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; details?: ApiError['details'] } }[];
}

function firstError(errors: GraphqlResponse<unknown>['errors']): ApiError | undefined {
  const first = errors?.[0];
  return first && new ApiError(first.message, first.extensions?.code, first.extensions?.details);
}

/** Fired on `window` when the server answers that the session has ended (signed out elsewhere, idle, revoked). */
export const SESSION_ENDED = 'console:session-ended';
/** Dispatched on `window` when the signed-in person changed their own account (their name): the shell asks `me` again. */
export const ACCOUNT_CHANGED = 'console:account-changed';

export async function request<TResult, TVariables>(operation: Operation<TResult, TVariables>, variables: TVariables, signal?: AbortSignal): Promise<TResult> {
  let response: Response;
  try {
    response = await fetch(ENDPOINT, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...CSRF_HEADER },
      body: JSON.stringify({ query: operation.toString(), variables }),
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError('The server could not be reached. Check your connection and try again.', 'network');
  }
  const body = (await response.json().catch(() => ({}))) as GraphqlResponse<TResult>;
  const error = firstError(body.errors);
  if (error?.code === 'authentication_error') window.dispatchEvent(new Event(SESSION_ENDED));
  if (error) throw error;
  if (!response.ok || body.data == null) throw new ApiError(`The server answered ${response.status} without data.`, 'http');
  return body.data;
}

let socket: Promise<Client> | undefined;

/** One graphql-ws connection for the page, opened on first use (its code is loaded then too). */
function wsClient(): Promise<Client> {
  socket ??= import('graphql-ws').then(({ createClient }) =>
    createClient({ url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${ENDPOINT}`, lazy: true, retryAttempts: 5 }),
  );
  return socket;
}

/** Calls `onNext` with each result of a subscription until the returned function is called. */
export function subscribe<TResult, TVariables>(
  operation: Operation<TResult, TVariables>,
  variables: TVariables,
  onNext: (data: TResult) => void,
  onError: (error: ApiError) => void,
): () => void {
  let stop: (() => void) | undefined;
  let stopped = false;
  void wsClient().then((client) => {
    if (stopped) return;
    stop = client.subscribe<TResult>(
      { query: operation.toString(), variables: variables as Record<string, unknown> },
      {
        next: (result) => {
          const error = firstError(result.errors as GraphqlResponse<unknown>['errors']);
          if (error) onError(error);
          else if (result.data) onNext(result.data);
        },
        error: () => onError(new ApiError('Live updates stopped: the connection to the server was lost. Reload the page to resume them.', 'network')),
        complete: () => undefined,
      },
    );
  });
  return () => {
    stopped = true;
    stop?.();
  };
}
