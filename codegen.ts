import type { CodegenConfig } from '@graphql-codegen/cli';

const typed = {
  useTypeImports: true,
  enumsAsTypes: true,
  scalars: { DateTime: 'string', JSON: 'unknown' },
  avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
};

/**
 * Typed documents for schema/operations, used by rest-compat and the tests; and the console's
 * operations (src/console/app), as typed strings: the browser sends the text and needs no GraphQL
 * parser.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  generates: {
    'src/generated/operations.ts': {
      documents: 'schema/operations/*.graphql',
      plugins: ['typescript-operations', 'typed-document-node'],
      config: typed,
    },
    'src/generated/console.ts': {
      documents: 'src/console/app/**/*.graphql',
      plugins: ['typescript-operations', 'typed-document-node'],
      config: { ...typed, documentMode: 'string' },
    },
  },
};

export default config;
