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
