import { GraphQLError } from 'graphql';

/**
 * What a GraphQL caller sees of an error, over HTTP and graphql-ws alike: every error names its
 * code in `extensions.code` (README, Errors).
 * - A DomainError, or yoga's own parse and validation errors, already carry one.
 * - GraphQL's own refusals of the request (a variable of the wrong type, a negative `first`, a
 *   cursor that is not one) carry none: they are the caller's input, `invalid_request`.
 * - Anything else thrown is a bug: handed to `reportBug`, and answered `internal_error` without
 *   its message.
 */
export function presentError(error: unknown, reportBug: (error: unknown) => void): GraphQLError {
  const original = error instanceof GraphQLError ? error.originalError : undefined;
  if (!(error instanceof GraphQLError) || (original && !(original instanceof GraphQLError))) {
    reportBug(original ?? error);
    const located = error instanceof GraphQLError ? error : undefined;
    return new GraphQLError('Unexpected error.', {
      nodes: located?.nodes,
      path: located?.path,
      extensions: { code: 'internal_error', http: { status: 500 } },
    });
  }
  if (typeof error.extensions?.code === 'string') return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: original,
    extensions: { ...error.extensions, code: 'invalid_request' },
  });
}
