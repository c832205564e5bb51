/**
 * The `fields` projection: which columns a search reads and the SQL that writes them as the
 * nested record. Whole records are the `source` column, written at ingest; a projection builds
 * its few paths from their columns (record-json.ts). `id`, `node_id` and `batch_id` appear only
 * when named in `fields`; `@timestamp` always does.
 */
import { COLUMNS, RECORD_COLUMNS, SOURCE_COLUMN, TIMESTAMP_PATH, canonicalPath, quoteIdent, type ColumnDef } from './columns.js';
import { recordJsonSql, type RecordJson, type SelectedColumn } from './record-json.js';

export interface Projection {
  /** A String expression: the record as JSON text. */
  readonly record: RecordJson;
  readonly columns: readonly ColumnDef[];
}

function within(path: string, requested: string): boolean {
  return path === requested || path.startsWith(requested + '.');
}

function choose(fields: readonly string[] | undefined): { selected: SelectedColumn[]; extrasPaths: string[] | undefined } {
  if (!fields) return { selected: RECORD_COLUMNS.map((col) => ({ col })), extrasPaths: undefined };
  const requested = [...new Set([TIMESTAMP_PATH, ...fields.map(canonicalPath)])];
  const selected: SelectedColumn[] = [];
  for (const col of COLUMNS) {
    if (col.role === 'derived') continue;
    if (col.role === 'internal') {
      if (requested.includes(col.path)) selected.push({ col });
      continue;
    }
    if (col.kind === 'json') {
      if (requested.some((r) => within(col.path, r))) {
        selected.push({ col });
        continue;
      }
      const inner = requested.filter((r) => r.startsWith(col.path + '.')).map((r) => r.slice(col.path.length + 1));
      if (inner.length) selected.push({ col, subPaths: inner });
      continue;
    }
    if (requested.some((r) => within(col.path, r))) selected.push({ col });
  }
  return { selected, extrasPaths: requested };
}

/** The whole record built from its columns: what `source` holds, for rows stored before it existed. */
export function wholeRecordSql(): string {
  return recordJsonSql(RECORD_COLUMNS.map((col) => ({ col }))).sql;
}

const cache = new Map<string, Projection>();
const CACHE_LIMIT = 256;

/** The projection for a `fields` list (already validated); undefined = the whole record. */
export function projectionFor(fields?: readonly string[]): Projection {
  const key = fields ? JSON.stringify([...fields].sort()) : '*';
  const hit = cache.get(key);
  if (hit) return hit;
  const { selected, extrasPaths } = choose(fields);
  const record = fields ? recordJsonSql(selected, extrasPaths) : { sql: quoteIdent(SOURCE_COLUMN), params: {} };
  const projection: Projection = { record, columns: selected.map((s) => s.col) };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, projection);
  return projection;
}
