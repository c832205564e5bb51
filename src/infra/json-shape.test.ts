import { describe, expect, it } from 'vitest';
import { storableJsonProblem } from './json-shape.js';

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};

describe('storableJsonProblem', () => {
  it('takes what PostgreSQL and JSON.stringify take', () => {
    expect(storableJsonProblem({ a: [1, 'ü☃🙂', null, true, { b: {} }] }, 4)).toBeUndefined();
    expect(storableJsonProblem(nested(16), 16)).toBeUndefined();
    expect(storableJsonProblem('plain', 0)).toBeUndefined();
  });

  it('names nesting past the limit, at any depth, without overflowing', () => {
    expect(storableJsonProblem(nested(17), 16)).toBe('must not nest deeper than 16 levels');
    expect(storableJsonProblem(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 64)).toBe('must not nest deeper than 64 levels');
  });

  it('names NUL and lone surrogates in strings and keys', () => {
    for (const bad of [{ a: 'x\u0000' }, ['\ud800'], { 'k\u0000': 1 }, { '\udc00': 1 }]) {
      expect(storableJsonProblem(bad, 8)).toBe('must not contain NUL or lone surrogates');
    }
  });
});
