/** Columns the results table can show (dotted paths of the flow record, docs/flowstore.md), and the terms breakdown's fields. */
export const COLUMNS = [
  '@timestamp',
  'src.ip',
  'src.port',
  'dst.ip',
  'dst.port',
  'transport.proto',
  'app_name',
  'dst.ctx.organization',
  'src.process.name',
  'tls.version',
  'stats.volume.bytes.total',
] as const;

export const DEFAULT_COLUMNS = ['@timestamp', 'src.ip', 'dst.ip', 'dst.port', 'transport.proto', 'app_name'];

export const TERMS_FIELDS = ['dst.port', 'dst.ip', 'src.ip', 'app_name', 'transport.proto', 'dst.ctx.organization', 'src.process.name'] as const;

/** A dotted path's value in a record as JSON nests it (`src.ip` → record.src.ip); `@timestamp` is a top-level key. */
export function valueAt(record: unknown, path: string): unknown {
  if (record && typeof record === 'object' && path in record) return (record as Record<string, unknown>)[path];
  return path.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), record);
}

export function cellText(value: unknown, path: string): string {
  if (value == null) return '—';
  if (path === '@timestamp' && (typeof value === 'number' || typeof value === 'string')) return new Date(value).toISOString().replace('T', ' ').slice(0, 19);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export interface SearchParams {
  q: string;
  range: string;
  columns: string[];
  terms: string;
}

export function readSearch(params: URLSearchParams): SearchParams {
  const columns = (params.get('cols') ?? '').split(',').filter((c) => (COLUMNS as readonly string[]).includes(c));
  const terms = params.get('terms') ?? '';
  return {
    q: params.get('q') ?? '',
    range: params.get('range') ?? '1h',
    columns: columns.length > 0 ? columns : DEFAULT_COLUMNS,
    terms: (TERMS_FIELDS as readonly string[]).includes(terms) ? terms : 'dst.port',
  };
}

export function writeSearch(search: SearchParams): string {
  const params = new URLSearchParams({ q: search.q, range: search.range, cols: search.columns.join(','), terms: search.terms });
  return `?${params}`;
}
