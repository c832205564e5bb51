import { type GraphQLSchema, Kind, type OperationDefinitionNode } from 'graphql';
import { Scopes } from '../../src/auth/scopes.js';
import type { Access, Route, ServedRoute } from '../route.js';
import type { JsonSchema } from './json-schema.js';
import { type OperationInput, bodyValueSchema, isRequired, openApiPath, operationInputs, pathParameters, queryValueSchema, readInputs } from './request.js';
import { routeResponses } from './response.js';

/**
 * The OpenAPI 3.1 document of every /rest and /search path, generated from the route table
 * (rest-compat/routes.ts) and the operations its rows run: parameters and bodies from what each
 * row reads and the variables they feed, answers from what each row renders of its operation's
 * result, descriptions from the GraphQL schema, security from each row's `access`.
 */

export const OPENAPI_PATH = '/rest/openapi.json';

/** What each scope opens (api-spec.md section 5). */
const SCOPE_DESCRIPTIONS: Record<string, string> = {
  [Scopes.ingest]: 'Collectors: legacy registration, flow ingest and the control channel',
  [Scopes.deploymentApi]: 'Deployments (child tenants) of a parent account',
  [Scopes.nodeApi]: 'Nodes, provisioning, profiles and automation',
  [Scopes.searchApi]: 'Flow search, investigations, events and explore',
};

const FLAT_ERROR: JsonSchema = {
  type: 'object',
  description: 'The flat error body (wire.md 2.2 A): the machine code in `error` and `code`, a human `message`, and extras some codes carry.',
  properties: {
    error: { type: 'string', description: 'The machine code, e.g. `not_found`' },
    code: { type: 'string', description: 'The same machine code (the SDK reads this one)' },
    message: { type: 'string', description: 'What went wrong, for a person' },
  },
  required: ['error', 'code', 'message'],
};

const NESTED_ERROR: JsonSchema = {
  type: 'object',
  description: "The search service's nested error body (wire.md 2.2 B).",
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'integer', description: 'The HTTP status' },
        message: { type: 'string' },
        type: { type: 'string', description: 'The kind: `authentication_error`, `authorization_error`, `validation_error`...' },
        details: { type: 'object', description: 'Structured reason, e.g. `{"reason":"insufficient_scope","required_scope":"..."}`' },
      },
      required: ['code', 'message', 'type', 'details'],
    },
    timestamp: { type: 'string', description: 'When, as `2026-07-07T00:11:22.334455+00:00`' },
  },
  required: ['error', 'timestamp'],
};

export interface DocumentOptions {
  schema: GraphQLSchema;
  routes: Route[];
  served: ServedRoute[];
}

export function openApiDocument({ schema, routes, served }: DocumentOptions) {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (path: string, method: string, operation: Record<string, unknown>) => {
    paths[openApiPath(path)] ??= {};
    paths[openApiPath(path)]![method.toLowerCase()] = operation;
  };
  for (const route of routes) add(route.path, route.method, operationOf(schema, route));
  for (const route of served) add(route.path, route.method, servedOperationOf(route));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Breach-detection service API',
      // The description's version (api-spec.md section 9); every path carries its own `1.0`.
      version: '1.0.0',
      description:
        'The REST control plane (`/rest`) and flow search (`/search`). Every path runs a GraphQL operation of `/graphql` and answers its documented JSON body. Tokens come from POST /rest/oauth2/token/1.0 (client credentials) and go in `Authorization: Bearer <token>`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { FlatError: FLAT_ERROR, NestedError: NESTED_ERROR },
      responses: {
        FlatError: errorResponse(
          'FlatError',
          'An error in the flat body: 400 invalid input, 401 no or a bad token, 403 a missing scope or tenant, 404 not found, 409, 413, 429...',
        ),
        NestedError: errorResponse('NestedError', "An error in the search service's nested body"),
      },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'Client credentials exchanged for a JWT bearer token (api-spec.md section 5).',
          flows: { clientCredentials: { tokenUrl: '/rest/oauth2/token/1.0', scopes: SCOPE_DESCRIPTIONS } },
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A token already fetched from POST /rest/oauth2/token/1.0; the operation lists the scope it must hold.',
        },
      },
    },
  };
}

const errorResponse = (schema: string, description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});

/** A row's `access` as an operation's security: none, or any token or one with the scope, fetched or given. */
function securityOf(access: Access) {
  if (access === 'public') return [];
  const scopes = access === 'token' ? [] : [access];
  return [{ oauth2: scopes }, { bearer: scopes }];
}

/** `/rest/nodes/1.0/...` → `nodes`; `/search/...` → `search`. */
const tagOf = (path: string) => (path.startsWith('/search/') ? 'search' : path.split('/')[2]!);

const describedBy = (input: { description?: string } | undefined) => (input?.description ? { description: input.description } : {});

const pathParameter = (name: string, input?: OperationInput) => ({ name, in: 'path', required: true, schema: { type: 'string' }, ...describedBy(input) });

/** `ListOutdatedNodes` → `List outdated nodes`. */
const sentence = (name: string) => name.replace(/(?<=[a-z0-9])([A-Z])/g, (c) => ` ${c.toLowerCase()}`);

function operationOf(schema: GraphQLSchema, route: Route): Record<string, unknown> {
  const definition = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const name = definition.name?.value ?? `${route.method} ${route.path}`;
  const root = definition.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
  const description = definition.selectionSet.selections
    .map((s) => (s.kind === Kind.FIELD ? root.getFields()[s.name.value]?.description : undefined))
    .filter(Boolean)
    .join('\n\n');
  const inputs = operationInputs(schema, route.operation);
  const read = readInputs(route);
  const parameters = [
    ...pathParameters(route.path).map((p) => pathParameter(p, inputs.get(p))),
    ...read.query.map((q) => ({
      name: q,
      in: 'query',
      required: isRequired(inputs.get(q), read.variables),
      schema: queryValueSchema(inputs.get(q)?.type),
      ...describedBy(inputs.get(q)),
    })),
  ];
  const errors = { $ref: `#/components/responses/${route.errors === 'nested' ? 'NestedError' : 'FlatError'}` };
  const responses: Record<string, unknown> = {};
  for (const r of routeResponses(schema, route)) {
    responses[String(r.status)] = {
      description: r.status === 302 ? 'A redirect to the resource' : 'Success',
      ...(r.headers.length && { headers: Object.fromEntries(r.headers.map((h) => [h, { schema: { type: 'string' } }])) }),
      ...(r.contentType && { content: { [r.contentType]: { schema: r.schema ?? {} } } }),
    };
  }
  return {
    operationId: name,
    summary: sentence(name),
    ...(description && { description }),
    tags: [tagOf(route.path)],
    security: securityOf(route.access),
    ...(parameters.length && { parameters }),
    ...requestBodyOf(route, read, inputs),
    responses: { ...responses, '4XX': errors, '5XX': errors },
  };
}

function requestBodyOf(route: Route, read: ReturnType<typeof readInputs>, inputs: ReturnType<typeof operationInputs>) {
  let schema: JsonSchema;
  if (read.wholeBody) {
    // The operation's one variable is the body (search): its argument describes it.
    schema = { ...(route.bodySchema ?? { type: 'object' }), ...describedBy([...inputs.values()][0]) };
  } else if (read.body.length) {
    schema = {
      type: 'object',
      properties: Object.fromEntries(read.body.map((b) => [b, { ...bodyValueSchema(inputs.get(b)), ...describedBy(inputs.get(b)) }])),
      required: read.body.filter((b) => isRequired(inputs.get(b), read.variables)),
    };
  } else return {};
  const content: Record<string, unknown> = { 'application/json': { schema } };
  if (route.form) content['application/x-www-form-urlencoded'] = { schema };
  return { requestBody: { required: read.wholeBody || (schema.required as string[]).length > 0, content } };
}

function servedOperationOf(route: ServedRoute): Record<string, unknown> {
  const { doc } = route;
  return {
    operationId: doc.summary.replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase()),
    summary: doc.summary,
    description: doc.description,
    tags: [tagOf(route.path)],
    security: securityOf(route.access),
    parameters: [
      ...pathParameters(route.path).map((p) => pathParameter(p)),
      ...(doc.query ?? []).map((q) => ({ name: q, in: 'query', required: false, schema: { type: 'string' } })),
    ],
    responses: {
      200: {
        description: 'Success',
        content: Object.fromEntries(doc.contentTypes.map((type) => [type, { schema: doc.schema ?? { type: 'string', contentMediaType: type } }])),
      },
      '4XX': { $ref: '#/components/responses/FlatError' },
      '5XX': { $ref: '#/components/responses/FlatError' },
    },
  };
}
