import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../kit/app.js';
import { call } from '../kit/http.js';
import { seedCaller, seedTenant } from '../kit/seed.js';

/**
 * The search bodies the OpenAPI document gives are the ones the service takes: a body with every
 * documented field fits the schema and is answered 200, a body without a field the document
 * marks required is refused by both, and one without any other field is still answered 200.
 */
describe('the search request bodies in /rest/openapi.json', () => {
  let t: TestApp;
  let token: string;
  let customerId: string;
  let document: any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  beforeAll(async () => {
    t = await startTestApp();
    customerId = (await seedTenant(t.app)).id;
    token = (await seedCaller(t.app, customerId)).token;
    document = (await call(t.url, 'GET', '/rest/openapi.json')).body;
  });
  afterAll(() => t?.stop());

  const window = { start: { relative: { value: 1, unit: 'hours' } }, end: { now: true } };
  /** Every field the document names, each set to a value the service accepts; the required ones, fixed here so dropping one fails. */
  const cases = () => ({
    '/search/records/1.0': {
      required: ['module', 'instance_ids'],
      body: {
        instance_ids: [customerId],
        module: 'flows',
        sentence: 'dst.port eq 443',
        ...window,
        sort: [{ field: '@timestamp', order: 'DESC' }],
        fields: ['app_name', 'dst.ip'],
        size: 5,
        page: 0,
        timeseries: { interval: '5m', metric: 'sum:metric.total_bytes' },
      },
    },
    '/search/agg/1.0': {
      required: ['module', 'instance_ids', 'field'],
      body: {
        instance_ids: [customerId],
        module: 'flows',
        sentence: null,
        ...window,
        field: 'app_name',
        size: 3,
        metric: 'uniq:dst.ip',
        order: { by: 'key', direction: 'asc' },
      },
    },
  });

  const bodySchema = (path: string) => document.paths[path].post.requestBody.content['application/json'].schema;

  it('types every field and marks the ones the service requires', () => {
    for (const [path, { required, body }] of Object.entries(cases())) {
      const schema = bodySchema(path);
      expect(schema.required, path).toEqual(required);
      expect(Object.keys(schema.properties).sort(), path).toEqual(Object.keys(body).sort());
      for (const [field, property] of Object.entries<any>(schema.properties)) {
        expect(property.type ?? property.oneOf ?? property.const, `${path} ${field} is typed`).toBeDefined();
      }
      expect(schema.additionalProperties, path).toBe(false);
    }
  });

  it('fits what the service accepts and refuses', async () => {
    for (const [path, { required, body }] of Object.entries(cases())) {
      const fits = ajv.compile(bodySchema(path));
      expect(fits(body), `${path}: ${JSON.stringify(fits.errors)}`).toBe(true);
      const full = await call(t.url, 'POST', path, { token, body });
      expect(full.status, `${path}: ${JSON.stringify(full.body)}`).toBe(200);
      for (const field of Object.keys(body)) {
        const { [field]: _dropped, ...without } = body as Record<string, unknown>;
        const res = await call(t.url, 'POST', path, { token, body: without });
        if (required.includes(field)) {
          expect(fits(without), `${path} without ${field}`).toBe(false);
          expect(res.status, `${path} without ${field}`).toBe(400);
          expect(res.body.error.details.field, `${path} without ${field}`).toBe(field);
        } else {
          expect(fits(without), `${path} without ${field}`).toBe(true);
          expect(res.status, `${path} without ${field}: ${JSON.stringify(res.body)}`).toBe(200);
        }
      }
      const unknownField = { ...body, colour: 'blue' };
      expect(fits(unknownField), `${path} with an unknown field`).toBe(false);
      expect((await call(t.url, 'POST', path, { token, body: unknownField })).status, path).toBe(400);
    }
  });
});
