// What a Native batch cannot tell from absence (native-batch.ts): a record as the service reads it
// from one, for comparing with the record sent.

/** The value without null, undefined, empty arrays and the objects left empty. */
export function withoutAbsent(value: unknown): unknown {
  if (Array.isArray(value) || typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value)
    .map(([k, v]) => [k, withoutAbsent(v)] as const)
    .filter(([, v]) => !isAbsent(v));
  return Object.fromEntries(entries);
}

function isAbsent(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}
