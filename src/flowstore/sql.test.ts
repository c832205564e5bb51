import { describe, expect, it } from 'vitest';
import { ParamBag } from './sql.js';

describe('ParamBag', () => {
  it('binds a value used twice with the same type once, and anything else apart', () => {
    const params = new ParamBag();
    const tenant = params.add('c1', 'String');
    expect(params.add('c1', 'String')).toBe(tenant);
    expect(params.add(1, 'Int64')).not.toBe(params.add('1', 'String'));
    expect(params.add(1, 'Int64')).not.toBe(params.add(1, 'UInt64'));
    expect(params.add(['a', 'b'], 'Array(String)')).toBe(params.add(['a', 'b'], 'Array(String)'));
    expect(params.add(['a', 'b'], 'Array(String)')).not.toBe(params.add(['b', 'a'], 'Array(String)'));
    expect(params.add(2n ** 64n - 1n, 'UInt64')).toBe(params.add(2n ** 64n - 1n, 'UInt64'));
    expect(Object.values(params.values)).toEqual(['c1', 1, '1', 1, ['a', 'b'], ['b', 'a'], 2n ** 64n - 1n]);
  });
});
