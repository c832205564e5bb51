/** NUL (PostgreSQL's text and jsonb refuse it) and lone UTF-16 surrogates (not Unicode). */
const unstorableText = /\u0000|\p{Cs}/u;

/**
 * What keeps a value parsed from a client's JSON out of PostgreSQL or JSON.stringify, as a phrase
 * that follows the field's name; undefined when nothing does: nesting deeper than `maxDepth`
 * (JSON.parse takes depths that JSON.stringify overflows the stack on), or NUL or a lone
 * surrogate in any string or key. Walked with a stack of its own, so any depth is safe to check.
 */
export function storableJsonProblem(value: unknown, maxDepth: number): string | undefined {
  const pending: Array<{ item: unknown; depth: number }> = [{ item: value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { item, depth } = next;
    if (typeof item === 'string') {
      if (unstorableText.test(item)) return 'must not contain NUL or lone surrogates';
    } else if (item !== null && typeof item === 'object') {
      if (depth >= maxDepth) return `must not nest deeper than ${maxDepth} levels`;
      for (const [key, child] of Object.entries(item)) {
        if (unstorableText.test(key)) return 'must not contain NUL or lone surrogates';
        pending.push({ item: child, depth: depth + 1 });
      }
    }
  }
  return undefined;
}
