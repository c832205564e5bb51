import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './errors.js';

describe('the error code catalogue', () => {
  it('is the table docs/errors.md shows, row for row', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map(([, code, meaning]) => [code, meaning]);
    expect(rows).toEqual(Object.entries(ERROR_CODES));
  });
});
