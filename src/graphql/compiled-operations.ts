/**
 * rest-compat's operations, each compiled once by graphql-jit into a function of its own.
 *
 * Why: every REST call runs one fixed document, and between two searches the engine's work on
 * both cores leaves the CPU caches cold. Cold, graphql-js took ~150 µs from `execute` to the
 * resolver of a search (~20 µs warm); the compiled document took ~55 µs (tools/bench/HISTORY.md).
 * Resolvers, scalars and errors are the schema's own either way.
 */
import { type DocumentNode, type ExecutionResult, type GraphQLSchema, execute } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { countOperation, outcomeOf } from './operation-metrics.js';

export type RunOperation = (document: DocumentNode, variables: Record<string, unknown>, contextValue: unknown) => Promise<ExecutionResult>;

export function compiledOperations(schema: GraphQLSchema): RunOperation {
  // `undefined`: graphql-jit cannot compile the document, so graphql-js runs it.
  const compiled = new WeakMap<DocumentNode, CompiledQuery | undefined>();
  const compiledFor = (document: DocumentNode): CompiledQuery | undefined => {
    if (compiled.has(document)) return compiled.get(document);
    const result = compileQuery(schema, document);
    const query = isCompiledQuery(result) ? result : undefined;
    compiled.set(document, query);
    return query;
  };
  return async (document, variables, contextValue) => {
    const query = compiledFor(document);
    let result: ExecutionResult | undefined;
    try {
      result = query ? await query.query(undefined, contextValue, variables) : await execute({ schema, document, variableValues: variables, contextValue });
      return result;
    } finally {
      countOperation(document, undefined, 'rest', result ? outcomeOf(result) : 'error');
    }
  };
}
