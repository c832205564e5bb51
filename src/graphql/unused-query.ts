/** The mark Pothos's prisma plugin keeps on a planned query: whether a resolver read it (plugin-prisma util/usage.js). */
const used = Symbol.for('Pothos.isUsed');

/**
 * Passes `result` through. The N+1 guard (builder.ts, `onUnusedQuery`) fails a resolver that
 * never read the query it was handed; one that found nothing (null, or an empty list) may rightly
 * answer without reading rows (an id that cannot exist, a page past the end), and loaded no
 * relation for any row, so the query counts as used then. Where rows came back, the guard judges.
 */
export function foundNothingOr<T>(query: object, result: T): T {
  if ((result === null || (Array.isArray(result) && result.length === 0)) && used in query) (query as Record<symbol, boolean>)[used] = true;
  return result;
}
