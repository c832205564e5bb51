import { createServer, request } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../test/kit/app.js';
import { call } from '../test/kit/http.js';
import { seedCaller, seedTenant } from '../test/kit/seed.js';
import { schema } from '../src/graphql/schema.js';
import { createRestRouter } from './router.js';
import { routes } from './routes.js';

describe('rest-compat router', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp();
    token = (await seedCaller(t.app, (await seedTenant(t.app, { msp: true })).id)).token;
  });
  afterAll(() => t.stop());

  it('has one row per method and path', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  // A NUL or a broken escape in a segment names nothing: the SDK's get() reads that 404 as None.
  it.each([
    '/rest/nope/1.0',
    '/rest/deployments/2.0',
    '/search/unknown',
    '/nowhere',
    '/rest/deployments/1.0/extra',
    '/rest/nodes/1.0/%00',
    '/rest/nodes/1.0/a%00b/diagnostics',
    '/rest/nodes/1.0/%E0%A4%A',
  ])('answers 404 JSON for unknown path %s', async (path) => {
    const res = await call(t.url, 'GET', path, { token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'not_found', code: 'not_found', message: expect.any(String) });
  });

  it('answers 405 JSON with Allow for a wrong method', async () => {
    const res = await call(t.url, 'PUT', '/rest/deployments/1.0', { token, body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, DELETE');
    expect(res.body.code).toBe('method_not_allowed');
    expect((await call(t.url, 'GET', '/rest/oauth2/token/1.0')).status).toBe(405);
  });

  it.each(['{', '[1,2]', '"text"', 'null', '{"a":1}}', '\u0000'])('answers 400 invalid_json for body %j', async (rawBody) => {
    const res = await call(t.url, 'POST', '/rest/deployments/1.0', { token, rawBody });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await call(t.url, 'POST', '/rest/deployments/1.0', { token, body: { name: 'x'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('answers 413 for a chunked body that grows past 1 MiB, and keeps serving', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${t.url}/rest/deployments/1.0`,
        { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let i = 0; i < 20; i++) req.write(chunk);
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).code).toBe('payload_too_large');
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token })).status).toBe(200);
  });

  it('accepts a trailing slash and reads a JSON body sent on GET', async () => {
    const res = await call(t.url, 'GET', '/rest/deployments/1.0/', { token, body: {} });
    expect(res.status).toBe(200);
  });

  it('answers GET /health without auth', async () => {
    const res = await call(t.url, 'GET', '/health', { headers: { 'content-type': '' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', service: expect.any(String), version: expect.any(String), timestamp: expect.any(String) });
  });

  /** Sends `head` as the whole request on a raw socket and returns what comes back until the server closes or 1 s passes. */
  const rawExchange = (head: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
      socket.setTimeout(1_000, () => socket.end());
      socket.write(head);
    });

  it.each(['//[', '//%', '//a:b@', '//:99999/x'])('answers the request target %s with 400, and keeps serving', async (target) => {
    expect(await rawExchange(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 /);
    const upgrade = `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
    expect(await rawExchange(upgrade)).toMatch(/^HTTP\/1\.1 404 /);
    expect((await call(t.url, 'GET', '/health')).status).toBe(200);
  });

  it('answers HEAD as GET without a body', async () => {
    for (const path of ['/health', '/rest/deployments/1.0']) {
      const head = await call(t.url, 'HEAD', path, { token });
      expect(head.status, path).toBe(200);
      expect(head.body, path).toBeUndefined();
      expect(Number(head.headers.get('content-length')), path).toBeGreaterThan(0);
    }
  });

  it('tags every response with a request id', async () => {
    const res = await call(t.url, 'GET', '/health', { headers: { 'x-request-id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');
  });
});

describe('rest-compat router, a client that hangs up mid-body', () => {
  it('is no internal error: nothing is logged and the operation never runs', async () => {
    const errors: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (_event: string, fields?: unknown) => void errors.push(fields), child: () => logger };
    let executed = 0;
    const handle = createRestRouter({
      routes: [{ method: 'POST', path: '/rest/things/1.0', access: 'public', operation: {} as never, variables: () => ({}), render: () => ({}) }],
      schema,
      execute: async () => (executed++, { data: {} }),
      logger,
    });
    const server = createServer((req, res) => void handle(req, res, new URL(req.url ?? '/', 'http://localhost'), 'r1'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const closed = new Promise<void>((resolve) => server.on('request', (req) => req.once('close', () => setTimeout(resolve, 50))));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
      socket.write('POST /rest/things/1.0 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":');
      setTimeout(() => socket.destroy(), 50);
    });
    await closed;
    server.close();
    expect(errors).toEqual([]);
    expect(executed).toBe(0);
  });
});
