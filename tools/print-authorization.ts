import { writeFileSync } from 'node:fs';
import { authorizationDoc } from '../rest-compat/authorization.js';
import { routes, servedRoutes } from '../rest-compat/routes.js';
import { schema } from '../src/graphql/schema.js';

writeFileSync(new URL('../docs/authorization.md', import.meta.url), authorizationDoc(schema, [...routes, ...servedRoutes]));
