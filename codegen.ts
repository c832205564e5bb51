import type { CodegenConfig } from '@graphql-codegen/cli';

/** Typed documents for schema/operations, used by rest-compat and the tests. */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: 'schema/operations/*.graphql',
  generates: {
    'src/generated/operations.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTime: 'string', JSON: 'unknown' },
        avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
      },
    },
  },
};

export default config;
