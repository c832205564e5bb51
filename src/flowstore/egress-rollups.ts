/**
 * Hourly rollups of egress flows for explore (docs/explore.md "Storage"), kept by ClickHouse as
 * projections of the flows table (of its egress rows only), and the one statement shape that
 * reads them.
 *
 * A projection lives inside each data part: it is written by the insert that writes the part,
 * merged with it, rebuilt when a merge collapses re-sent records
 * (`deduplicate_merge_projection_mode`) or a tenant's lightweight DELETE removes rows
 * (`lightweight_mutation_projection_mode`), and dropped with the part by retention. So a rollup
 * always agrees with the rows it sums, and nothing beside the flows table needs deleting or
 * backfilling in step. Statements name the flows table; ClickHouse reads a projection when it
 * holds the statement's keys and aggregates, part by part (a part written before the projection
 * existed is read row by row until the migration's MATERIALIZE PROJECTION reaches it).
 *
 * Rolled up is what never changes: the organization the collector named (`collector_org`) and,
 * for flows it named none for, the destination address (`dataset_ip`). The IP → organization
 * dataset names those addresses when a view runs, so upgrading the dataset changes the answers at
 * once and rewrites nothing.
 */
import { DOWNLOAD_SQL, EGRESS_SQL, UPLOAD_SQL } from './egress.js';
import { FLOWS_TABLE } from './ddl.js';
import { HOUR_SQL, hourSplit } from './hour-split.js';
import { type OwnSegment, inlineEgressSql, ownFlowView } from './own-networks.js';
import { named, type ParamBag } from './sql.js';

const BYTES_SQL = `(${UPLOAD_SQL} + ${DOWNLOAD_SQL})`;
const BEACON = 'ifNull(`beacon_session_level_is_beacon` = true OR `beacon_packet_level_is_beacon` = true, 0)';
const DURATION_SQL = '`stats_timing_duration_secs_sum` / if(ifNull(`stats_timing_duration_secs_count`, 0) > 0, `stats_timing_duration_secs_count`, 1)';
/** The inter-arrival fields collectors compute per flow (cadence averages them). */
export const INTER_ARRIVAL_FIELDS = ['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap'] as const;

/** The destination of a flow without a collector-named organization (NULL otherwise): what the dataset names. */
export const DATASET_IP_SQL = 'if(`collector_org` IS NULL, `dst_ip_addr`, NULL)';

/** Keys every rollup starts with: tenant, organization (named or by address), hour (UTC). */
const COMMON_KEYS = {
  customer_id: '`customer_id`',
  collector_org: '`collector_org`',
  dataset_ip: DATASET_IP_SQL,
  hour: HOUR_SQL,
} as const;

export interface Rollup<K extends string = string, V extends string = string> {
  readonly name: string;
  /** GROUP BY expressions by alias, the common keys first. */
  readonly keys: Readonly<Record<K, string>>;
  /** Aggregates by alias. */
  readonly values: Readonly<Record<V, string>>;
}

const rollup = <K extends string, V extends string>(
  name: string,
  keys: Record<K, string>,
  values: Record<V, string>,
): Rollup<K | keyof typeof COMMON_KEYS, V> => ({
  name,
  keys: { ...COMMON_KEYS, ...keys },
  values,
});

const interArrival = (f: string) => `\`stats_timing_inter_arrival_secs_${f}\``;

export const EGRESS_ROLLUPS = {
  /**
   * Per source and source process: volumes, the moments of per-flow bytes, entropy and duration,
   * beacon verdicts, inter-arrival fields, and every flow time in epoch milliseconds (cadence
   * merges flows less than 1 s apart into sessions, so it needs them all).
   */
  sources: rollup(
    'egress_sources',
    { src_ip: '`src_ip`', src_ip_addr: '`src_ip_addr`', process: '`src_process_name`' },
    {
      n: 'count()',
      up: `sum(${UPLOAD_SQL})`,
      down: `sum(${DOWNLOAD_SQL})`,
      bytes_sq: `sum(${BYTES_SQL} * ${BYTES_SQL})`,
      entropy_sum: 'sumIf(`stats_size_payload_entropy_sum`, `stats_size_payload_entropy_count` > 0)',
      entropy_n: 'sumIf(`stats_size_payload_entropy_count`, `stats_size_payload_entropy_sum` IS NOT NULL)',
      duration_sum: `sum(${DURATION_SQL})`,
      duration_n: `count(${DURATION_SQL})`,
      // Packed in arrays: every column a statement reads costs it a read in every part.
      /** [beacon flows, Σ their interval (ms), how many have one] */
      beacon: `sumForEach([toInt64(${BEACON}), if(${BEACON}, ifNull(\`beacon_interval_value_ms\`, 0), 0), toInt64(${BEACON} AND \`beacon_interval_value_ms\` IS NOT NULL)])`,
      /** Σ of each INTER_ARRIVAL_FIELDS field, and how many flows have it. */
      inter_sum: `sumForEach([${INTER_ARRIVAL_FIELDS.map((f) => `ifNull(${interArrival(f)}, 0)`).join(', ')}])`,
      inter_n: `sumForEach([${INTER_ARRIVAL_FIELDS.map((f) => `toUInt64(${interArrival(f)} IS NOT NULL)`).join(', ')}])`,
      times: 'groupArray(toUnixTimestamp64Milli(`timestamp`))',
    },
  ),
  /** Per destination address, its industry and country. */
  destinations: rollup(
    'egress_destinations',
    {
      dst_ip_addr: '`dst_ip_addr`',
      industry: '`dst_ctx_industry`',
      country: "coalesce(nullIf(`dst_geo_country_name`, ''), nullIf(`dst_geo_country_iso_code`, ''))",
    },
    { n: 'count()' },
  ),
  /** Per TLS version, destination port, transport and application. */
  access: rollup(
    'egress_access',
    { tls: "nullIf(`tls_version`, '')", port: '`dst_port`', proto: "nullIf(`transport_proto`, '')", app: "nullIf(`app_name`, '')" },
    { n: 'count()', bytes: `sum(${BYTES_SQL})` },
  ),
};

/**
 * Bytes per granule of a rollup (the table's default is 10 MiB): a view reads one organization's
 * rows of every part, and a granule is the least it reads, so a rare organization would otherwise
 * read a large granule of flow-time arrays per part for its few rows.
 */
const ROLLUP_GRANULE_BYTES = 256 * 1024;

const projectionSql = (r: Rollup) => {
  const keys = Object.values(r.keys).join(', ');
  return `PROJECTION IF NOT EXISTS ${r.name} (SELECT ${keys}, ${Object.values(r.values).join(', ')} WHERE ${EGRESS_SQL} GROUP BY ${keys}) WITH SETTINGS (index_granularity_bytes = ${ROLLUP_GRANULE_BYTES})`;
};

/**
 * The flow store migration that adds the rollups: the projection modes, the projections, and
 * their build for the parts already written, a background mutation (queries read those parts row
 * by row until it reaches them). Every statement can run again. Changing a rollup later is a new
 * migration that drops and adds it.
 */
export function egressRollupMigration(): string[] {
  return [
    ...egressRollupDdl(FLOWS_TABLE),
    ...Object.values(EGRESS_ROLLUPS).map((r) =>
      named('flowstore:schema.materialize_projection', `ALTER TABLE ${FLOWS_TABLE} MATERIALIZE PROJECTION ${r.name} SETTINGS mutations_sync = 0`),
    ),
  ];
}

/** The projection modes and the projections, on `table` (a table being filled builds them as it goes). */
export function egressRollupDdl(table: string): string[] {
  return [
    named(
      'flowstore:schema.projection_modes',
      `ALTER TABLE ${table} MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'rebuild'`,
    ),
    ...Object.values(EGRESS_ROLLUPS).map((r) => named('flowstore:schema.add_projection', `ALTER TABLE ${table} ADD ${projectionSql(r)}`)),
  ];
}

/** The tenants, window and narrowing of an egress question. */
export interface EgressWindow {
  customerIds: readonly string[];
  startMs: number;
  /** Inclusive. */
  endMs: number;
  /** One internal source, as canonical IPv6 text. */
  srcIp?: string;
  /**
   * The own networks of tenants among `customerIds` whose networks change which flows are egress
   * (own-networks.ts `reclassifies`): those tenants' flows are read row by row, classified with
   * their networks, instead of from the rollups.
   */
  reclassified?: readonly OwnSegment[];
}

/** Tenants and source: the start of every WHERE, before egress and the time condition. */
function scopeWhere(customerIds: readonly string[], w: EgressWindow, p: ParamBag): string {
  const clauses = [`\`customer_id\` IN ${p.add([...customerIds], 'Array(String)')}`];
  if (w.srcIp !== undefined) clauses.push(`\`src_ip_addr\` = toIPv6(${p.add(w.srcIp, 'String')})`);
  return clauses.join(' AND ');
}

/**
 * `(SELECT <keys>, <values> FROM flows WHERE … [GROUP BY <keys>])`: the window's egress flows
 * summed per `keys`. The whole hours come from the rollup; the partial hours at either end from
 * the rows (the same SELECT with a finer time condition, stacked with UNION ALL), so any window in
 * milliseconds gets the exact answer. `covering` reads instead the whole hours that cover the
 * window, from the rollup alone: a superset, for a list of candidates. `where` must use only the
 * rollup's keys.
 */
export function egressRows<K extends string, V extends string>(
  r: Rollup<K, V>,
  w: EgressWindow,
  p: ParamBag,
  pick: { keys: readonly K[]; values: readonly V[]; where?: string; covering?: boolean },
): string {
  const columns = [...pick.keys.map((k) => `${r.keys[k]} AS ${k}`), ...pick.values.map((v) => `${r.values[v]} AS ${v}`)].join(', ');
  const groupBy = pick.keys.length ? ` GROUP BY ${pick.keys.join(', ')}` : '';
  const where = pick.where ? ` AND ${pick.where}` : '';
  const times = hourSplit(w.startMs, w.endMs, p, { covering: pick.covering });
  const byRows = new Set(w.reclassified?.map((s) => s.customerId));
  const fromRollups = w.customerIds.filter((id) => !byRows.has(id));
  const selects: string[] = [];
  if (fromRollups.length) {
    const scope = `${scopeWhere(fromRollups, w, p)} AND ${EGRESS_SQL}`;
    selects.push(...times.map((time) => `SELECT ${columns} FROM ${FLOWS_TABLE} WHERE ${scope} AND ${time}${where}${groupBy}`));
  }
  if (byRows.size) {
    const scope = `${scopeWhere([...byRows], w, p)} AND (${times.join(' OR ')})`;
    const inline = inlineEgressSql(w.reclassified!, p);
    if (inline) selects.push(`SELECT ${columns} FROM ${FLOWS_TABLE} WHERE ${scope} AND ${inline}${where}${groupBy}`);
    else {
      const view = ownFlowView(w.reclassified!, scope, p);
      selects.push(`SELECT ${columns} FROM ${view.from} WHERE ${view.egress}${where}${groupBy}`);
    }
  }
  return `(${selects.join(' UNION ALL ')})`;
}
