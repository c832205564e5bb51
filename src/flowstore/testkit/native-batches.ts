/** Test batches in the Native format (docs/collector-protocol.md 4.1). */
import { encodeNativeBlock, nativeLayout } from '../native-block.js';

/** Records as one Native block, a column per path: the format's reference encoding, with each column's type inferred over the batch. */
export function nativeBatchOf(records: readonly Record<string, unknown>[], types: Record<string, string> = {}): Buffer {
  const columns = new Map<string, unknown[]>();
  const flatten = (obj: Record<string, unknown>, prefix: string, r: number) => {
    for (const [key, v] of Object.entries(obj)) {
      const path = prefix + key;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && path !== 'path') flatten(v as Record<string, unknown>, `${path}.`, r);
      else if (v !== null && v !== undefined) {
        if (!columns.has(path)) columns.set(path, new Array(records.length));
        columns.get(path)![r] = path === 'path' && typeof v !== 'string' ? JSON.stringify(v) : v;
      }
    }
  };
  records.forEach((record, r) => flatten(record, '', r));
  const typeOf = (path: string, values: unknown[]): string => {
    if (types[path]) return types[path]!;
    const present = values.filter((v) => v !== undefined);
    const nullable = (t: string) => (present.length < values.length ? `Nullable(${t})` : t);
    if (present.every((v) => Array.isArray(v))) return present.flat().every((e) => typeof e === 'string') ? 'Array(String)' : 'Array(Float64)';
    if (present.every((v) => typeof v === 'string')) return nullable('String');
    if (present.every((v) => typeof v === 'boolean')) return nullable('Bool');
    if (present.every((v) => Number.isSafeInteger(v))) return nullable('Int64');
    return nullable('Float64');
  };
  const layout = nativeLayout([...columns].map(([name, values]) => ({ name, type: typeOf(name, values) })));
  return encodeNativeBlock(
    layout,
    records.map((_, r) => [...columns.values()].map((values) => values[r])),
  );
}
