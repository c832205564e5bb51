import { type GraphQLInputType, type GraphQLLeafType, isEnumType, isInputObjectType, isListType, isNonNullType } from 'graphql';
import { wireName } from '../variables.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as plain data. */
export type JsonSchema = { [key: string]: unknown };

/** GraphQL's scalars as the wire carries them (src/graphql/builder.ts serializes DateTime as ISO 8601). */
const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
  JSON: {},
};

const described = (schema: JsonSchema, description: string | null | undefined): JsonSchema => (description ? { ...schema, description } : schema);

/** A leaf's values: the scalar's JSON type, or an enum's names. */
export function leafSchema(type: GraphQLLeafType): JsonSchema {
  if (isEnumType(type)) return described({ type: 'string', enum: type.getValues().map((v) => v.name) }, type.description);
  return described({ ...(SCALARS[type.name] ?? { type: 'string' }) }, SCALARS[type.name] ? undefined : type.description);
}

/** The schema that also takes null; a schema without a `type` (any JSON) already does. */
export function orNull(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined) return schema;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('null')) return schema;
  const withNull: JsonSchema = { ...schema, type: [...types, 'null'] };
  if (Array.isArray(schema.enum)) withNull.enum = [...schema.enum, null];
  return withNull;
}

/**
 * A GraphQL input type as the JSON a REST caller sends for it: input objects with their fields in
 * wire spelling, closed to unknown fields (rest-compat/variables.ts refuses them), NonNull ones
 * required.
 */
export function inputSchema(type: GraphQLInputType): JsonSchema {
  if (isNonNullType(type)) return nonNullInput(type.ofType);
  return orNull(nonNullInput(type));
}

function nonNullInput(type: GraphQLInputType): JsonSchema {
  if (isListType(type)) return { type: 'array', items: inputSchema(type.ofType) };
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return described(
      {
        type: 'object',
        properties: Object.fromEntries(fields.map((f) => [wireName(f.name), described(inputSchema(f.type), f.description)])),
        required: fields.filter((f) => isNonNullType(f.type)).map((f) => wireName(f.name)),
        additionalProperties: false,
      },
      type.description,
    );
  }
  if (isNonNullType(type)) return nonNullInput(type.ofType);
  return leafSchema(type);
}
