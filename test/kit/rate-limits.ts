import { expect } from 'vitest';
import type { JsonResponse } from './http.js';

/** Windows are whole minutes (of the database's clock, the same machine's): start a burst early in one, so it cannot straddle two. */
export async function earlyInWindow() {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 40_000) await new Promise((r) => setTimeout(r, 60_500 - intoWindow));
}

/** Sends `count` requests one after another; all must succeed (not 429). */
export async function burst(count: number, send: (i: number) => Promise<JsonResponse>) {
  for (let i = 0; i < count; i++) {
    const res = await send(i);
    expect(res.status, `request ${i + 1} of ${count}: ${JSON.stringify(res.body)}`).not.toBe(429);
  }
}

export function expectRateLimited(res: JsonResponse, by: 'address' | 'client_id') {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: 'rate_limited', code: 'rate_limited', message: expect.stringContaining(`from this ${by}`) });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}
