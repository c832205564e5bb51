import { COLLECTOR_ORG_SQL, EGRESS_EXPR } from './egress.js';

/**
 * The column registry: one row per leaf of the flow record (wire.md 5.4). Everything else in the
 * flow store is generated from it — the CREATE TABLE (ddl.ts), the PQL field whitelist and value
 * kinds (pql/check.ts), the `sort` whitelist, the `fields` projection and the function that
 * rebuilds nested JSON from a row (projection.ts), and the row builder used by ingest (ingest.ts).
 * Adding a field to the record is adding one line here; schema.ts adds the column on next start.
 */

/** How a PQL value is read and compared for a field. */
export type ValueKind = 'string' | 'int' | 'float' | 'bool' | 'ip' | 'timestamp' | 'string[]' | 'float[]' | 'json';

/**
 * - `leaf`: part of the wire record, returned by search.
 * - `internal`: bookkeeping we add (`id`, `node_id`, `batch_id`); returned only when named in `fields`.
 * - `derived`: computed by ClickHouse from other columns to make a filter fast; never returned.
 */
export type ColumnRole = 'leaf' | 'internal' | 'derived';

export interface ColumnDef {
  /** Dotted wire path, e.g. `dst.port`, `stats.volume.bytes.total`, `@timestamp`. */
  readonly path: string;
  /** ClickHouse column name (always quoted with backticks in generated SQL). */
  readonly column: string;
  /** Full ClickHouse type. */
  readonly type: string;
  readonly kind: ValueKind;
  readonly role: ColumnRole;
  readonly nullable: boolean;
  readonly filterable: boolean;
  readonly sortable: boolean;
  /** Expression for a MATERIALIZED column (ClickHouse computes it at insert). */
  readonly materialized?: string;
  /**
   * DEFAULT expression: what rows that do not carry the column read (rows written before the
   * column existed, and inserts that omit it). Used by fields promoted out of `extras`.
   */
  readonly defaultExpr?: string;
  /** Skip index over this column, e.g. `bloom_filter(0.01)`. */
  readonly index?: string;
  readonly codec?: string;
  /** For `ip` fields: the materialized IPv6 column used for address/CIDR comparison, if any. */
  readonly addrColumn?: string;
  /** Inclusive range accepted at ingest for integer columns. */
  readonly intRange?: readonly [number, number];
}

/** A column that has no wire path (ClickHouse-side helpers such as parsed IPv6 addresses). */
export interface HiddenColumnDef {
  readonly column: string;
  readonly type: string;
  readonly materialized: string;
  readonly index?: string;
}

type Opts = Partial<Pick<ColumnDef, 'column' | 'index' | 'codec' | 'filterable' | 'sortable' | 'role' | 'materialized' | 'defaultExpr' | 'addrColumn'>>;

const INT_RANGES: Record<string, readonly [number, number]> = {
  UInt8: [0, 255],
  UInt16: [0, 65_535],
  UInt32: [0, 4_294_967_295],
  Int32: [-2_147_483_648, 2_147_483_647],
  Int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** `src.geo.asn` → `src_geo_asn`; `@timestamp` → `timestamp`; `meta.@ingest_time` → `meta_ingest_time`. */
export function columnNameFor(path: string): string {
  return path.replace(/@/g, '').replace(/\./g, '_');
}

function def(path: string, type: string, kind: ValueKind, opts: Opts = {}): ColumnDef {
  const isArray = kind.endsWith('[]');
  const filterable = opts.filterable ?? (kind !== 'float[]' && kind !== 'json');
  const base = type.replace(/^Nullable\((.*)\)$/, '$1');
  const intRange = kind === 'int' ? INT_RANGES[base] : undefined;
  return {
    path,
    column: opts.column ?? columnNameFor(path),
    type,
    kind,
    role: opts.role ?? 'leaf',
    nullable: type.startsWith('Nullable(') || type.startsWith('LowCardinality(Nullable('),
    filterable,
    sortable: opts.sortable ?? (!isArray && kind !== 'json'),
    ...(opts.materialized ? { materialized: opts.materialized } : {}),
    ...(opts.defaultExpr ? { defaultExpr: opts.defaultExpr } : {}),
    ...(opts.index ? { index: opts.index } : {}),
    ...(opts.codec ? { codec: opts.codec } : {}),
    ...(opts.addrColumn ? { addrColumn: opts.addrColumn } : {}),
    ...(intRange ? { intRange } : {}),
  };
}

const str = (path: string, opts?: Opts) => def(path, 'Nullable(String)', 'string', opts);
/** Low-cardinality strings (enums, names, countries): dictionary-encoded. */
const lc = (path: string, opts?: Opts) => def(path, 'LowCardinality(Nullable(String))', 'string', opts);
const int = (path: string, width: keyof typeof INT_RANGES, opts?: Opts) => def(path, `Nullable(${width})`, 'int', opts);
/** Float64, never Float32: a Float32 would not give back the number that was sent. */
const float = (path: string, opts?: Opts) => def(path, 'Nullable(Float64)', 'float', opts);
const bool = (path: string, opts?: Opts) => def(path, 'Nullable(Bool)', 'bool', opts);
/** IPs are stored as the text that was sent, so they come back byte for byte. */
const ip = (path: string, opts?: Opts) => def(path, 'Nullable(String)', 'ip', opts);
const strs = (path: string, opts?: Opts) => def(path, 'Array(LowCardinality(String))', 'string[]', opts);
const moments = (prefix: string) => [int(`${prefix}.count`, 'Int64'), float(`${prefix}.sum`), float(`${prefix}.sum_squares`), float(`${prefix}.sum_cubes`)];

const geo = (side: string) => [
  lc(`${side}.geo.continent_name`),
  lc(`${side}.geo.country_iso_code`),
  lc(`${side}.geo.country_name`),
  lc(`${side}.geo.city_name`),
  lc(`${side}.geo.time_zone`),
  str(`${side}.geo.location_network`),
  int(`${side}.geo.asn`, 'UInt32'),
  lc(`${side}.geo.org`),
  str(`${side}.geo.as_network`),
  int(`${side}.geo.accuracy_radius`, 'UInt32'),
  float(`${side}.geo.location.lat`),
  float(`${side}.geo.location.lon`),
];

const direction = (side: 'src' | 'dst') => [
  ip(`${side}.ip`, { addrColumn: `${side}_ip_addr` }),
  int(`${side}.port`, 'UInt16', { index: 'bloom_filter(0.01)' }),
  lc(`${side}.address_type`),
  ...geo(side),
  lc(`${side}.ctx.organization`),
  lc(`${side}.ctx.industry`),
  str(`${side}.ctx.fqdn`, { index: 'bloom_filter(0.01)' }),
  int(`${side}.ctx.id`, 'Int64'),
  lc(`${side}.ctx.method`),
  def(`${side}.ctx.vector`, 'Array(Float64)', 'float[]'),
];

const scale = (prefix: string) => [
  float(`${prefix}.beacon_score`),
  float(`${prefix}.timing_regularity`),
  float(`${prefix}.timing_predictability`),
  float(`${prefix}.timing_uniformity`),
  float(`${prefix}.pattern_significance`),
  bool(`${prefix}.is_beacon`),
  int(`${prefix}.sample_count`, 'Int64'),
  lc(`${prefix}.analysis_type`),
];

const triple = (prefix: string) => [float(`${prefix}.src`), float(`${prefix}.dst`), float(`${prefix}.total`)];

/**
 * Path elements carry sensor names: one JSON string holds the array as sent, and a few
 * materialized arrays make the sensor fields filterable without parsing JSON at query time.
 */
const sensorArray = (field: string) =>
  def(`path.sensor.${field}`, 'Array(String)', 'string[]', {
    role: 'derived',
    materialized: `arrayFilter(x -> x != '', arrayMap(x -> JSONExtractString(x, 'sensor', '${field}'), JSONExtractArrayRaw(ifNull(\`path\`, '[]'))))`,
  });

/**
 * A string field that flows kept in `extras` before it had a column: rows stored earlier read it
 * from their `extras` JSON (ClickHouse evaluates a column's DEFAULT for parts that lack it), so
 * promoting a field needs no data migration.
 */
const promoted = (make: (path: string, opts?: Opts) => ColumnDef, path: string, opts: Opts = {}) =>
  make(path, {
    ...opts,
    defaultExpr: `JSONExtract(\`extras\`, ${path
      .split('.')
      .map((k) => `'${k}'`)
      .join(', ')}, 'Nullable(String)')`,
  });

export const TIMESTAMP_PATH = '@timestamp';

export const COLUMNS: readonly ColumnDef[] = [
  // Key columns first: tenant, node, time, record id (see ddl.ts for ORDER BY).
  def('meta.customer_id', 'LowCardinality(String)', 'string', { column: 'customer_id' }),
  def('node_id', 'LowCardinality(String)', 'string', { role: 'internal' }),
  def('@timestamp', "DateTime64(3, 'UTC')", 'timestamp', { codec: 'Delta, ZSTD(1)' }),
  def('id', 'String', 'string', { role: 'internal' }),
  def('batch_id', 'String', 'string', { role: 'internal', index: 'bloom_filter(0.01)' }),

  lc('doc_type'),
  str('key', { index: 'bloom_filter(0.01)' }),
  str('session_key', { index: 'bloom_filter(0.01)' }),
  lc('app_name', { index: 'set(1000)' }),
  ...direction('src'),
  ...direction('dst'),
  int('ip.version', 'UInt8'),
  // No skip index: every granule of real traffic holds TCP and UDP, so one would never skip a
  // granule, and reading it cost ~2 ms of each search naming the field at 100M (tools/bench/HISTORY.md).
  lc('transport.proto'),
  int('transport.proto_num', 'UInt8'),

  // Beyond wire.md 5.4 (extras allowed): what collectors add from host logs and Suricata
  // (docs/flowgen.md "Extras"), promoted from `extras` so that explore and PQL can group and
  // filter on them. `src.process.pid`, `dns.rrtype`... stay in `extras`.
  promoted(lc, 'src.process.name'),
  promoted(lc, 'dst.process.name'),
  promoted(lc, 'tls.version'),
  promoted(str, 'tls.sni', { index: 'bloom_filter(0.01)' }),
  promoted(str, 'dns.rrname', { index: 'bloom_filter(0.01)' }),

  def('path', 'Nullable(String)', 'json', { codec: 'ZSTD(1)' }),
  sensorArray('hostname'),
  sensorArray('name'),
  sensorArray('id'),

  str('threat.indicator', { index: 'bloom_filter(0.01)' }),
  lc('threat.type'),
  lc('threat.trajectory'),
  ip('threat.ip'),
  int('threat.mask', 'UInt8'),
  strs('threat.posture'),
  strs('threat.tags', { index: 'bloom_filter(0.01)' }),
  strs('threat.feeds'),
  strs('threat.countermeasures'),

  float('beacon.confidence'),
  str('beacon.first_seen'),
  str('beacon.last_seen'),
  ...scale('beacon.packet_level'),
  ...scale('beacon.session_level'),
  lc('beacon.primary_evidence'),
  bool('beacon.has_sessions'),
  float('beacon.weighted_confidence'),
  float('beacon.consensus_score'),
  int('beacon.interval.value_ms', 'Int64'),
  lc('beacon.meta.detection_engine'),
  lc('beacon.meta.analysis_version'),

  def('meta.@ingest_time', "Nullable(DateTime64(3, 'UTC'))", 'timestamp'),
  strs('meta.tags', { index: 'bloom_filter(0.01)' }),
  strs('meta.flow_types'),
  int('meta.time_of_day', 'Int32'),
  int('meta.day_of_week', 'Int32'),
  bool('meta.flipped'),

  int('icmp.type', 'UInt8'),
  lc('icmp.type_map'),
  int('icmp.code', 'UInt8'),

  strs('tcp.flags'),
  ...moments('tcp.window_length'),

  int('nat.event', 'Int32'),
  lc('nat.event_map'),
  ip('nat.xdst_ip'),
  int('nat.xdst_port', 'UInt16'),
  ip('nat.xsrc_ip'),
  int('nat.xsrc_port', 'UInt16'),

  ip('mpls.top_label_ip'),
  int('mpls.top_label_type', 'Int32'),
  int('mpls.top_label_prefix_len', 'UInt8'),
  int('mpls.count', 'Int32'),
  ...[1, 2, 3, 4, 5, 6].map((n) => int(`mpls.${n}_label`, 'UInt32')),
  int('mpls.last_ttl', 'Int32'),
  int('mpls.last_label', 'UInt32'),

  ip('encap.src_ip'),
  int('encap.src_port', 'UInt16'),
  ip('encap.dst_ip'),
  int('encap.dst_port', 'UInt16'),
  int('encap.proto', 'UInt8'),
  lc('encap.proto_map'),
  ip('encap.ipv6_src_ip'),
  ip('encap.ipv6_dst_ip'),

  int('suricata.flow_id', 'Int64'),
  lc('suricata.l7_app_map'),
  strs('suricata.event_types'),
  str('suricata.flow.community_id', { index: 'bloom_filter(0.01)' }),
  lc('suricata.flow.event_type'),
  bool('suricata.flow.alerted'),

  int('stats.connection_count', 'Int64'),
  ...moments('stats.volume.bytes.src'),
  ...moments('stats.volume.bytes.dst'),
  float('stats.volume.bytes.total', { index: 'minmax' }),
  ...triple('stats.volume.packets'),
  ...triple('stats.rate.bps'),
  ...triple('stats.rate.pps'),
  ...moments('stats.rtt_secs.net'),
  ...moments('stats.rtt_secs.app'),
  float('stats.quality.retrans.packets'),
  float('stats.quality.retrans.bytes'),
  float('stats.quality.fragments'),
  ...moments('stats.size.packet'),
  ...moments('stats.size.frame'),
  ...moments('stats.size.payload_entropy'),
  ...moments('stats.timing.duration_secs'),
  ...['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap'].map((k) => float(`stats.timing.inter_arrival_secs.${k}`)),

  float('metric.src_bytes'),
  float('metric.dst_bytes'),
  float('metric.total_bytes'),
];

/** Unknown keys of an ingested flow, kept as JSON so the record comes back whole ("extras allowed"). */
export const EXTRAS_COLUMN = 'extras';

/**
 * The whole record as search returns it, JSON written at ingest (ingest.ts). A page of whole
 * records reads this one column: the alternative, building each record from ~200 columns in SQL
 * (record-json.ts, still used for `fields` projections), costs ClickHouse ~150 ms just to plan.
 */
export const SOURCE_COLUMN = 'source';

export const HIDDEN_COLUMNS: readonly HiddenColumnDef[] = [
  { column: 'src_ip_addr', type: 'Nullable(IPv6)', materialized: 'toIPv6OrNull(`src_ip`)', index: 'bloom_filter(0.01)' },
  { column: 'dst_ip_addr', type: 'Nullable(IPv6)', materialized: 'toIPv6OrNull(`dst_ip`)', index: 'bloom_filter(0.01)' },
  // Egress flows (internal source, external destination; egress.ts): explore reads one byte per row.
  { column: 'is_egress', type: 'UInt8', materialized: EGRESS_EXPR },
  // The organization the collector named for the destination (egress.ts): the key of explore's rollups.
  { column: 'collector_org', type: 'LowCardinality(Nullable(String))', materialized: COLLECTOR_ORG_SQL },
];

/** Names the SDK README uses that are not record paths (wire.md 6.2). */
export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  protocol: 'transport.proto',
  bytes: 'stats.volume.bytes.total',
  packets: 'stats.volume.packets.total',
  // The only "hostname" in a flow record is the host whose collector saw the flow.
  hostname: 'path.sensor.hostname',
};

const BY_PATH: ReadonlyMap<string, ColumnDef> = new Map(COLUMNS.map((c) => [c.path, c]));

export function canonicalPath(name: string): string {
  // Own keys only: `constructor` or `__proto__` asked for is a path like any other.
  return Object.hasOwn(FIELD_ALIASES, name) ? FIELD_ALIASES[name]! : name;
}

/** The registry entry for a wire path or alias, or undefined. */
export function columnForPath(name: string): ColumnDef | undefined {
  return BY_PATH.get(canonicalPath(name));
}

/** Every path PQL accepts (aliases included): the filter whitelist. */
export function filterableFields(): string[] {
  return [...COLUMNS.filter((c) => c.filterable).map((c) => c.path), ...Object.keys(FIELD_ALIASES)];
}

export function sortableFields(): string[] {
  return [...COLUMNS.filter((c) => c.sortable).map((c) => c.path), ...Object.keys(FIELD_ALIASES).filter((a) => columnForPath(a)?.sortable)];
}

/** Record leaves, in registry order (what a search returns when `fields` is absent). */
export const RECORD_COLUMNS: readonly ColumnDef[] = COLUMNS.filter((c) => c.role === 'leaf');

/** An `ip` field as an IPv6 address (null when its text is none): its materialized column when it has one. */
export function addressSql(col: ColumnDef): string {
  return col.addrColumn ? quoteIdent(col.addrColumn) : `toIPv6OrNull(${quoteIdent(col.column)})`;
}

/** `name` quoted as a ClickHouse identifier. */
export function quoteIdent(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

function assertRegistryConsistent(): void {
  const seen = new Set<string>();
  for (const c of [...COLUMNS.map((c) => c.column), ...HIDDEN_COLUMNS.map((h) => h.column), EXTRAS_COLUMN, SOURCE_COLUMN]) {
    if (seen.has(c)) throw new Error(`column registry: duplicate column name ${c}`);
    seen.add(c);
  }
  const paths = new Set(COLUMNS.map((c) => c.path));
  for (const c of COLUMNS) {
    // A leaf may not also be an object: `a.b` and `a.b.c` cannot both be leaves.
    const parts = c.path.split('.');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('.');
      if (paths.has(prefix) && BY_PATH.get(prefix)?.role !== 'internal' && c.role !== 'derived') {
        throw new Error(`column registry: ${c.path} is under leaf ${prefix}`);
      }
    }
  }
}
assertRegistryConsistent();
