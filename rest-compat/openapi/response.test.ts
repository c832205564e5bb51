import { describe, expect, it } from 'vitest';
import { PollDeviceAuthorizationDocument, UpdateNodeDocument } from '../../src/generated/operations.js';
import { schema } from '../../src/graphql/schema.js';
import { RawResponse, type Route, defineRoute } from '../route.js';
import { mergeSchemas, routeResponses } from './response.js';

const row = (render: Route['render'], status?: number): Route =>
  defineRoute({
    method: 'POST',
    path: '/rest/test/1.0/:node_id',
    access: 'public',
    operation: UpdateNodeDocument,
    variables: () => ({ nodeId: 'x' }),
    render,
    status,
  });

describe('routeResponses: what a row renders of its operation, as a schema', () => {
  it('reads renamed, computed and passed-through fields, each typed by its GraphQL field', () => {
    const [ok] = routeResponses(
      schema,
      row(({ update }) => ({ status: 'success', node: update.node_id, parts: [update.version].length, update }), 201),
    );
    expect(ok!.status).toBe(201);
    expect(ok!.schema).toMatchObject({
      type: 'object',
      properties: {
        status: { type: 'string', const: 'success' },
        node: { type: 'string' },
        parts: { type: 'integer' },
        update: { type: 'object', properties: { node_id: { type: 'string' }, platform: { type: ['string', 'null'] } } },
      },
      required: ['status', 'node', 'parts', 'update'],
    });
  });

  it('follows each branch render takes on a null, and requires only what every branch gives', () => {
    const [ok] = routeResponses(
      schema,
      row(({ update }) => (update.platform === null ? { node_id: update.node_id } : { node_id: update.node_id, platform: update.platform })),
    );
    expect(ok!.schema!.required).toEqual(['node_id']);
    expect(Object.keys(ok!.schema!.properties as object)).toEqual(['node_id', 'platform']);
  });

  it('documents a raw answer by status, media type and headers, and a JSON one of the same status gains its headers', () => {
    const poll = defineRoute({
      method: 'POST',
      path: '/rest/test/poll',
      access: 'public',
      operation: PollDeviceAuthorizationDocument,
      variables: () => ({ deviceCode: 'x' }),
      render: ({ poll }) => (poll.slow_down ? new RawResponse(200, { 'content-type': 'application/json', 'retry-after': '5' }, '{}') : { status: poll.status }),
    });
    expect(routeResponses(schema, poll)).toEqual([
      { status: 200, contentType: 'application/json', headers: ['retry-after'], schema: expect.objectContaining({ required: ['status'] }) },
    ]);
    const redirect = routeResponses(
      schema,
      row(() => new RawResponse(302, { location: '/x' })),
    );
    expect(redirect).toEqual([{ status: 302, headers: ['location'] }]);
  });

  it('refuses a row whose render takes none of the samples, rather than document it without a success', () => {
    expect(() =>
      routeResponses(
        schema,
        row(() => {
          throw new Error('no');
        }),
      ),
    ).toThrow('POST /rest/test/1.0/:node_id: render refused every sample');
  });
});

describe('mergeSchemas', () => {
  it('merges objects field by field, a field required only where both require it', () => {
    const a = { type: 'object', properties: { x: { type: 'string' }, y: { type: 'integer' } }, required: ['x', 'y'] };
    const b = { type: 'object', properties: { x: { type: 'null' } }, required: ['x'] };
    expect(mergeSchemas(a, b)).toEqual({ type: 'object', properties: { x: { type: ['string', 'null'] }, y: { type: 'integer' } }, required: ['x'] });
  });

  it("keeps a leaf's description over the literal that stood for it, and offers either of two unlike schemas", () => {
    expect(mergeSchemas({ type: 'boolean' }, { type: 'boolean', description: 'd' })).toEqual({ type: 'boolean', description: 'd' });
    expect(mergeSchemas({ type: 'string' }, { type: 'integer' })).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
    expect(mergeSchemas({ type: 'array', items: { type: 'string' } }, { type: 'array' })).toEqual({ type: 'array', items: { type: 'string' } });
  });
});
