import {
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';

/** A value GraphQL accepts for a required input: the scope is checked before what it says. */
function placeholder(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return placeholder(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, placeholder(f.type)]),
    );
  }
  return { Int: 1, Float: 1, Boolean: false, JSON: {}, DateTime: '2026-01-01T00:00:00Z' }[type.name] ?? 'x';
}

/** The field called alone with placeholders for its required arguments, selecting only `__typename`. */
export function callOf(operation: 'query' | 'mutation', field: GraphQLField<unknown, unknown>) {
  const required = field.args.filter((a) => isNonNullType(a.type));
  const declared = required.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const passed = required.map((a) => `${a.name}: $${a.name}`).join(', ');
  const named = getNamedType(field.type);
  const selection = isObjectType(named) || isAbstractType(named) ? ' { __typename }' : '';
  return {
    query: `${operation}${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`,
    variables: Object.fromEntries(required.map((a) => [a.name, placeholder(a.type)])),
  };
}
