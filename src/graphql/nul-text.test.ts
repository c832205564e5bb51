import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { nulTextAt } from './nul-text.js';

const CREATE = 'mutation($input: CreateDeploymentInput!) { createDeployment(input: $input) { customer { id } } }';

describe('text with a NUL character', () => {
  it('is found in values and keys, at any depth', () => {
    expect(nulTextAt({ body: { sort: [{ field: 'a\u0000' }] } })).toBe('body.sort[0].field');
    expect(nulTextAt({ input: { ['k\u0000']: 1 } })).toBe('a key of input');
    expect(nulTextAt({ body: { sentence: 'app_name eq x', fields: ['a', 'b'] } })).toBeUndefined();
    expect(nulTextAt({ a: [[{ b: ['x', 'y\u0000'] }]] })).toBe('a[0][0].b[1]');
    expect(nulTextAt('\u0000')).toBe('a value');
  });

  it('walks a body nested 200,000 deep without overflowing the stack', () => {
    const deep = (leaf: unknown) => JSON.parse(`${'['.repeat(200_000)}${JSON.stringify(leaf)}${']'.repeat(200_000)}`);
    expect(nulTextAt({ body: deep('x') })).toBeUndefined();
    expect(nulTextAt({ body: deep('\u0000') })).toMatch(/^body(\[0\]){200000}$/);
  });

  describe('at the doors of GraphQL', () => {
    let t: TestApp;
    let token: string;
    let msp: string;
    beforeAll(async () => {
      t = await startTestApp();
      const tree = await seedTree(t.app);
      token = tree.mspCaller.token;
      msp = tree.msp.id;
    });
    afterAll(() => t.stop());

    it('answers a variable holding one with a 400 naming it (yoga), and writes nothing', async () => {
      const res = await call(t.url, 'POST', '/graphql', {
        token,
        body: { query: CREATE, variables: { input: { name: 'a\u0000b', handle: 'nul', parentId: msp } } },
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({
        message: 'input.name contains a NUL character (U+0000), which no text may hold',
        extensions: { code: 'invalid_request' },
      });
      expect(await t.app.db.prisma.tenant.count({ where: { handle: 'nul' } })).toBe(0);
    });

    it('answers a string literal holding one with a 400', async () => {
      const query = `mutation { createDeployment(input: { name: "a\\u0000b", handle: "nul", parentId: "${msp}" }) { customer { id } } }`;
      const res = await call(t.url, 'POST', '/graphql', { token, body: { query } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/string literal contains a NUL character/);
    });

    it('answers a REST body holding one with a flat 400 invalid_request naming the REST field', async () => {
      const res = await call(t.url, 'POST', '/rest/deployments/1.0', { token, body: { name: 'a\u0000b', handle: 'nul', parent_id: msp } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request', message: 'name contains a NUL character (U+0000), which no text may hold' });
      const nested = await call(t.url, 'POST', '/rest/profiles/1.0', { token, body: { name: 'n', services: { packet: { bpf: 'a\u0000' } } } });
      expect(nested.body).toMatchObject({ code: 'invalid_request', message: 'services.packet.bpf contains a NUL character (U+0000), which no text may hold' });
      const tag = await call(t.url, 'POST', '/rest/profiles/1.0', { token, body: { name: 'n', tags: ['ok', 'a\u0000'] } });
      expect(tag.body).toMatchObject({ code: 'invalid_request', message: 'tags[1] contains a NUL character (U+0000), which no text may hold' });
    });

    it('refuses a subscription variable holding one (graphql-ws)', async () => {
      const client = createClient({ url: t.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0 });
      try {
        const error = await new Promise<unknown>((resolve) => {
          client.subscribe(
            { query: 'subscription($c: String) { deviceAuthorizationStatus(deviceCode: $c) { status } }', variables: { c: 'x\u0000' } },
            { next: () => resolve('a value'), error: resolve, complete: () => resolve('completed') },
          );
        });
        expect(error).toEqual([expect.objectContaining({ message: 'c contains a NUL character (U+0000), which no text may hold' })]);
      } finally {
        await client.dispose();
      }
    });
  });
});
