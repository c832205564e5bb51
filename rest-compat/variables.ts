import {
  type DocumentNode,
  type GraphQLInputType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  type GraphQLSchema,
  GraphQLString,
  Kind,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  typeFromAST,
} from 'graphql';
import { DomainError } from '../src/errors.js';
import { nulTextAt, nulTextMessage } from '../src/graphql/nul-text.js';

/**
 * A REST request's values checked against the types of its operation's variables, before the
 * operation runs, with JSON's own types and the REST field's name. GraphQL's input coercion is
 * built for GraphQL clients: it takes a single value where a list is expected (`"tags": "x"`
 * would become `["x"]`) and an integer where an ID is, and its messages name `$variables` that a
 * REST caller never wrote. Here a value of the wrong JSON type is a 400 `invalid_request` whose
 * message names the field as the request spelt it (`fleet_staging must be a boolean`). Text
 * holding NUL is refused here too (src/graphql/nul-text.ts says why), named the same way.
 */

interface VariableType {
  name: string;
  type: GraphQLInputType;
}

/** GraphQL's own scalars as JSON types: what is wrong with `value`, as a phrase after the field's name. */
const BUILT_IN: ReadonlyMap<string, (value: unknown) => string | undefined> = new Map<string, (value: unknown) => string | undefined>([
  [GraphQLString.name, (v) => (typeof v === 'string' ? undefined : 'must be a string')],
  [GraphQLID.name, (v) => (typeof v === 'string' ? undefined : 'must be a string')],
  [GraphQLBoolean.name, (v) => (typeof v === 'boolean' ? undefined : 'must be a boolean')],
  [GraphQLFloat.name, (v) => (typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a number')],
  [
    GraphQLInt.name,
    (v) =>
      !Number.isInteger(v)
        ? 'must be an integer'
        : (v as number) < -(2 ** 31) || (v as number) >= 2 ** 31
          ? 'must be between -2147483648 and 2147483647'
          : undefined,
  ],
]);

/** `updateChannel` → `update_channel`: GraphQL's names spelt as the REST wire spells them. */
export const wireName = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function variableChecker(schema: GraphQLSchema) {
  const typesOf = new WeakMap<DocumentNode, VariableType[]>();
  const variableTypes = (document: DocumentNode): VariableType[] => {
    let types = typesOf.get(document);
    if (!types) {
      types = document.definitions.flatMap((definition) =>
        definition.kind === Kind.OPERATION_DEFINITION
          ? (definition.variableDefinitions ?? []).map((v) => ({ name: v.variable.name.value, type: typeFromAST(schema, v.type) as GraphQLInputType }))
          : [],
      );
      typesOf.set(document, types);
    }
    return types;
  };

  /** The first value of `variables` that its operation's types refuse, as a 400; undefined when all fit. */
  return function variableProblem(document: DocumentNode, variables: Record<string, unknown>): DomainError | undefined {
    for (const { name, type } of variableTypes(document)) {
      // A variable of an input object type carries the request's body fields: the path starts at them.
      const named = isNonNullType(type) ? type.ofType : type;
      const problem = valueProblem(type, variables[name], isInputObjectType(named) ? '' : wireName(name));
      if (problem) return new DomainError(400, 'invalid_request', problem);
    }
    return undefined;
  };
}

/** What is wrong with `value` as a `type`, as `<path> must be …`; undefined when it fits. */
function valueProblem(type: GraphQLInputType, value: unknown, path: string): string | undefined {
  const shown = path || 'the body';
  if (value === null || value === undefined) {
    if (!isNonNullType(type)) return undefined;
    return path.endsWith(']') ? `${shown} must not be null` : `${shown} is required`;
  }
  if (isNonNullType(type)) return valueProblem(type.ofType, value, path);
  if (isListType(type)) {
    if (!Array.isArray(value)) return `${shown} must be an array`;
    for (let i = 0; i < value.length; i++) {
      const problem = valueProblem(type.ofType, value[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) return `${shown} must be an object`;
    const fields = type.getFields();
    const within = (key: string) => (path ? `${path}.${wireName(key)}` : wireName(key));
    const unknown = Object.keys(value).find((key) => !Object.hasOwn(fields, key));
    if (unknown !== undefined) return `${path ? `${path}.` : ''}${[...unknown].slice(0, 64).join('')} is not a known field`;
    for (const field of Object.values(fields)) {
      const problem = valueProblem(field.type, (value as Record<string, unknown>)[field.name], within(field.name));
      if (problem) return problem;
    }
    return undefined;
  }
  if (!isLeafType(type)) return undefined;
  const builtIn = BUILT_IN.get(type.name);
  if (builtIn) {
    const problem = builtIn(value);
    if (problem) return `${shown} ${problem}`;
  } else {
    try {
      if (type.parseValue(value) === undefined) return `${shown} is not a valid ${type.name}`;
    } catch (error) {
      return `${shown} is not a valid ${type.name}: ${(error as Error).message}`;
    }
  }
  if (typeof value === 'string') return value.includes('\u0000') ? nulTextMessage(shown) : undefined;
  // Keyed by its path, a JSON value's NUL is found as `services.packet.bpf` (or `a key of services`).
  const nul = typeof value === 'object' ? nulTextAt({ [shown]: value }) : undefined;
  return nul && nulTextMessage(nul);
}
