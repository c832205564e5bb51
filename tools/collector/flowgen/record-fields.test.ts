import { describe, expect, it } from 'vitest';
import { fnvDecimal, fnvText, FNV_OFFSET } from './record-fields.js';

describe('fnvDecimal', () => {
  it('hashes a number as fnvText hashes its decimal text, from one digit to the largest safe integer', () => {
    const numbers = [0, 7, 9, 10, 99, 100, 443, 65535, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 1_700_000_000_000, Number.MAX_SAFE_INTEGER];
    let x = 99;
    for (let i = 0; i < 2000; i++) numbers.push((x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) >>> 0) % 10 ** (1 + (i % 10)));
    for (const n of numbers) for (const seed of [FNV_OFFSET, 0, 0x7fffffff]) expect(fnvDecimal(seed, n)).toBe(fnvText(seed, String(n)));
  });
});
