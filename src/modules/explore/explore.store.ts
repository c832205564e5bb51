/**
 * The explore views (wire.md §9) as ClickHouse statements over the flows table. Every statement
 * starts with the caller's tenants, egress flows and time window, attributes organizations by the
 * rule in flowstore/egress.ts, and reads one of the hourly rollups (flowstore/egress-rollups.ts:
 * the whole hours from a projection, the partial hours at either end from the rows). Values
 * travel only as typed parameters; per-org statements take the organization as `{pN:String}`.
 */
import {
  DATASET_IP_SQL,
  datasetOrgSql,
  EGRESS_ROLLUPS,
  egressRows,
  type EgressWindow,
  type FlowEngine,
  INTER_ARRIVAL_FIELDS,
  named,
  ownJoinSql,
  ownKindSql,
  ownNameSql,
  type OwnSegment,
  ParamBag,
  type Rollup,
} from '../../flowstore/index.js';

/** The tenants, window and narrowing of one explore request; built by the service only. */
export interface ExploreScope extends EgressWindow {
  /** Whether the IP → organization dictionary may be used. */
  withDataset: boolean;
  /** The tenants' own networks (docs/networks.md), consulted before the dataset; usually none. */
  own: readonly OwnSegment[];
  /**
   * Per-organization views: the destination addresses of flows without a collector-supplied
   * organization that own networks or the dataset give this organization (orgAddresses), per
   * tenant when own networks are in play (the same address may be named differently by two
   * tenants), else for every tenant (`customerId` absent); usually few.
   */
  orgAddresses?: readonly OrgAddresses[];
  timeoutMs?: number;
}

const { sources: SOURCES, destinations: DESTINATIONS, access: ACCESS } = EGRESS_ROLLUPS;
const int = (sql: string) => `toUInt64(round(${sql}))`;

/** Most unattributed destination addresses one organization can have in a view. */
export const MAX_ORG_ADDRESSES = 100_000;

/**
 * Runs a statement that reads `rollup`. Naming it spares ClickHouse weighing every projection of
 * every part (tens of milliseconds over a month of parts), and the set limit keeps an
 * organization's address list (orgWhere) from ruling the rollups out; ClickHouse still reads the
 * rows where they cost less.
 */
function run<T>(engine: FlowEngine, s: ExploreScope, rollup: Rollup, sql: string, p: ParamBag): Promise<T[]> {
  return engine.query<T>(sql, p.values, {
    ...(s.timeoutMs ? { timeoutMs: s.timeoutMs } : {}),
    settings: { preferred_optimize_projection_name: rollup.name, query_plan_max_set_size_for_projection_match: MAX_ORG_ADDRESSES },
  });
}

/** Addresses an organization has among flows without a collector organization: of one tenant, or of every tenant. */
export interface OrgAddresses {
  customerId?: string;
  addrs: string[];
}

/**
 * Flows of one organization, on rollup keys only: those the collector named it, and those whose
 * address own networks or the dataset name it, from the lists `orgAddresses` found (the branch
 * is left out when no address qualifies; its `collector_org IS NULL` lets the rollups' order
 * narrow the read).
 */
function orgWhere(s: ExploreScope, org: string, p: ParamBag): string {
  const byCollector = `\`collector_org\` = ${p.add(org, 'String')}`;
  if (!s.orgAddresses?.length) return byCollector;
  const byAddress = s.orgAddresses.map(({ customerId, addrs }) => {
    const inList = `${DATASET_IP_SQL} IN (SELECT arrayJoin(${p.add(addrs, 'Array(IPv6)')}))`;
    return customerId === undefined ? inList : `(\`customer_id\` = ${p.add(customerId, 'String')} AND ${inList})`;
  });
  return `(${byCollector} OR (\`collector_org\` IS NULL AND (${byAddress.join(' OR ')})))`;
}

/** Column aliases of the own-network join (flowstore/own-networks.ts). */
const OWN = 'own';

/**
 * Destination addresses of flows without a collector organization that `org` names: the tenant's
 * external own network first, else the dataset; addresses in an internal own network are no
 * organization's. Over the whole hours covering the window: a superset is enough, since the views
 * filter the window themselves, and the rollup alone answers it.
 */
export async function orgAddresses(engine: FlowEngine, s: ExploreScope, org: string): Promise<OrgAddresses[]> {
  if (!s.withDataset && !s.own.length) return [];
  const p = new ParamBag();
  const keys = s.own.length ? (['customer_id', 'dataset_ip'] as const) : (['dataset_ip'] as const);
  const rows = egressRows(DESTINATIONS, s, p, { keys, values: [], where: '`collector_org` IS NULL', covering: true });
  const name = p.add(org, 'String');
  if (!s.own.length) {
    const sql = named(
      'explore:org.dataset_addresses',
      `SELECT toString(dataset_ip) AS addr FROM ${rows} WHERE ${datasetOrgSql('dataset_ip')} = ${name} LIMIT ${MAX_ORG_ADDRESSES}`,
    );
    return [{ addrs: (await run<{ addr: string }>(engine, s, DESTINATIONS, sql, p)).map((r) => r.addr) }];
  }
  const kind = ownKindSql(OWN, 'f.dataset_ip');
  const byDataset = s.withDataset ? ` OR (${kind} = 0 AND ${datasetOrgSql('f.dataset_ip')} = ${name})` : '';
  const sql = named(
    'explore:org.own_addresses',
    `SELECT f.customer_id AS customer_id, toString(f.dataset_ip) AS addr FROM ${rows} AS f${ownJoinSql(s.own, p, OWN, 'f.customer_id', 'f.dataset_ip')} ` +
      `WHERE (${kind} = 2 AND ${ownNameSql(OWN, 'f.dataset_ip')} = ${name})${byDataset} LIMIT ${MAX_ORG_ADDRESSES}`,
  );
  const found = await run<{ customer_id: string; addr: string }>(engine, s, DESTINATIONS, sql, p);
  const byTenant = new Map<string, string[]>();
  for (const r of found) byTenant.set(r.customer_id, [...(byTenant.get(r.customer_id) ?? []), r.addr]);
  return [...byTenant].map(([customerId, addrs]) => ({ customerId, addrs }));
}

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
 * and of egress flows (attributed or not) on every row. Sums per (collector org, unattributed
 * address), then own networks and the dictionary on those few rows, then per organization.
 * Addresses in a tenant's internal own network are not egress: their flows are left out.
 */
export async function listOrganizations(engine: FlowEngine, s: ExploreScope, size: number): Promise<OrgListRow[]> {
  const p = new ParamBag();
  const own = s.own.length > 0;
  const perTenant = own ? 'customer_id, ' : '';
  const rows = egressRows(SOURCES, s, p, {
    keys: [...(own ? (['customer_id'] as const) : []), 'collector_org', 'dataset_ip', 'src_ip'],
    values: ['up', 'down', 'n'],
  });
  let sums = `SELECT ${perTenant}collector_org, dataset_ip, sum(up) AS up, sum(down) AS down, sum(n) AS n, uniqExactState(src_ip) AS srcs FROM ${rows} GROUP BY ${perTenant}collector_org, dataset_ip`;
  if (own) {
    sums =
      `SELECT f.collector_org AS collector_org, f.dataset_ip AS dataset_ip, up, down, n, srcs, ${ownNameSql(OWN, 'f.dataset_ip')} AS own_org ` +
      `FROM (${sums}) AS f${ownJoinSql(s.own, p, OWN, 'f.customer_id', 'f.dataset_ip')} WHERE ${ownKindSql(OWN, 'f.dataset_ip')} != 1`;
  }
  const lookup = `coalesce(${['collector_org', ...(own ? ['own_org'] : []), ...(s.withDataset ? [datasetOrgSql('dataset_ip')] : [])].join(', ')})`;
  const sql = named(
    'explore:organizations',
    `SELECT name, ${int('up')} AS upload, ${int('down')} AS download, n AS flows, sources, ` +
      `countIf(name IS NOT NULL) OVER () AS total_orgs, sum(n) OVER () AS total_flows FROM (` +
      `SELECT ${lookup} AS name, sum(up) AS up, sum(down) AS down, sum(n) AS n, uniqExactMerge(srcs) AS sources FROM (${sums}) ` +
      `GROUP BY name) ORDER BY isNull(name), up + down DESC, name ASC LIMIT ${p.add(size, 'UInt32')}`,
  );
  return (await run<OrgListRow>(engine, s, SOURCES, sql, p)).map((r) => ({
    ...r,
    flows: Number(r.flows),
    sources: Number(r.sources),
    total_orgs: Number(r.total_orgs),
    total_flows: Number(r.total_flows),
  }));
}

export interface Destinations {
  endpoints: number;
  industry: string | null;
  geo: string | null;
}

/** The most frequent non-empty value of a rollup key, counting `n` per row (ties: the first by name); '' or NULL when none. */
const mostFrequent = (key: string) => {
  const counts = `sumMapIf([toString(${key})], [n], ifNull(${key}, '') != '')`;
  return `arraySort((k, c) -> (-c, k), ${counts}.1, ${counts}.2)[1]`;
};

/** Distinct destination addresses of the org's flows, with their most frequent industry and country. */
export async function orgDestinations(engine: FlowEngine, s: ExploreScope, org: string): Promise<Destinations> {
  const p = new ParamBag();
  const rows = egressRows(DESTINATIONS, s, p, { keys: ['dst_ip_addr', 'industry', 'country'], values: ['n'], where: orgWhere(s, org, p) });
  const sql = named(
    'explore:org.destinations',
    `SELECT uniqExact(dst_ip_addr) AS endpoints, ${mostFrequent('industry')} AS industry, ${mostFrequent('country')} AS geo FROM ${rows}`,
  );
  const r = (await run<Destinations>(engine, s, DESTINATIONS, sql, p))[0]!;
  return { endpoints: Number(r.endpoints), industry: r.industry || null, geo: r.geo || null };
}

export interface Volume {
  upload: number;
  download: number;
  flows: number;
}

export interface Activity {
  total: Volume & { sources: number };
  /** By bytes (then flows, then address), at most `size`. */
  sources: (Volume & { ip: string })[];
  /** Sources in all. */
  source_count: number;
  /** By flows (then name), at most `size`, each with its distinct sources. */
  processes: { name: string; flows: number; sources: number }[];
}

/** Who reaches the org: totals, sources and source processes, one pass (GROUPING SETS). */
export async function orgActivity(engine: FlowEngine, s: ExploreScope, org: string, size: number): Promise<Activity> {
  const p = new ParamBag();
  const rows = egressRows(SOURCES, s, p, { keys: ['src_ip', 'process'], values: ['up', 'down', 'n'], where: orgWhere(s, org, p) });
  const sql = named(
    'explore:org.activity',
    `SELECT multiIf(grouping(src_ip, process) = 3, 'total', grouping(src_ip, process) = 1, 'source', 'process') AS kind, src_ip, process, ` +
      `${int('sum(up)')} AS upload, ${int('sum(down)')} AS download, sum(n) AS flows, uniqExact(src_ip) AS sources, countIf(kind = 'source') OVER () AS source_count ` +
      `FROM ${rows} GROUP BY GROUPING SETS ((), (src_ip), (process)) ` +
      `HAVING kind = 'total' OR (kind = 'source' AND src_ip IS NOT NULL) OR (kind = 'process' AND nullIf(process, '') IS NOT NULL) ` +
      `ORDER BY kind, if(kind = 'source', upload + download, 0) DESC, flows DESC, src_ip ASC, process ASC LIMIT ${p.add(size, 'UInt32')} BY kind ` +
      `SETTINGS group_by_use_nulls = 1`,
  );
  const found = await run<{
    kind: string;
    src_ip: string;
    process: string;
    upload: number;
    download: number;
    flows: number;
    sources: number;
    source_count: number;
  }>(engine, s, SOURCES, sql, p);
  const volume = (r: (typeof found)[number]) => ({ upload: Number(r.upload), download: Number(r.download), flows: Number(r.flows) });
  const total = found.find((r) => r.kind === 'total');
  return {
    total: total ? { ...volume(total), sources: Number(total.sources) } : { upload: 0, download: 0, flows: 0, sources: 0 },
    sources: found.filter((r) => r.kind === 'source').map((r) => ({ ip: r.src_ip, ...volume(r) })),
    source_count: Number(found[0]?.source_count ?? 0),
    processes: found.filter((r) => r.kind === 'process').map((r) => ({ name: r.process, flows: Number(r.flows), sources: Number(r.sources) })),
  };
}

/** Flows per (ISO weekday 1–7, UTC hour 0–23). */
export async function orgTemporal(engine: FlowEngine, s: ExploreScope, org: string): Promise<{ day: number; hour: number; flows: number }[]> {
  const p = new ParamBag();
  const rows = egressRows(DESTINATIONS, s, p, { keys: ['hour'], values: ['n'], where: orgWhere(s, org, p) });
  const sql = named(
    'explore:org.temporal',
    `SELECT toDayOfWeek(hour) AS day, toHour(hour) AS hour_of_day, sum(n) AS flows FROM ${rows} GROUP BY day, hour_of_day ORDER BY day, hour_of_day`,
  );
  return (await run<{ day: number; hour_of_day: number; flows: number }>(engine, s, DESTINATIONS, sql, p)).map((r) => ({
    day: Number(r.day),
    hour: Number(r.hour_of_day),
    flows: Number(r.flows),
  }));
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

export interface CadenceFlowRow {
  beacon_flows: number;
  beacon_sources: number;
  beacon_interval_ms: number | null;
  stats: Record<string, number | null>;
}

/**
 * The org's rhythm, one pass over its sources. Session gaps: per source, flow starts in time
 * order; a start less than SESSION_MERGE_MS after the previous one continues that session; the
 * gaps are the times between consecutive session starts (so at least 1 s). Counted per distinct
 * gap (ms), they give their exact quantiles (the value at position ⌊q·n⌋ in order, as
 * quantilesExact has it) and the log-scale histogram. With them, the collector's beacon verdicts
 * and averaged inter-arrival statistics.
 */
export async function orgCadence(engine: FlowEngine, s: ExploreScope, org: string): Promise<{ gaps: GapRow; flows: CadenceFlowRow }> {
  const p = new ParamBag();
  const rows = egressRows(SOURCES, s, p, { keys: ['src_ip'], values: ['times', 'beacon', 'inter_sum', 'inter_n'], where: orgWhere(s, org, p) });
  const perSource =
    `SELECT src_ip, arraySort(groupArrayArray(times)) AS ts, ` +
    `arrayPopFront(arrayDifference(arrayFilter((t, d, i) -> i = 1 OR d >= ${SESSION_MERGE_MS}, ts, arrayDifference(ts), arrayEnumerate(ts)))) AS gaps, ` +
    `sumForEach(beacon) AS beacon, sumForEach(inter_sum) AS inter_sum, sumForEach(inter_n) AS inter_n FROM ${rows} GROUP BY src_ip`;
  // One row per distinct gap; a leading gap 0 (never a real one) gives every source a row carrying its sums.
  const perGap =
    `SELECT gap, count() AS n, sumIf(beacon[1], gap = 0) AS beacon_flows, uniqExactIf(src_ip, gap = 0 AND beacon[1] > 0) AS beacon_sources, ` +
    `sumIf(beacon[2], gap = 0) AS beacon_ms, sumIf(beacon[3], gap = 0) AS beacon_ms_n, sumForEachIf(inter_sum, gap = 0) AS inter_sum, sumForEachIf(inter_n, gap = 0) AS inter_n ` +
    `FROM (${perSource}) ARRAY JOIN arrayPushFront(gaps, 0) AS gap GROUP BY gap`;
  // (greatest: the If below skips gap 0, but its arguments are computed for it too.)
  const bin = `toInt32(floor(log(greatest(gap, 1) / 1000) / log(${GAP_BIN_RATIO})))`;
  const sql = named(
    'explore:org.cadence',
    `SELECT arrayCumSum(arrayMap(x -> x.2, sorted)) AS below, below[-1] AS gap_count, ` +
      `arrayMap(q -> sorted[arrayFirstIndex(x -> x > toUInt64(q * gap_count), below)].1 / 1000, [${CDF_QUANTILES.join(', ')}]) AS quantiles, ` +
      `hist, hist_ms, beacon_flows, beacon_sources, beacon_interval_ms, stats FROM (` +
      `SELECT arraySort(groupArrayIf((gap, n), gap > 0)) AS sorted, sumMapIf([${bin}], [n], gap > 0) AS hist, sumMapIf([${bin}], [toUInt64(gap) * n], gap > 0) AS hist_ms, ` +
      `sum(beacon_flows) AS beacon_flows, sum(beacon_sources) AS beacon_sources, sum(beacon_ms) / nullIf(sum(beacon_ms_n), 0) AS beacon_interval_ms, ` +
      `arrayMap((total, count) -> total / nullIf(count, 0), sumForEach(inter_sum), sumForEach(inter_n)) AS stats FROM (${perGap}))`,
  );
  type Row = {
    gap_count: number;
    quantiles: number[];
    hist: [number[], number[]];
    hist_ms: [number[], number[]];
    beacon_flows: number;
    beacon_sources: number;
    beacon_interval_ms: number | null;
    stats: (number | null)[];
  };
  const r = (await run<Row>(engine, s, SOURCES, sql, p))[0]!;
  const count = Number(r.gap_count);
  return {
    gaps:
      count === 0
        ? { gaps: 0, quantiles: [], bins: [], counts: [], sums: [] }
        : {
            gaps: count,
            quantiles: r.quantiles.map(Number),
            bins: r.hist[0].map(Number),
            counts: r.hist[1].map(Number),
            sums: r.hist_ms[1].map((ms) => Number(ms) / 1000),
          },
    flows: {
      beacon_flows: Number(r.beacon_flows),
      beacon_sources: Number(r.beacon_sources),
      beacon_interval_ms: r.beacon_interval_ms === null ? null : Number(r.beacon_interval_ms),
      stats: Object.fromEntries(INTER_ARRIVAL_FIELDS.map((f, i) => [f, r.stats[i] === null || r.stats[i] === undefined ? null : Number(r.stats[i])])),
    },
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
 * What moves: per-flow bytes (up + down) mean and coefficient of variation (population σ from
 * the sums, as ClickHouse's stddevPop computes it), payload entropy per packet (bits/byte,
 * packet-weighted), mean duration, and the totals.
 */
export async function orgTransfer(engine: FlowEngine, s: ExploreScope, org: string): Promise<TransferRow> {
  const p = new ParamBag();
  const rows = egressRows(SOURCES, s, p, {
    keys: [],
    values: ['n', 'up', 'down', 'bytes_sq', 'entropy_sum', 'entropy_n', 'duration_sum', 'duration_n'],
    where: orgWhere(s, org, p),
  });
  const sql = named(
    'explore:org.transfer',
    `SELECT sum(n) AS flows, (sum(up) + sum(down)) / nullIf(flows, 0) AS chunk_bytes_mean, ` +
      `if(chunk_bytes_mean > 0, sqrt(greatest((sum(bytes_sq) - (sum(up) + sum(down)) * chunk_bytes_mean) / flows, 0)) / chunk_bytes_mean, NULL) AS chunk_cv, ` +
      `sum(entropy_sum) / nullIf(sum(entropy_n), 0) AS entropy_mean, sum(duration_sum) / nullIf(sum(duration_n), 0) AS duration_mean, ` +
      `${int('sum(up)')} AS upload, ${int('sum(down)')} AS download FROM ${rows}`,
  );
  const r = (await run<Omit<TransferRow, 'up' | 'down'> & { upload: number; download: number }>(engine, s, SOURCES, sql, p))[0]!;
  const num = (v: number | null) => (v === null || v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));
  return {
    flows: Number(r.flows),
    chunk_bytes_mean: num(r.chunk_bytes_mean),
    chunk_cv: num(r.chunk_cv),
    entropy_mean: num(r.entropy_mean),
    duration_mean: num(r.duration_mean),
    up: Number(r.upload),
    down: Number(r.download),
  };
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
  const rows = egressRows(ACCESS, s, p, { keys: ['tls', 'port', 'proto', 'app'], values: ['n', 'bytes'], where: orgWhere(s, org, p) });
  const sql = named(
    'explore:org.access',
    `SELECT multiIf(grouping(tls, port, proto, app) = 7, 'tls_versions', grouping(tls, port, proto, app) = 11, 'ports', ` +
      `grouping(tls, port, proto, app) = 13, 'protocols', 'apps') AS facet, ` +
      `multiIf(facet = 'tls_versions', tls, facet = 'protocols', proto, facet = 'apps', app, NULL) AS text_name, port AS port_name, ` +
      `sum(n) AS flows, ${int('sum(bytes)')} AS facet_bytes FROM ${rows} ` +
      `GROUP BY GROUPING SETS ((tls), (port), (proto), (app)) ` +
      `HAVING (facet = 'ports' AND port_name IS NOT NULL) OR (facet != 'ports' AND text_name IS NOT NULL) ` +
      `ORDER BY facet, flows DESC, facet_bytes DESC, text_name ASC, port_name ASC LIMIT ${p.add(perFacet, 'UInt32')} BY facet ` +
      `SETTINGS group_by_use_nulls = 1`,
  );
  const found = await run<{ facet: AccessFacet; text_name: string | null; port_name: number | null; flows: number; facet_bytes: number }>(
    engine,
    s,
    ACCESS,
    sql,
    p,
  );
  return found.map((r) => ({
    facet: r.facet,
    name: r.facet === 'ports' ? Number(r.port_name) : r.text_name!,
    flows: Number(r.flows),
    bytes: Number(r.facet_bytes),
  }));
}
