import { describe, expect, it } from 'vitest';
import { ANONYMOUS_PER_CLIENT_PER_MINUTE, AnonymousAllowance } from './anonymous-allowance.js';

describe('the anonymous allowance', () => {
  it('lets each client id leave its allowance per minute, then again in the next minute', () => {
    const allowance = new AnonymousAllowance();
    const takes = (id: string, at: number) => Array.from({ length: ANONYMOUS_PER_CLIENT_PER_MINUTE + 3 }, () => allowance.take(id, at)).filter(Boolean).length;
    expect(takes('cli_a', 1_000)).toBe(ANONYMOUS_PER_CLIENT_PER_MINUTE);
    expect(takes('cli_b', 2_000)).toBe(ANONYMOUS_PER_CLIENT_PER_MINUTE);
    expect(takes('cli_a', 30_000)).toBe(0);
    expect(takes('cli_a', 61_000)).toBe(ANONYMOUS_PER_CLIENT_PER_MINUTE);
  });
});
