import { readFileSync, readdirSync } from 'node:fs';
import { type DocumentNode, Kind, type OperationDefinitionNode, getIntrospectionQuery, parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { graphql } from '../../test/kit/http.js';
import { seedTree } from '../../test/kit/seed.js';
import { MAX_DOCUMENT_ALIASES, MAX_DOCUMENT_DEPTH, documentLimitRules } from './document-limits.js';
import { schema } from './schema.js';

const operationsDir = new URL('../../schema/operations/', import.meta.url);
/** Every operation the service runs for rest-compat, each with the fragments file beside it. */
const shipped: DocumentNode[] = (() => {
  const fragments = readFileSync(new URL('fragments.graphql', operationsDir), 'utf8');
  return readdirSync(operationsDir)
    .filter((f) => f.endsWith('.graphql') && f !== 'fragments.graphql')
    .flatMap((f) => {
      const document = parse(`${readFileSync(new URL(f, operationsDir), 'utf8')}\n${fragments}`);
      const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      // One document per operation, with every fragment: an unused fragment is a validation error of its own.
      return operations.map((op) => ({ ...document, definitions: [op, ...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)] }));
    });
})();

/** A query `depth` fields deep: the caller's tenant, its parent's parent's … customerId. */
const tenantChain = (depth: number) => `{ viewerTenant { ${'parent { '.repeat(depth - 2)}customerId${' }'.repeat(depth - 2)} } }`;

describe('document limits', () => {
  it('let every operation of ours through', () => {
    expect(shipped.length).toBeGreaterThan(20);
    for (const document of shipped) {
      const errors = validate(schema, document, documentLimitRules);
      expect(errors.map((e) => e.message), (document.definitions[0] as OperationDefinitionNode).name?.value).toEqual([]);
    }
    expect(validate(schema, parse(getIntrospectionQuery()), documentLimitRules)).toEqual([]);
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
      const deeper = await graphql(t.url, tenantChain(MAX_DOCUMENT_DEPTH + 1), {}, token);
      expect(deeper.data).toBeUndefined();
      expect(deeper.errors?.[0]?.message).toMatch(/depth/i);
    });

    it(`refuses more than ${MAX_DOCUMENT_ALIASES} aliases before running anything, even unauthenticated`, async () => {
      const fields = Array.from({ length: MAX_DOCUMENT_ALIASES + 1 }, (_, i) => `a${i}: viewer { customerId }`).join(' ');
      const res = await graphql(t.url, `{ ${fields} }`);
      expect(res.data).toBeUndefined();
      expect(res.errors?.[0]?.message).toMatch(/aliases/i);
    });
  });
});
