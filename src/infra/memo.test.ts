import { describe, expect, it } from 'vitest';
import { memoizeBounded } from './memo.js';

describe('memoizeBounded', () => {
  it('computes a key once, forgets the oldest past its limit, and never remembers a throw', () => {
    const computed: string[] = [];
    const upper = memoizeBounded(2, (key: string) => {
      computed.push(key);
      if (key === 'bad') throw new Error('bad');
      return key.toUpperCase();
    });
    expect([upper('a'), upper('a'), upper('b'), upper('a')]).toEqual(['A', 'A', 'B', 'A']);
    expect(computed).toEqual(['a', 'b']);
    upper('c'); // the limit is 2: 'a', the oldest, goes
    upper('a');
    expect(computed).toEqual(['a', 'b', 'c', 'a']);
    expect(() => upper('bad')).toThrow('bad');
    expect(() => upper('bad')).toThrow('bad');
    expect(computed.filter((k) => k === 'bad')).toHaveLength(2);
  });
});
