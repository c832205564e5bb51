/**
 * A finding's evidence opens the flow search with its query (`/console/search?q=…&start=…&end=…`):
 * the link's `query` is `{query, start, end}` (docs/detections.md).
 */
export function searchPath(query: unknown): string | undefined {
  if (!query || typeof query !== 'object') return undefined;
  const { query: text, start, end } = query as Record<string, unknown>;
  if (typeof text !== 'string') return undefined;
  const params = new URLSearchParams({ q: text });
  if (typeof start === 'string' || typeof start === 'number') params.set('start', String(start));
  if (typeof end === 'string' || typeof end === 'number') params.set('end', String(end));
  return `/search?${params}`;
}
