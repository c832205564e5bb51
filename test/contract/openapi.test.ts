import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../rest-compat/openapi/request.js';
import { routes, servedRoutes } from '../../rest-compat/routes.js';
import { type TestApp, startTestApp } from '../kit/app.js';
import { call } from '../kit/http.js';
import { openApiProblem } from '../kit/openapi-responses.js';

describe('GET /rest/openapi.json', () => {
  let t: TestApp;
  let document: any;
  beforeAll(async () => {
    t = await startTestApp();
    const res = await call(t.url, 'GET', '/rest/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    document = res.body;
  });
  afterAll(() => t?.stop());

  it('is served without a token and is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has every path and method of the route table, and nothing else', () => {
    const table = [...routes, ...servedRoutes].map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    const documented = Object.entries(document.paths as Record<string, object>)
      .flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(table);
  });

  it("states each path's security as its row does: none, any token, or the scope", () => {
    const security = (method: string, path: string) => document.paths[path][method.toLowerCase()].security;
    for (const r of [...routes, ...servedRoutes]) {
      const scopes = r.access === 'token' ? [] : [r.access];
      const expected = r.access === 'public' ? [] : [{ oauth2: scopes }, { bearer: scopes }];
      expect(security(r.method, openApiPath(r.path)), `${r.method} ${r.path}`).toEqual(expected);
    }
    expect(Object.keys(document.components.securitySchemes.oauth2.flows.clientCredentials.scopes).sort()).toEqual(
      [...new Set(routes.map((r) => r.access).filter((a) => a.startsWith('p.token.')))].sort(),
    );
  });

  it('documents parameters, bodies and answers read from the rows and their operations', () => {
    const node = document.paths['/rest/nodes/1.0/{node_id}'].get;
    expect(node.parameters.map((p: any) => [p.name, p.in, p.required, p.schema.type])).toEqual([
      ['node_id', 'path', true, 'string'],
      ['services', 'query', false, 'boolean'],
      ['hardware', 'query', false, 'boolean'],
    ]);
    const nodeBody = node.responses['200'].content['application/json'].schema;
    expect(nodeBody.required).toContain('node_id');
    expect(nodeBody.required).not.toContain('services'); // only with ?services=true
    expect(nodeBody.properties.health.properties.last_seen_at.type).toEqual(['string', 'null']);

    const token = document.paths['/rest/oauth2/token/1.0'].post;
    expect(Object.keys(token.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(Object.keys(token.responses['200'].content['application/json'].schema.properties)).toEqual([
      'access_token',
      'expires_in',
      'expires_at',
      'token_type',
    ]);

    const profile = document.paths['/rest/profiles/1.0'].post;
    expect(profile.responses['201'].content['application/json'].schema.properties.status).toEqual({ type: 'string', const: 'success' });
    expect(profile.requestBody.content['application/json'].schema.properties.fleet_staging.type).toEqual(['boolean', 'null']);

    // Both branches of a row's render: one rule, or the list.
    const rules = document.paths['/rest/automation/1.0'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(rules.properties).sort()).toEqual(['count', 'rule', 'rules', 'status']);
    expect(rules.required).toEqual(['status']);

    const download = document.paths['/rest/collector/download/1.0'].get.responses['302'];
    expect(Object.keys(download.headers)).toEqual(['location', 'cache-control', 'x-checksum-sha256']);
    expect(document.paths['/search/records/1.0'].post.responses['4XX']).toEqual({ $ref: '#/components/responses/NestedError' });
    expect(document.paths['/rest/deployments/1.0'].get.responses['4XX']).toEqual({ $ref: '#/components/responses/FlatError' });
  });

  it("has a reference page at /rest/docs that names only this server's own URLs, each of which loads", async () => {
    const page = await call(t.url, 'GET', '/rest/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = page.body as string;
    const urls = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    expect(html).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}\//i); // no absolute URL anywhere in it
    for (const url of urls) {
      expect(url, url).toMatch(/^\/[^/]/);
      const asset = await call(t.url, 'GET', url);
      expect(asset.status, url).toBe(200);
    }
    expect((await call(t.url, 'GET', '/rest/docs/package.json')).status).toBe(404);
    expect((await call(t.url, 'GET', '/rest/docs/..%2Fpackage.json')).status).toBe(404);
  });

  it('refuses an answer that does not fit it (the check every REST test runs)', () => {
    const answer = { method: 'GET', target: '/rest/profiles/1.0', contentType: 'application/json' };
    expect(openApiProblem({ ...answer, status: 200, body: { status: 'success', profiles: [], count: 0 } })).toBeUndefined();
    expect(openApiProblem({ ...answer, status: 200, body: { status: 'success', profiles: [] } })).toMatch(/must have required property 'count'/);
    expect(openApiProblem({ ...answer, status: 200, body: { status: 'success', profiles: 'none', count: 0 } })).toMatch(/\/profiles must be array/);
    expect(openApiProblem({ ...answer, status: 404, body: { error: 'not_found', message: 'x' } })).toMatch(/must have required property 'code'/);
    expect(openApiProblem({ ...answer, status: 201, body: {} })).toMatch(/the status is not in the OpenAPI document/);
    expect(openApiProblem({ ...answer, status: 200, contentType: 'text/plain', body: 'x' })).toMatch(/content type text\/plain/);
    expect(openApiProblem({ ...answer, target: '/rest/nowhere/1.0', status: 404, body: {} })).toBeUndefined();
  });
});
