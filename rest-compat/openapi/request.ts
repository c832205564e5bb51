import {
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  Kind,
  TypeInfo,
  getNamedType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  typeFromAST,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Route } from '../route.js';
import { wireName } from '../variables.js';
import { type JsonSchema, inputSchema, leafSchema } from './json-schema.js';

/** What a route reads from a request: found by running its `variables` on a request that records each read. */
export interface ReadInputs {
  query: string[];
  body: string[];
  /** The operation takes the whole body as one value (search). */
  wholeBody: boolean;
  variables: Record<string, unknown>;
}

/** The `:name` segments of a route's path. */
export const pathParameters = (path: string) =>
  path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));

/** `/a/:id` as OpenAPI spells it: `/a/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([^/]+)/g, '{$1}');

export function readInputs(route: Route): ReadInputs {
  const query = new Set<string>();
  const body = new Set<string>();
  // Every read answers "absent", so the variables show which values a caller must give.
  class RecordingQuery extends URLSearchParams {
    override get(name: string) {
      query.add(name);
      return null;
    }
    override getAll(name: string) {
      query.add(name);
      return [];
    }
    override has(name: string) {
      query.add(name);
      return false;
    }
  }
  const recordingBody = new Proxy<Record<string, unknown>>(
    {},
    {
      get: (_target, key) => {
        if (typeof key === 'string') body.add(key);
        return undefined;
      },
    },
  );
  const params = Object.fromEntries(pathParameters(route.path).map((name) => [name, `{${name}}`]));
  const variables = route.variables({ params, query: new RecordingQuery(), body: recordingBody, headers: {} }) as Record<string, unknown>;
  const wholeBody = Object.values(variables).includes(recordingBody);
  return { query: [...query], body: [...body], wholeBody, variables };
}

/** One value a REST request gives an operation: a variable, or a field of an input-object variable. */
export interface OperationInput {
  type: GraphQLInputType;
  description?: string;
  /** Where it lands in the variables: `['input', 'customerId']`. */
  at: string[];
}

/**
 * The inputs of an operation by every name a REST request may give them (GraphQL's and the wire's
 * spelling), described by the argument or input field each one feeds.
 */
export function operationInputs(schema: GraphQLSchema, document: DocumentNode): Map<string, OperationInput> {
  const argumentDescriptions = new Map<string, string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument: (node) => {
        const description = typeInfo.getArgument()?.description;
        if (node.value.kind === Kind.VARIABLE && description) argumentDescriptions.set(node.value.name.value, description);
      },
    }),
  );
  const inputs = new Map<string, OperationInput>();
  const add = (name: string, input: OperationInput) => {
    inputs.set(name, input);
    inputs.set(wireName(name), input);
  };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const v of definition.variableDefinitions ?? []) {
      const name = v.variable.name.value;
      const type = typeFromAST(schema, v.type) as GraphQLInputType;
      add(name, { type, description: argumentDescriptions.get(name), at: [name] });
      const named = getNamedType(type);
      if (!isInputObjectType(named)) continue;
      for (const f of Object.values(named.getFields())) add(f.name, { type: f.type, description: f.description ?? undefined, at: [name, f.name] });
    }
  }
  return inputs;
}

/** A caller must give a value when its input is NonNull and the route leaves it empty when absent. */
export function isRequired(input: OperationInput | undefined, variables: Record<string, unknown>): boolean {
  if (!input || !isNonNullType(input.type)) return false;
  const value = input.at.reduce<unknown>((v, key) => (v as Record<string, unknown> | null | undefined)?.[key], variables);
  return value === null || value === undefined;
}

/** A query parameter's values as text carries them: leaves by their type, lists repeated, objects as JSON text. */
export function queryValueSchema(type: GraphQLInputType | undefined): JsonSchema {
  if (!type) return { type: 'string' };
  if (isNonNullType(type)) return queryValueSchema(type.ofType);
  if (isListType(type)) return { type: 'array', items: queryValueSchema(type.ofType) };
  if (isLeafType(type)) {
    const leaf = leafSchema(type);
    return leaf.type === undefined ? { type: 'string', description: 'JSON text' } : leaf;
  }
  return { type: 'string', description: 'JSON text' };
}

/** A body field's schema, from the input it feeds. */
export const bodyValueSchema = (input: OperationInput | undefined): JsonSchema => (input ? inputSchema(input.type) : {});
