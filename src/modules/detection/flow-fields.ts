import { columnForPath } from '../../flowstore/index.js';

/**
 * Record fields the detectors read that are not all registry columns: fields the registry has
 * promoted are read from their column (whose DEFAULT reads `extras` for rows stored before the
 * promotion); the others from the `extras` JSON, where ingest keeps keys the registry does not
 * know. The JSON path is ours, never user input.
 */
const EXTRA_PATHS = {
  'src.process.name': ['src', 'process', 'name'],
  'dst.process.name': ['dst', 'process', 'name'],
  'tls.version': ['tls', 'version'],
  'tls.sni': ['tls', 'sni'],
  'dns.rrname': ['dns', 'rrname'],
  'dns.rrtype': ['dns', 'rrtype'],
  'suricata.alert.signature': ['suricata', 'alert', 'signature'],
} as const;

export type ExtraField = keyof typeof EXTRA_PATHS;

/** A Nullable(String) SQL expression for `path`: the registry column, falling back to `extras`. */
export function textField(path: ExtraField): string {
  const json = `nullIf(JSONExtractString(\`extras\`, ${EXTRA_PATHS[path].map((k) => `'${k}'`).join(', ')}), '')`;
  const column = columnForPath(path);
  return column ? `nullIf(\`${column.column}\`, '')` : json;
}

/**
 * Host context of the source process (wire extras: pid, executable, user, as the reference
 * collector's host module writes them): the JSON text of `src.process` without the promoted name.
 * Only flows whose process carries a pid have it: a name alone is a label, not an observed process.
 */
export const SRC_PROCESS_CONTEXT = "JSONExtractRaw(`extras`, 'src', 'process')";
export const SRC_PROCESS_HAS_PID = "JSONHas(`extras`, 'src', 'process', 'pid')";

/** Whether a traffic-link PQL sentence may filter on `path` (it needs a filterable registry column). */
export const filterable = (path: string): boolean => columnForPath(path)?.filterable ?? false;
