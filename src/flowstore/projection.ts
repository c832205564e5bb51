/**
 * The `fields` projection: the SQL of the records a search returns. Whole records are the
 * `source` column, written at ingest; a projection cuts its paths out of it (record-json.ts).
 * `id`, `node_id` and `batch_id` appear only when named in `fields`; `@timestamp` always does.
 */
import { COLUMNS, SOURCE_COLUMN, TIMESTAMP_PATH, canonicalPath, quoteIdent } from './columns.js';
import { memoizeBounded } from '../infra/memo.js';
import { projectedRecordSql, type Projected, type RecordJson } from './record-json.js';

function within(path: string, requested: string): boolean {
  return path === requested || path.startsWith(requested + '.');
}

/** Which requested paths are ours, which are cut out of `source`, and which reach into a JSON array. */
function choose(fields: readonly string[]): Projected {
  const requested = [...new Set([TIMESTAMP_PATH, ...fields.map(canonicalPath)])];
  const internal = COLUMNS.filter((c) => c.role === 'internal' && requested.includes(c.path));
  const arrays = COLUMNS.filter((c) => c.kind === 'json' && !requested.some((r) => within(c.path, r)))
    .map((col) => ({ col, subPaths: requested.filter((r) => r.startsWith(col.path + '.')).map((r) => r.slice(col.path.length + 1)) }))
    .filter((a) => a.subPaths.length > 0);
  const paths = requested.filter((r) => !internal.some((c) => c.path === r) && !arrays.some((a) => r.startsWith(a.col.path + '.')));
  return { internal, paths, arrays };
}

const WHOLE: RecordJson = { sql: quoteIdent(SOURCE_COLUMN), params: {} };
/** By the sorted fields' JSON, so that an order of `fields` is built once. */
const projectionOf = memoizeBounded(256, (sortedFields: string) => projectedRecordSql(choose(JSON.parse(sortedFields) as string[])));

/** The records' SQL for a `fields` list (already validated); undefined = whole records. */
export function projectionFor(fields?: readonly string[]): RecordJson {
  return fields ? projectionOf(JSON.stringify([...fields].sort())) : WHOLE;
}
