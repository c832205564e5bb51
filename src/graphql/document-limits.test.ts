import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { type Client, createClient } from 'graphql-ws';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { MAX_BODY_BYTES } from '../http/kit.js';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { call, graphql } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { MAX_DOCUMENT_ALIASES, MAX_DOCUMENT_DEPTH, MAX_DOCUMENT_NESTING, MAX_DOCUMENT_TOKENS, parseWithinLimits } from './document-limits.js';

const operationsDir = new URL('../../schema/operations/', import.meta.url);
/** Every operations file the service runs for rest-compat, with the fragments file beside it. */
const shipped: [string, string][] = (() => {
  const fragments = readFileSync(new URL('fragments.graphql', operationsDir), 'utf8');
  return readdirSync(operationsDir)
    .filter((f) => f.endsWith('.graphql') && f !== 'fragments.graphql')
    .map((f) => [f, `${readFileSync(new URL(f, operationsDir), 'utf8')}\n${fragments}`]);
})();
/** GraphiQL's introspection query, with every option it may turn on. */
const introspection = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
});

/** A query `depth` fields deep: the caller's tenant, its parent's parent's … customerId. */
const tenantChain = (depth: number) => `{ viewerTenant { ${'parent { '.repeat(depth - 2)}customerId${' }'.repeat(depth - 2)} } }`;
/** `count` aliases of `__typename`: free to resolve, as costly as any field to parse and validate. */
const typenames = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`;
/** A list literal `depth` brackets deep, inside one pair of braces and one of parentheses. */
const deepList = (depth: number) => `{ viewer(x: ${'['.repeat(depth)}${']'.repeat(depth)}) { customerId } }`;

const refusal = (limit: string) => ({ message: expect.stringContaining(`(${limit})`), extensions: { code: 'invalid_request' } });
const refused = (query: string, limit: string) => expect(() => parseWithinLimits(query)).toThrow(`(${limit})`);

describe('document limits', () => {
  it('let every operation of ours through, and the introspection query GraphiQL sends', () => {
    expect(shipped.length).toBeGreaterThan(10);
    for (const [file, source] of shipped) expect(() => parseWithinLimits(source), file).not.toThrow();
    expect(() => parseWithinLimits(introspection)).not.toThrow();
    expect(() => parseWithinLimits(getIntrospectionQuery())).not.toThrow();
  });

  it(`count tokens up to ${MAX_DOCUMENT_TOKENS}, each comment and each line of a block string among them`, () => {
    const tokens = (n: number) => `{ ${'__typename '.repeat(n - 2)}}`;
    expect(() => parseWithinLimits(tokens(MAX_DOCUMENT_TOKENS))).not.toThrow();
    refused(tokens(MAX_DOCUMENT_TOKENS + 1), 'max_tokens');
    expect(() => parseWithinLimits(`# ${'x'.repeat(100_000)}\n${tokens(MAX_DOCUMENT_TOKENS - 1)}`)).not.toThrow();
    refused(`# one\n${tokens(MAX_DOCUMENT_TOKENS)}`, 'max_tokens');
    // graphql-js's lexer builds every comment and block string line, uncounted by its maxTokens.
    refused(`${'#\n'.repeat(MAX_DOCUMENT_TOKENS)}{ __typename }`, 'max_tokens');
    refused(`{ viewer(a: """${'x\n'.repeat(MAX_DOCUMENT_TOKENS)}""") { customerId } }`, 'max_tokens');
    // Read as graphql-js reads them: `a...a` is three tokens, `-1.5e3` one.
    refused(`{ a${'...a'.repeat(MAX_DOCUMENT_TOKENS / 2)} }`, 'max_tokens');
    const numbers = (n: number) => `{ viewer(a: [${'-1.5e3 '.repeat(n)}]) { customerId } }`; // n + 12 tokens
    expect(() => parseWithinLimits(numbers(MAX_DOCUMENT_TOKENS - 12))).not.toThrow();
    refused(numbers(MAX_DOCUMENT_TOKENS - 11), 'max_tokens');
  });

  it(`count brackets of every kind up to ${MAX_DOCUMENT_NESTING} deep, outside strings and comments`, () => {
    expect(() => parseWithinLimits(deepList(MAX_DOCUMENT_NESTING - 2))).not.toThrow();
    refused(deepList(MAX_DOCUMENT_NESTING - 1), 'max_nesting');
    refused(`{ viewer(x: ${'{a: '.repeat(MAX_DOCUMENT_NESTING)}1${'}'.repeat(MAX_DOCUMENT_NESTING)}) { customerId } }`, 'max_nesting');
    refused(`query($v: ${'['.repeat(MAX_DOCUMENT_NESTING)}Int${']'.repeat(MAX_DOCUMENT_NESTING)}) { __typename }`, 'max_nesting');
    const quoted = `"${'['.repeat(100)}", b: """${'{'.repeat(100)}"""`;
    expect(() => parseWithinLimits(`{ viewer(a: ${quoted}) { customerId } } # ${'('.repeat(100)}`)).not.toThrow();
  });

  it(`count ${MAX_DOCUMENT_DEPTH} fields deep through fragments, introspection's own depth aside`, () => {
    expect(() => parseWithinLimits(tenantChain(MAX_DOCUMENT_DEPTH))).not.toThrow();
    refused(tenantChain(MAX_DOCUMENT_DEPTH + 1), 'max_depth');
    // Eleven levels, no more than seven brackets deep anywhere.
    const spread = `{ viewerTenant { parent { parent { ...P } } } } fragment P on Tenant { parent { parent { ...Q } } }
      fragment Q on Tenant { ... on Tenant { parent { parent { parent { parent { parent { customerId } } } } } } }`;
    refused(spread, 'max_depth');
  });

  it(`count ${MAX_DOCUMENT_ALIASES} aliases, __typename's and a fragment's at each spread included`, () => {
    expect(() => parseWithinLimits(typenames(MAX_DOCUMENT_ALIASES))).not.toThrow();
    refused(typenames(MAX_DOCUMENT_ALIASES + 1), 'max_aliases');
    // Half the limit in a fragment, spread under two aliases: two more than the limit.
    refused(`{ x: viewerTenant { ...A } y: viewerTenant { ...A } } fragment A on Tenant ${typenames(MAX_DOCUMENT_ALIASES / 2)}`, 'max_aliases');
  });

  it('leave a cycle of fragments to validation', () => {
    expect(() => parseWithinLimits('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }')).not.toThrow();
  });

  describe('over HTTP', () => {
    let t: TestApp;
    let token: string;
    beforeAll(async () => {
      t = await startTestApp();
      token = (await seedTree(t.app)).mspCaller.token;
    });
    afterAll(() => t.stop());

    it(`refuses a document deeper than ${MAX_DOCUMENT_DEPTH} levels, and takes one of that depth`, async () => {
      const deepest = await graphql(t.url, tenantChain(MAX_DOCUMENT_DEPTH), {}, token);
      expect(deepest.errors).toBeUndefined();
      const deeper = await call(t.url, 'POST', '/graphql', { token, body: { query: tenantChain(MAX_DOCUMENT_DEPTH + 1) } });
      expect(deeper.status).toBe(400);
      expect(deeper.body).toEqual({ errors: [refusal('max_depth')] });
    });

    it(`refuses more than ${MAX_DOCUMENT_ALIASES} aliases before running anything, even of __typename, even unauthenticated`, async () => {
      const fields = Array.from({ length: MAX_DOCUMENT_ALIASES + 1 }, (_, i) => `a${i}: viewer { customerId }`).join(' ');
      for (const query of [`{ ${fields} }`, typenames(MAX_DOCUMENT_ALIASES + 1)]) {
        const res = await call(t.url, 'POST', '/graphql', { body: { query } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ errors: [refusal('max_aliases')] });
      }
    });

    it('refuses a list literal or a selection 5,000 deep before the parser recurses into it', async () => {
      const selection = `{ ${'viewerTenant { '.repeat(5_000)}${'}'.repeat(5_000)} }`;
      for (const query of [deepList(5_000), selection]) {
        const res = await call(t.url, 'POST', '/graphql', { body: { query } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ errors: [refusal('max_nesting')] });
      }
    });

    it("refuses 100,000 __typename aliases by the body's size, and 50,000 within it by their tokens, at once", async () => {
      const whole = typenames(100_000);
      expect(Buffer.byteLength(whole)).toBeGreaterThan(MAX_BODY_BYTES);
      const over = await call(t.url, 'POST', '/graphql', { body: { query: whole } });
      expect(over.status).toBe(400);
      expect(over.body).toEqual({ errors: [refusal('max_body_bytes')] });

      // Twenty at once, while /health is asked: each refused, none held up the other requests.
      const tokens = typenames(50_000);
      const health = call(t.url, 'GET', '/health');
      const answers = await Promise.all(Array.from({ length: 20 }, () => call(t.url, 'POST', '/graphql', { body: { query: tokens } })));
      for (const res of answers) expect([res.status, res.body]).toEqual([400, { errors: [refusal('max_tokens')] }]);
      expect((await health).status).toBe(200);
    });

    it('holds GET documents to the same limits', async () => {
      const res = await call(t.url, 'GET', `/graphql?query=${encodeURIComponent(typenames(MAX_DOCUMENT_ALIASES + 1))}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: [refusal('max_aliases')] });
    });

    it('takes the introspection query GraphiQL sends', async () => {
      const res = await call(t.url, 'POST', '/graphql', { body: { query: introspection } });
      expect(res.status).toBe(200);
      expect(res.body.data.__schema.queryType.name).toBe('Query');
    });

    it(`refuses a body over ${MAX_BODY_BYTES} bytes that declares no length, and closes the connection it did not read`, async () => {
      const answer = await new Promise<{ status?: number; connection?: string; body: string }>((resolve, reject) => {
        const req = request(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
        req.write('{"query": "{ __typename }", "variables": {"pad": "');
        for (let sent = 0; sent <= MAX_BODY_BYTES; sent += 64 * 1024) req.write('x'.repeat(64 * 1024));
        req.end('"}}');
      });
      expect(answer).toMatchObject({ status: 400, connection: 'close' });
      expect(JSON.parse(answer.body)).toEqual({ errors: [refusal('max_body_bytes')] });
    });

    it('reads the bodies yoga reads, form and multipart as JSON', async () => {
      const form = await call(t.url, 'POST', '/graphql', {
        rawBody: 'query=%7B__typename%7D',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const parts = '--b\r\ncontent-disposition: form-data; name="operations"\r\n\r\n{"query": "{ __typename }"}\r\n--b--\r\n';
      const multipart = await call(t.url, 'POST', '/graphql', { rawBody: parts, headers: { 'content-type': 'multipart/form-data; boundary=b' } });
      for (const res of [form, multipart]) expect([res.status, res.body]).toEqual([200, { data: { __typename: 'Query' } }]);
    });

    it('answers a POST of a content type it does not read with 415 and the documented error body', async () => {
      const res = await call(t.url, 'POST', '/graphql', { rawBody: '{ __typename }', headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(415);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: 'unsupported_media_type', code: 'unsupported_media_type', message: expect.stringContaining('application/json') });
    });
  });

  describe('over graphql-ws', () => {
    let t: TestApp;
    const clients: Client[] = [];
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.dispose()));
      await t.stop();
    });
    afterEach(() => vi.restoreAllMocks());

    const connect = (closes: number[]) => {
      const client = createClient({
        url: `${t.url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false, // one socket throughout, not one per operation
        onNonLazyError: () => undefined, // its close is what a test looks at
        on: { closed: (event) => closes.push((event as { code: number }).code) },
      });
      clients.push(client);
      return client;
    };
    /** The refusal graphql-ws sends (its errors also carry yoga's `http` extension). */
    const wsRefusal = (limit: string) => ({ message: expect.stringContaining(`(${limit})`), extensions: expect.objectContaining({ code: 'invalid_request' }) });
    /** What `query` ends with: its result, or the errors it was refused with. */
    const run = (client: Client, query: string) =>
      new Promise<unknown>((resolve) => {
        let result: unknown;
        client.subscribe({ query }, { next: (value) => (result = value), error: (errors) => resolve({ errors }), complete: () => resolve(result) });
      });

    it('refuses a document over a limit, or one that does not parse, in an error message and keeps the socket open', async () => {
      const printed = vi.spyOn(console, 'error');
      const closes: number[] = [];
      const client = connect(closes);
      expect(await run(client, typenames(20_000))).toEqual({ errors: [wsRefusal('max_tokens')] });
      expect(await run(client, deepList(5_000))).toEqual({ errors: [wsRefusal('max_nesting')] });
      expect(await run(client, tenantChain(MAX_DOCUMENT_DEPTH + 1))).toEqual({ errors: [wsRefusal('max_depth')] });
      expect(await run(client, typenames(MAX_DOCUMENT_ALIASES + 1))).toEqual({ errors: [wsRefusal('max_aliases')] });
      expect(await run(client, '{ viewer(')).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'invalid_request' } })] });
      expect(await run(client, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
      expect(closes).toEqual([]);
      expect(printed).not.toHaveBeenCalled();
    });

    it(`closes a socket that sends a message over ${MAX_BODY_BYTES} bytes (1009), and prints no stack trace`, async () => {
      const printed = vi.spyOn(console, 'error');
      const closes: number[] = [];
      const client = connect(closes);
      expect(await run(client, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
      void run(client, `{ __typename } # ${'x'.repeat(MAX_BODY_BYTES)}`);
      await expect.poll(() => closes).toEqual([1009]);
      expect(printed).not.toHaveBeenCalled();
    });
  });
});
