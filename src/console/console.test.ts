import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { httpRequestDuration } from '../infra/metrics.js';

describe('console files', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.stop());

  it.each([
    ['/console/device?code=abc', 'text/html; charset=utf-8', '<h1>Approve a device</h1>'],
    ['/console/device.js', 'text/javascript; charset=utf-8', "from './graphql-ws.js'"],
    ['/console/graphql-ws.js', 'text/javascript; charset=utf-8', 'graphql-transport-ws'],
    ['/console/console.css', 'text/css; charset=utf-8', '.visually-hidden'],
  ])('serves %s as %s with a strict CSP', async (path, type, snippet) => {
    const res = await fetch(t.url + path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(await res.text()).toContain(snippet);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers 304 to a matching If-None-Match, and HEAD without a body', async () => {
    const first = await fetch(`${t.url}/console/device.js`);
    const etag = first.headers.get('etag')!;
    const again = await fetch(`${t.url}/console/device.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const head = await fetch(`${t.url}/console/device`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it.each([
    ['an unknown file', 'GET', '/console/nope.js', 404],
    ['a traversal attempt', 'GET', '/console/../package.json', 404],
    ['an encoded traversal attempt', 'GET', '/console/%2e%2e/package.json', 404],
    ['an unknown app asset', 'GET', '/console/assets/index-nope.js', 404],
    ['a POST to the app', 'POST', '/console', 405],
    ['a POST', 'POST', '/console/device', 405],
  ])('answers %s with %s', async (_name, method, path, status) => {
    const res = await fetch(t.url + path, { method });
    expect(res.status).toBe(status);
  });

  it("counts the app's pages under one route label, not one per path a person opens", async () => {
    for (const id of ['inv_a1', 'inv_b2']) expect((await fetch(`${t.url}/console/investigations/${id}`)).status).toBe(200);
    const routes = new Set((await httpRequestDuration.get()).values.map((v) => v.labels.route));
    expect(routes).toContain('/console/*');
    expect([...routes].filter((r) => String(r).includes('inv_'))).toEqual([]);
  });
});
