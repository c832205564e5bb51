import { GraphQLError } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { graphql } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { DomainError } from '../errors.js';
import { presentError } from './error-codes.js';

describe('GraphQL error codes', () => {
  it('keeps a code, names GraphQL’s own refusals invalid_request, and hides a bug’s message', () => {
    const bugs: unknown[] = [];
    const report = (error: unknown) => bugs.push(error);
    const domain = new DomainError(404, 'not_found', 'No such node');
    expect(presentError(domain, report)).toBe(domain);

    const coercion = presentError(new GraphQLError('Variable "$n" got invalid value "x"'), report);
    expect(coercion.message).toBe('Variable "$n" got invalid value "x"');
    expect(coercion.extensions.code).toBe('invalid_request');

    const thrown = new Error('connection to 10.0.0.5 refused');
    const bug = presentError(new GraphQLError(thrown.message, { originalError: thrown, path: ['node'] }), report);
    expect(bug.toJSON()).toEqual({ message: 'Unexpected error.', path: ['node'], extensions: { code: 'internal_error', http: { status: 500 } } });
    expect(presentError(new TypeError('x is undefined'), report).extensions.code).toBe('internal_error');
    expect(bugs).toEqual([thrown, expect.any(TypeError)]);
  });

  describe('from the service', () => {
    let t: TestApp;
    let token: string;
    beforeAll(async () => {
      t = await startTestApp();
      token = (await seedTree(t.app)).mspCaller.token;
    });
    afterAll(() => t.stop());

    it.each([
      ['a variable of the wrong type', 'query($n: Int) { profiles(first: $n) { edges { cursor } } }', { n: 'x' }],
      ['a variable past 32 bits', 'query($n: Int) { profiles(first: $n) { edges { cursor } } }', { n: 2 ** 33 }],
      ['a negative `first`', '{ profiles(first: -1) { edges { cursor } } }', {}],
      ['a cursor that is not one', '{ profiles(after: "zzz") { edges { cursor } } }', {}],
    ])('over HTTP, %s: invalid_request', async (_case, query, variables) => {
      const res = await graphql(t.url, query, variables, token);
      expect(res.errors).toHaveLength(1);
      expect(res.errors![0].extensions).toMatchObject({ code: 'invalid_request' });
    });

    it('over graphql-ws, a variable of the wrong type: invalid_request', async () => {
      const client = createClient({
        url: t.url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: { authorization: `Bearer ${token}` },
      });
      try {
        const errors = await new Promise<any>((resolve) => {
          client.subscribe(
            { query: 'subscription($n: String!) { nodeStatus(nodeId: $n) { nodeId } }', variables: { n: 5 } },
            { next: (msg) => resolve(msg.errors), error: resolve, complete: () => undefined },
          );
        });
        expect(errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'invalid_request' }) })]);
      } finally {
        await client.dispose();
      }
    });
  });
});
