import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/graphql/schema.js';

describe('schema/schema.graphql', () => {
  it('is the schema Pothos prints (run `npm run schema:print` and `npm run codegen` after changing types)', () => {
    const committed = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printedSchema());
  });
});
