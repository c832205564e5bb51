import { execute } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { describe, expect, it } from 'vitest';
import { routes } from '../../rest-compat/routes.js';
import { RequestAuth } from '../context.js';
import { DomainError } from '../errors.js';
import { SearchRecordsDocument } from '../generated/operations.js';
import { readRecordsBody } from '../modules/search/search.wire.js';
import { compiledOperations } from './compiled-operations.js';
import { schema } from './schema.js';

describe('compiled operations', () => {
  it('compiles every rest-compat operation (none falls back to graphql-js)', () => {
    for (const route of routes) expect(isCompiledQuery(compileQuery(schema, route.operation)), `${route.method} ${route.path}`).toBe(true);
  });

  it('answers as graphql-js does: data, and the resolver’s DomainError as the original error', async () => {
    const seen: unknown[] = [];
    const context = (session: unknown) => ({
      requestId: 'r',
      services: { search: { records: async (_session: unknown, request: unknown) => (seen.push(request), { c: { found: 1 } }) } },
      auth: new RequestAuth(session ? 'Bearer t' : null, async () => session as never),
    });
    const variables = { body: { instance_ids: ['c'], module: 'flows' } };
    const run = compiledOperations(schema);

    const caller = { customerId: 'c', assert: () => {} };
    const ok = await run(SearchRecordsDocument, variables, context(caller));
    expect(ok).toEqual(await execute({ schema, document: SearchRecordsDocument, variableValues: variables, contextValue: context(caller) }));
    expect(ok).toEqual({ data: { records: { c: { found: 1 } } } });
    // The service gets the body as the REST edge reads it.
    expect(seen).toEqual([readRecordsBody(variables.body), readRecordsBody(variables.body)]);

    const refused = await run(SearchRecordsDocument, variables, context(undefined));
    expect(refused.data).toBeNull();
    expect(refused.errors?.[0]?.originalError).toBeInstanceOf(DomainError);
    expect((refused.errors![0]!.originalError as DomainError).status).toBe(401);
    expect(refused.errors![0]!.path).toEqual(['records']);

    const malformed = await run(SearchRecordsDocument, {}, context(caller));
    expect(malformed.errors?.[0]?.path).toBeUndefined();
  });
});
