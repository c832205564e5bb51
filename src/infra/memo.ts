/**
 * Remembers a pure function's results by key, the oldest forgotten first past `limit`: for work
 * that requests repeat (checking a sentence, building a projection's SQL).
 */
export function memoizeBounded<K, V>(limit: number, compute: (key: K) => V): (key: K) => V {
  const remembered = new Map<K, V>();
  return (key) => {
    if (remembered.has(key)) return remembered.get(key)!;
    const value = compute(key);
    if (remembered.size >= limit) remembered.delete(remembered.keys().next().value!);
    remembered.set(key, value);
    return value;
  };
}
