/**
 * The explore views (wire.md §9) as ClickHouse statements over the flows table. Every statement
 * starts with the caller's tenants and time window (the table's primary key), keeps egress flows
 * only, and attributes organizations by the rule in flowstore/egress.ts. Values travel only as
 * typed parameters; per-org statements take the organization as `{pN:String}`.
 */
import { COLLECTOR_ORG_MISSING_SQL, COLLECTOR_ORG_SQL, CTX_ORG_MISSING_SQL, EGRESS_SQL, datasetOrgSql, egressOrgSql, FLOWS_TABLE, type FlowEngine, named, ParamBag } from '../../flowstore/index.js';

/** The tenants, window and narrowing of one explore request; built by the service only. */
export interface ExploreScope {
  customerIds: readonly string[];
  startMs: number;
  endMs: number;
  /** One internal source, as canonical IPv6 text. */
  srcIp?: string;
  /** Whether the IP → organization dictionary may be used. */
  withDataset: boolean;
  /**
   * Per-organization views: the destination addresses of flows without a collector-supplied
   * organization that the dataset gives this organization (datasetAddresses); usually few.
   */
  orgAddresses?: readonly string[];
  timeoutMs?: number;
}

/** Bytes internal → org and org → internal of one flow (collector moments, else metric fields). */
const UP = 'ifNull(`stats_volume_bytes_src_sum`, ifNull(`metric_src_bytes`, 0))';
const DOWN = 'ifNull(`stats_volume_bytes_dst_sum`, ifNull(`metric_dst_bytes`, 0))';
const int = (sql: string) => `toUInt64(round(${sql}))`;

/** `customer_id IN … AND timestamp in window AND egress [AND src]`: the start of every WHERE. */
function scopeWhere(s: ExploreScope, p: ParamBag): string {
  const clauses = [
    `\`customer_id\` IN ${p.add([...s.customerIds], 'Array(String)')}`,
    `\`timestamp\` >= fromUnixTimestamp64Milli(${p.add(s.startMs, 'Int64')}, 'UTC')`,
    `\`timestamp\` <= fromUnixTimestamp64Milli(${p.add(s.endMs, 'Int64')}, 'UTC')`,
    EGRESS_SQL,
  ];
  if (s.srcIp !== undefined) clauses.push(`\`src_ip_addr\` = toIPv6(${p.add(s.srcIp, 'String')})`);
  return clauses.join(' AND ');
}

/**
 * Flows of one organization: collector-named flows match on their columns; the others by
 * destination address, from the list `datasetAddresses` found (a per-row dictionary lookup costs
 * ~1 µs, and even reading every row's address doubles a view's time, so the branch is left out
 * when no address qualifies).
 */
function orgWhere(s: ExploreScope, org: string, p: ParamBag): string {
  const o = p.add(org, 'String');
  // The name is never empty, so plain equality needs no NULL/'' handling.
  const branches = [`\`dst_ctx_organization\` = ${o}`, `(${CTX_ORG_MISSING_SQL} AND \`dst_geo_org\` = ${o})`];
  if (s.orgAddresses?.length) {
    branches.push(`(${COLLECTOR_ORG_MISSING_SQL} AND \`dst_ip_addr\` IN (SELECT arrayJoin(${p.add(s.orgAddresses, 'Array(IPv6)')})))`);
  }
  return `${scopeWhere(s, p)} AND (${branches.join(' OR ')})`;
}

/** Most unattributed destination addresses one organization can have in a view. */
export const MAX_ORG_ADDRESSES = 100_000;

/** Destination addresses of the window's flows without a collector organization that the dataset gives `org`. */
export async function datasetAddresses(engine: FlowEngine, s: ExploreScope, org: string): Promise<string[]> {
  if (!s.withDataset) return [];
  const p = new ParamBag();
  const sql = named(
    'explore:org.dataset_addresses',
    `SELECT toString(ip) AS addr FROM (SELECT DISTINCT \`dst_ip_addr\` AS ip FROM ${FLOWS_TABLE} WHERE ${scopeWhere(s, p)} AND ${COLLECTOR_ORG_MISSING_SQL}) ` +
      `WHERE ${datasetOrgSql('ip')} = ${p.add(org, 'String')} LIMIT ${MAX_ORG_ADDRESSES}`,
  );
  return (await run<{ addr: string }>(engine, s, sql, p)).map((r) => r.addr);
}

const run = <T>(engine: FlowEngine, s: ExploreScope, sql: string, p: ParamBag) => engine.query<T>(sql, p.values, s.timeoutMs ? { timeoutMs: s.timeoutMs } : {});

export interface OrgListRow {
  name: string | null;
  upload: number;
  download: number;
  flows: number;
  sources: number;
  total_orgs: number;
  total_flows: number;
}

/**
 * Organizations ranked by bytes (then name), at most `size`, with the number of organizations
 * and of egress flows (attributed or not) on every row. Two stages: sums per (collector org,
 * unattributed address), then the dictionary on those few rows, then per organization.
 */
export async function listOrganizations(engine: FlowEngine, s: ExploreScope, size: number): Promise<OrgListRow[]> {
  const p = new ParamBag();
  const where = scopeWhere(s, p);
  const lookup = s.withDataset ? `coalesce(collector, ${datasetOrgSql('ip')})` : 'collector';
  const sql = named(
    'explore:organizations',
    `SELECT name, ${int('up')} AS upload, ${int('down')} AS download, n AS flows, sources, ` +
      `countIf(name IS NOT NULL) OVER () AS total_orgs, sum(n) OVER () AS total_flows FROM (` +
      `SELECT ${lookup} AS name, sum(up) AS up, sum(down) AS down, sum(n) AS n, uniqExactMerge(srcs) AS sources FROM (` +
      `SELECT ${COLLECTOR_ORG_SQL} AS collector, if(collector IS NULL, \`dst_ip_addr\`, NULL) AS ip, sum(${UP}) AS up, sum(${DOWN}) AS down, ` +
      `count() AS n, uniqExactState(\`src_ip\`) AS srcs FROM ${FLOWS_TABLE} WHERE ${where} GROUP BY collector, ip` +
      `) GROUP BY name) ORDER BY isNull(name), up + down DESC, name ASC LIMIT ${p.add(size, 'UInt32')}`,
  );
  return (await run<OrgListRow>(engine, s, sql, p)).map((r) => ({ ...r, flows: Number(r.flows), sources: Number(r.sources), total_orgs: Number(r.total_orgs), total_flows: Number(r.total_flows) }));
}

export interface HeaderRow {
  flows: number;
  upload: number;
  download: number;
  sources: number;
  endpoints: number;
  industry: string | null;
  geo: string | null;
}

export async function orgHeader(engine: FlowEngine, s: ExploreScope, org: string): Promise<HeaderRow> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.header',
    `SELECT count() AS flows, ${int(`sum(${UP})`)} AS upload, ${int(`sum(${DOWN})`)} AS download, uniqExact(\`src_ip\`) AS sources, ` +
      `uniqExact(\`dst_ip_addr\`) AS endpoints, ` +
      `topKIf(1)(\`dst_ctx_industry\`, nullIf(\`dst_ctx_industry\`, '') IS NOT NULL)[1] AS industry, ` +
      `topKIf(1)(coalesce(nullIf(\`dst_geo_country_name\`, ''), \`dst_geo_country_iso_code\`), ` +
      `coalesce(nullIf(\`dst_geo_country_name\`, ''), nullIf(\`dst_geo_country_iso_code\`, '')) IS NOT NULL)[1] AS geo ` +
      `FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)}`,
  );
  const r = (await run<HeaderRow>(engine, s, sql, p))[0]!;
  return { ...r, flows: Number(r.flows), sources: Number(r.sources), endpoints: Number(r.endpoints), industry: r.industry || null, geo: r.geo || null };
}

export interface ProcessRow {
  name: string;
  flows: number;
  sources: number;
}

/** Source processes of the org's flows, by flows (then name), at most `size`. */
export async function orgProcesses(engine: FlowEngine, s: ExploreScope, org: string, size: number): Promise<ProcessRow[]> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.processes',
    `SELECT \`src_process_name\` AS name, count() AS flows, uniqExact(\`src_ip\`) AS sources FROM ${FLOWS_TABLE} ` +
      `WHERE ${orgWhere(s, org, p)} AND nullIf(\`src_process_name\`, '') IS NOT NULL GROUP BY name ORDER BY flows DESC, name ASC LIMIT ${p.add(size, 'UInt32')}`,
  );
  return (await run<ProcessRow>(engine, s, sql, p)).map((r) => ({ name: r.name, flows: Number(r.flows), sources: Number(r.sources) }));
}

/** Flows per (ISO weekday 1–7, UTC hour 0–23). */
export async function orgTemporal(engine: FlowEngine, s: ExploreScope, org: string): Promise<{ day: number; hour: number; flows: number }[]> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.temporal',
    `SELECT toDayOfWeek(\`timestamp\`) AS day, toHour(\`timestamp\`) AS hour, count() AS flows FROM ${FLOWS_TABLE} ` +
      `WHERE ${orgWhere(s, org, p)} GROUP BY day, hour ORDER BY day, hour`,
  );
  return (await run<{ day: number; hour: number; flows: number }>(engine, s, sql, p)).map((r) => ({ day: Number(r.day), hour: Number(r.hour), flows: Number(r.flows) }));
}

/** Ratio between neighbouring gap bins of the cadence histogram (5%). */
export const GAP_BIN_RATIO = 1.05;
/** Flows of one source to the org starting less than this after the previous one join its session. */
export const SESSION_MERGE_MS = 1_000;
export const CDF_QUANTILES = [0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.99] as const;

export interface GapRow {
  gaps: number;
  quantiles: number[];
  /** Histogram of gaps on a log scale: bin index → count and sum of gaps (seconds). */
  bins: number[];
  counts: number[];
  sums: number[];
}

/**
 * Session gaps to the org: per source, flow starts in time order; a start less than
 * SESSION_MERGE_MS after the previous one continues that session; the gaps are the times between
 * consecutive session starts. One pass gives their exact quantiles and a log-scale histogram.
 */
export async function orgGaps(engine: FlowEngine, s: ExploreScope, org: string): Promise<GapRow> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.cadence_gaps',
    `SELECT count() AS gaps, quantilesExact(${CDF_QUANTILES.join(', ')})(gap) AS quantiles, ` +
      `sumMap([bin], [toUInt64(1)]) AS hist, sumMap([bin], [gap]) AS hist_sums FROM (` +
      `SELECT gap, toInt32(floor(log(gap) / log(${GAP_BIN_RATIO}))) AS bin FROM (` +
      `SELECT arrayJoin(arrayPopFront(arrayDifference(starts))) / 1000 AS gap FROM (` +
      `SELECT arrayFilter((t, d, i) -> i = 1 OR d >= ${SESSION_MERGE_MS}, ts, arrayDifference(ts), arrayEnumerate(ts)) AS starts FROM (` +
      `SELECT arraySort(groupArray(toUnixTimestamp64Milli(\`timestamp\`))) AS ts FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)} GROUP BY \`src_ip\`` +
      `))) WHERE gap > 0)`,
  );
  const r = (await run<{ gaps: number; quantiles: number[]; hist: [number[], number[]]; hist_sums: [number[], number[]] }>(engine, s, sql, p))[0];
  if (!r || Number(r.gaps) === 0) return { gaps: 0, quantiles: [], bins: [], counts: [], sums: [] };
  return { gaps: Number(r.gaps), quantiles: r.quantiles.map(Number), bins: r.hist[0].map(Number), counts: r.hist[1].map(Number), sums: r.hist_sums[1].map(Number) };
}

/** The inter-arrival fields collectors compute per flow (averaged into cadence `stats`). */
export const INTER_ARRIVAL_FIELDS = ['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap'] as const;

export interface CadenceFlowRow {
  beacon_flows: number;
  beacon_sources: number;
  beacon_interval_ms: number | null;
  stats: Record<string, number | null>;
}

/** The collector's beacon verdicts and averaged inter-arrival statistics of the org's flows. */
export async function orgCadenceFlows(engine: FlowEngine, s: ExploreScope, org: string): Promise<CadenceFlowRow> {
  const p = new ParamBag();
  const isBeacon = "(`beacon_session_level_is_beacon` = true OR `beacon_packet_level_is_beacon` = true)";
  const stats = INTER_ARRIVAL_FIELDS.map((f) => `avgOrNull(\`stats_timing_inter_arrival_secs_${f}\`) AS \`${f}\``).join(', ');
  const sql = named(
    'explore:org.cadence_flows',
    `SELECT countIf(${isBeacon}) AS beacon_flows, uniqExactIf(\`src_ip\`, ${isBeacon}) AS beacon_sources, ` +
      `avgOrNullIf(\`beacon_interval_value_ms\`, ${isBeacon}) AS beacon_interval_ms, ${stats} FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)}`,
  );
  const r = (await run<Record<string, number | null>>(engine, s, sql, p))[0]!;
  return {
    beacon_flows: Number(r.beacon_flows),
    beacon_sources: Number(r.beacon_sources),
    beacon_interval_ms: r.beacon_interval_ms === null ? null : Number(r.beacon_interval_ms),
    stats: Object.fromEntries(INTER_ARRIVAL_FIELDS.map((f) => [f, r[f] === null || r[f] === undefined ? null : Number(r[f])])),
  };
}

export interface TransferRow {
  flows: number;
  chunk_bytes_mean: number | null;
  chunk_cv: number | null;
  entropy_mean: number | null;
  duration_mean: number | null;
  up: number;
  down: number;
}

/**
 * What moves: per-flow bytes (up + down) mean and coefficient of variation, payload entropy per
 * packet (bits/byte, packet-weighted), mean duration, and the totals.
 */
export async function orgTransfer(engine: FlowEngine, s: ExploreScope, org: string): Promise<TransferRow> {
  const p = new ParamBag();
  const duration =
    '`stats_timing_duration_secs_sum` / if(ifNull(`stats_timing_duration_secs_count`, 0) > 0, `stats_timing_duration_secs_count`, 1)';
  const sql = named(
    'explore:org.transfer',
    `SELECT count() AS flows, avgOrNull(${UP} + ${DOWN}) AS chunk_bytes_mean, ` +
      `if(chunk_bytes_mean > 0, stddevPop(${UP} + ${DOWN}) / chunk_bytes_mean, NULL) AS chunk_cv, ` +
      `sumIf(\`stats_size_payload_entropy_sum\`, \`stats_size_payload_entropy_count\` > 0) / ` +
      `nullIf(sumIf(\`stats_size_payload_entropy_count\`, \`stats_size_payload_entropy_sum\` IS NOT NULL), 0) AS entropy_mean, ` +
      `avgOrNull(${duration}) AS duration_mean, ${int(`sum(${UP})`)} AS up, ${int(`sum(${DOWN})`)} AS down ` +
      `FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)}`,
  );
  const r = (await run<TransferRow>(engine, s, sql, p))[0]!;
  const num = (v: number | null) => (v === null || v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));
  return {
    flows: Number(r.flows),
    chunk_bytes_mean: num(r.chunk_bytes_mean),
    chunk_cv: num(r.chunk_cv),
    entropy_mean: num(r.entropy_mean),
    duration_mean: num(r.duration_mean),
    up: Number(r.up),
    down: Number(r.down),
  };
}

export interface SourceRow {
  ip: string;
  upload: number;
  download: number;
  flows: number;
  source_count: number;
}

/** Sources by bytes (then flows, then address), at most `size`, each row with the number of sources. */
export async function orgSources(engine: FlowEngine, s: ExploreScope, org: string, size: number): Promise<SourceRow[]> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.sources',
    `SELECT \`src_ip\` AS ip, ${int(`sum(${UP})`)} AS upload, ${int(`sum(${DOWN})`)} AS download, count() AS flows, count() OVER () AS source_count ` +
      `FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)} AND \`src_ip\` IS NOT NULL GROUP BY ip ` +
      `ORDER BY upload + download DESC, flows DESC, ip ASC LIMIT ${p.add(size, 'UInt32')}`,
  );
  return (await run<SourceRow>(engine, s, sql, p)).map((r) => ({ ...r, flows: Number(r.flows), source_count: Number(r.source_count) }));
}

export type AccessFacet = 'tls_versions' | 'ports' | 'protocols' | 'apps';

export interface AccessRow {
  facet: AccessFacet;
  name: string | number;
  flows: number;
  bytes: number;
}

/** Top terms of TLS version, destination port, transport and application, one pass (GROUPING SETS). */
export async function orgAccess(engine: FlowEngine, s: ExploreScope, org: string, perFacet: number): Promise<AccessRow[]> {
  const p = new ParamBag();
  const sql = named(
    'explore:org.access',
    `SELECT multiIf(grouping(tls, port, proto, app) = 7, 'tls_versions', grouping(tls, port, proto, app) = 11, 'ports', ` +
      `grouping(tls, port, proto, app) = 13, 'protocols', 'apps') AS facet, ` +
      `multiIf(facet = 'tls_versions', tls, facet = 'protocols', proto, facet = 'apps', app, NULL) AS text_name, port AS port_name, ` +
      `count() AS flows, ${int(`sum(${UP} + ${DOWN})`)} AS bytes FROM (` +
      `SELECT nullIf(\`tls_version\`, '') AS tls, \`dst_port\` AS port, nullIf(\`transport_proto\`, '') AS proto, nullIf(\`app_name\`, '') AS app, ` +
      `\`stats_volume_bytes_src_sum\`, \`stats_volume_bytes_dst_sum\`, \`metric_src_bytes\`, \`metric_dst_bytes\` ` +
      `FROM ${FLOWS_TABLE} WHERE ${orgWhere(s, org, p)}) ` +
      `GROUP BY GROUPING SETS ((tls), (port), (proto), (app)) ` +
      `HAVING (facet = 'ports' AND port_name IS NOT NULL) OR (facet != 'ports' AND text_name IS NOT NULL) ` +
      `ORDER BY facet, flows DESC, bytes DESC, text_name ASC, port_name ASC LIMIT ${p.add(perFacet, 'UInt32')} BY facet ` +
      `SETTINGS group_by_use_nulls = 1`,
  );
  const rows = await run<{ facet: AccessFacet; text_name: string | null; port_name: number | null; flows: number; bytes: number }>(engine, s, sql, p);
  return rows.map((r) => ({ facet: r.facet, name: r.facet === 'ports' ? Number(r.port_name) : r.text_name!, flows: Number(r.flows), bytes: Number(r.bytes) }));
}

export { egressOrgSql };
