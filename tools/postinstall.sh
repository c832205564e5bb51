#!/bin/sh
# npm's postinstall: generates src/generated/ (the Prisma client, the typed GraphQL operations)
# with tools from the dev dependencies. A production install (npm ci --omit=dev) has none of them
# and needs nothing generated: `npm run build` compiled the generated code into dist/ beforehand.
# (prisma and typescript are there either way, optional peers of @prisma/client: GraphQL Codegen tells.)
set -eu
if [ ! -e node_modules/@graphql-codegen/cli/package.json ]; then
  if [ -f dist/src/main.js ]; then
    echo "postinstall: no dev dependencies; npm start runs the build in dist/"
  else
    echo "postinstall: no dev dependencies and no build (dist/): npm start cannot run; run npm run build in a full install first (README, Production)" >&2
  fi
  exit 0
fi
PRISMA_SCHEMA_ENGINE_BINARY=${PRISMA_SCHEMA_ENGINE_BINARY:-/bin/true} prisma generate
graphql-codegen --config codegen.ts
tsx tools/collector/meter/build-wasm.ts
