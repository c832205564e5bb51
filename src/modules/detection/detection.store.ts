import { FLOWS_TABLE, type FlowEngine, type FlowView, type OwnNetworkRange, ParamBag, type Params, ownFlowView, ownSegments } from '../../flowstore/index.js';
import { SRC_PROCESS_CONTEXT, SRC_PROCESS_HAS_PID, textField } from './flow-fields.js';

/** [fromMs, toMs): the flows a detection run looks at. */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

/** The tenant filter every statement starts with: one tenant, then the time range (the sorting key). */
const SCOPE = `customer_id = {customer:String}
  AND timestamp >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND timestamp < fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;
const scope = (customerId: string, window: TimeWindow) => ({ customer: customerId, from: Math.floor(window.fromMs), to: Math.ceil(window.toMs) });

const SRC_PROCESS = textField('src.process.name');
const DST_PROCESS = textField('dst.process.name');
const TLS_VERSION = textField('tls.version');
const TLS_SNI = textField('tls.sni');
const DNS_NAME = textField('dns.rrname');
const DNS_TYPE = textField('dns.rrtype');
const ALERT = textField('suricata.alert.signature');
/**
 * Two sensors of a tenant on one path (a packet capture and a router's IPFIX export of the same
 * link, docs/lab.md) report the same conversations twice, and counted twice they would double a
 * brute force's attempts and break a beacon's cadence (each check-in twice, gaps of ~0). So each
 * conversation — (source, destination, destination port, protocol) in the window — is read from
 * one sensor only, the one that saw most of it: first one whose flows carry observed processes
 * (host context), then one whose flows carry DNS question names or TLS server names (a packet
 * meter's; an export has neither), then the one that counted the most packets (a sensor that saw
 * one direction only, as a port a bridge floods sees replies, or that dropped packets, loses),
 * then the most records, then the greatest node id. Conversations one sensor alone reported are
 * untouched.
 */
const CONVERSATION = "ifNull(src_ip, ''), ifNull(dst_ip, ''), ifNull(dst_port, 0), ifNull(transport_proto, '')";
const ONE_SENSOR = `(${CONVERSATION}, node_id) NOT IN (
    SELECT conversation.1, conversation.2, conversation.3, conversation.4, arrayJoin(arrayFilter(n -> n != chosen, nodes))
    FROM (
      SELECT conversation, groupArray(node_id) AS nodes, argMax(node_id, (with_process, with_names, packets, records, node_id)) AS chosen
      FROM (
        SELECT tuple(${CONVERSATION}) AS conversation, node_id, max(${SRC_PROCESS_HAS_PID}) AS with_process,
          max(${DNS_NAME} IS NOT NULL OR ${TLS_SNI} IS NOT NULL) AS with_names,
          sum(ifNull(stats_volume_packets_src, 0) + ifNull(stats_volume_packets_dst, 0)) AS packets, count() AS records
        FROM ${FLOWS_TABLE} WHERE ${SCOPE}
        GROUP BY conversation, node_id)
      GROUP BY conversation
      HAVING length(nodes) > 1))`;
/** The tenant and window, each conversation from one sensor: what the detectors count over. */
const ONCE = `${SCOPE} AND ${ONE_SENSOR}`;
const UP = 'ifNull(`stats_volume_bytes_src_sum`, 0)';
const DOWN = 'ifNull(`stats_volume_bytes_dst_sum`, 0)';
/** A TCP attempt nobody completed: no packet came back, or a reset ended it. */
const FAILED = "(ifNull(`stats_volume_packets_dst`, 0) = 0 OR has(`tcp_flags`, 'RST'))";
/**
 * Hopping windows of {bucketSecs}, half a window apart: every row lands in two windows, phase 0
 * (aligned to the epoch: a partition of time, whose counts add up) and phase 1 (shifted by half a
 * window). A burst no longer than half a window is always whole in one of them, so an attack
 * cannot hide by straddling a window boundary; detectors add up phase-0 windows only.
 */
const HOPPING = `arrayJoin([0, 1]) AS phase,
        intDiv(toUnixTimestamp64Milli(timestamp) - phase * {bucketSecs:UInt32} * 500, {bucketSecs:UInt32} * 1000) * {bucketSecs:UInt32} * 1000 + phase * {bucketSecs:UInt32} * 500 AS bucket_ms`;

/**
 * The registered domain of the question name `rrname`, read from the labels at its end that a
 * hostname can hold. ClickHouse's domain functions answer '' for a whole name with any other byte
 * (the meter escapes them as \ddd), and that is what tunnels put left of their domain: iodine's
 * Base128 and raw encodings. Without this a real iodine tunnel had no domain and was skipped.
 */
const REGISTERED_DOMAIN = `cutToFirstSignificantSubdomain(arrayStringConcat(arrayReverse(if(
  arrayFirstIndex(l -> NOT match(l, '^[A-Za-z0-9_-]+$'), arrayReverse(splitByChar('.', rrname)) AS reversed_labels) AS unclean = 0,
  reversed_labels, arraySlice(reversed_labels, 1, unclean - 1))), '.'))`;

/**
 * Distinct values (at most `max`) in sorted order. groupUniqArray's own order depends on how the
 * rows met the engine's threads and parts, and an episode must come out the same on every run:
 * a run over data it has already seen changes nothing.
 */
const distinct = (max: number, expr: string, where?: string) =>
  where === undefined ? `arraySort(groupUniqArray(${max})(${expr}))` : `arraySort(groupUniqArrayIf(${max})(${expr}, ${where}))`;

/** The columns every candidate carries for the narrative: who, which collectors, which alerts. */
const context = (v: FlowView) => `${distinct(8, 'node_id')} AS node_ids, countIf(ifNull(suricata_flow_alerted, false)) AS alerts,
  ${distinct(4, ALERT)} AS alert_signatures, ${distinct(4, SRC_PROCESS)} AS processes,
  ${distinct(4, `(${SRC_PROCESS}, ${SRC_PROCESS_CONTEXT})`, `${SRC_PROCESS} IS NOT NULL AND ${SRC_PROCESS_HAS_PID}`)} AS observed_processes,
  anyIf(src_ctx_fqdn, ${v.srcInternal}) AS source_fqdn,
  toUnixTimestamp64Milli(min(timestamp)) AS first_ms, toUnixTimestamp64Milli(max(timestamp)) AS last_ms`;

/** The context columns every candidate row carries (`context` above). */
export interface CandidateContext {
  node_ids: string[];
  alerts: number;
  alert_signatures: string[];
  processes: string[];
  /** [name, the rest of src.process as JSON] of flows whose process carries a pid. */
  observed_processes: [string, string][];
  source_fqdn: string | null;
  first_ms: number;
  last_ms: number;
}

export interface BeaconRow extends CandidateContext {
  source: string;
  destination: string;
  sessions: number;
  median_gap_ms: number;
  gap_cv: number;
  up: number;
  down: number;
  dst_ips: string[];
  ports: number[];
  fqdns: string[];
  tls_versions: string[];
  sensor_beacon_flows: number;
  sensor_interval_ms: number | null;
  sensor_confidence: number | null;
}

export interface ExfilRow extends CandidateContext {
  source: string;
  destination: string;
  flows: number;
  up: number;
  down: number;
  entropy: number | null;
  dst_ips: string[];
  ports: number[];
  fqdns: string[];
  tls_versions: string[];
}

export interface ReachRow {
  org: string;
  sources: number;
  first_seen_ms: number;
}

/** A hopping window's row: `phase` 0 windows partition time, phase 1 ones overlap them. */
interface Windowed {
  phase: 0 | 1;
  bucket_ms: number;
}

export interface ScanRow extends CandidateContext, Windowed {
  source: string;
  targets: number;
  hosts: number;
  flows: number;
  failed: number;
  ports: number[];
  dst_ips: string[];
}

export interface BruteforceRow extends CandidateContext, Windowed {
  source: string;
  target: string;
  port: number;
  sessions: number;
  attempts: number;
  source_external: boolean;
  bytes: number;
  source_org: string | null;
  source_country: string | null;
  target_fqdn: string | null;
  service_processes: string[];
  app: string | null;
  threat_flows: number;
  threat_feeds: string[];
}

export interface DnsRow extends CandidateContext, Windowed {
  source: string;
  domain: string;
  queries: number;
  names: number;
  label_chars: number;
  label_count: number;
  resolvers: string[];
  rrtypes: string[];
  up: number;
  down: number;
}

export interface ActivityRow {
  at_ms: number;
  up: number;
  down: number;
  secs: number;
  dst_ip: string | null;
  dst_port: number | null;
}

export interface FollowOnRow {
  host: string;
  port: number;
  sessions: number;
  first_ms: number;
}

/**
 * The detectors' SQL over the flows table. Every statement is named, reads one tenant (first in
 * its WHERE, with the time range: the table's sorting key) and takes values only as typed
 * parameters. The statements compute statistics and apply loose pre-filters; the detectors apply
 * the documented thresholds in TypeScript (docs/detections.md).
 */
export class DetectionStore {
  constructor(
    private readonly engine: FlowEngine,
    /** The tenant's own networks (networks.service.ts), read per statement so a change applies to the next run. */
    private readonly ownNetworks: (customerIds: readonly string[]) => Promise<OwnNetworkRange[]>,
  ) {}

  /** What the statements read for the tenant: the flows table, or the flows joined with its own networks. */
  private async view(customerId: string): Promise<FlowView & { params: Params }> {
    const p = new ParamBag();
    return { ...ownFlowView(ownSegments(await this.ownNetworks([customerId])), SCOPE, p), params: p.values };
  }

  /** Which of `customerIds` have flows in the window (the tenants worth a scheduled run). */
  async tenantsWithFlows(customerIds: string[], window: TimeWindow): Promise<string[]> {
    if (customerIds.length === 0) return [];
    const rows = await this.engine.query<{ customer_id: string }>(
      `/* detection:tenants_with_flows */ SELECT customer_id FROM ${FLOWS_TABLE}
      WHERE customer_id IN {customers:Array(String)}
        AND timestamp >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND timestamp < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
      GROUP BY customer_id`,
      { customers: customerIds, from: Math.floor(window.fromMs), to: Math.ceil(window.toMs) },
    );
    return rows.map((r) => r.customer_id);
  }

  /** (internal source, external organization) pairs with many sessions at a regular cadence. */
  async beaconCandidates(
    customerId: string,
    window: TimeWindow,
    f: { minSessions: number; maxGapCv: number; minGapMs: number; maxGapMs: number; maxMissedShare: number; maxOddShare: number },
  ) {
    const v = await this.view(customerId);
    return this.engine.query<BeaconRow>(
      `/* detection:beacon.candidates */ SELECT * EXCEPT (times, gaps, beats, beat_gaps, beat_median, kept_gaps) FROM (
        SELECT src_ip AS source, ${v.dstOrg} AS destination, count() AS sessions,
          arraySort(groupArray(200000)(toUnixTimestamp64Milli(timestamp))) AS times,
          arrayPopFront(arrayDifference(times)) AS gaps,
          arrayReduce('quantileExact(0.5)', gaps) AS median_gap_ms,
          -- A check-in the sensor lost (or the implant skipped) leaves a gap of two or three beats:
          -- counted as that many beats when few gaps are so (docs/detections.md "Beaconing").
          arrayMap(g -> if(median_gap_ms > 0, round(g / median_gap_ms), 1), gaps) AS beats,
          arrayCount(k -> k >= 2, beats) AS missed_beats,
          if(missed_beats * {maxMissedShare:UInt32} <= length(gaps),
            arrayMap((g, k) -> if(k >= 2 AND k <= 3, g / k, toFloat64(g)), gaps, beats), arrayMap(g -> toFloat64(g), gaps)) AS beat_gaps,
          -- A check-in delayed (a slow lookup or server) or split (a stray packet) leaves an odd gap:
          -- the gaps farthest from the median, one in {maxOddShare}, are left out of the coefficient.
          arrayReduce('quantileExact(0.5)', beat_gaps) AS beat_median,
          arraySlice(arraySort(g -> abs(g - beat_median), beat_gaps), 1, length(beat_gaps) - intDiv(length(beat_gaps), {maxOddShare:UInt32})) AS kept_gaps,
          if(arrayAvg(kept_gaps) > 0, arrayReduce('stddevPop', kept_gaps) / arrayAvg(kept_gaps), 1e9) AS gap_cv,
          sum(${UP}) AS up, sum(${DOWN}) AS down,
          ${distinct(8, 'dst_ip')} AS dst_ips, ${distinct(8, 'dst_port')} AS ports,
          ${distinct(4, `coalesce(${TLS_SNI}, dst_ctx_fqdn)`)} AS fqdns, ${distinct(4, TLS_VERSION)} AS tls_versions,
          countIf(ifNull(beacon_session_level_is_beacon, false)) AS sensor_beacon_flows,
          max(beacon_interval_value_ms) AS sensor_interval_ms, max(beacon_confidence) AS sensor_confidence,
          ${context(v)}
        FROM ${v.from}
        WHERE ${ONCE} AND ${v.egress}
        GROUP BY source, destination
        HAVING sessions >= {minSessions:UInt32})
      WHERE gap_cv <= {maxGapCv:Float64} AND median_gap_ms >= {minGapMs:Float64} AND median_gap_ms <= {maxGapMs:Float64}
      ORDER BY source, destination`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }

  /** (internal source, external organization) pairs that uploaded much more than they downloaded. */
  async exfilCandidates(customerId: string, window: TimeWindow, f: { minUploadBytes: number; minUploadToDownload: number }) {
    const v = await this.view(customerId);
    return this.engine.query<ExfilRow>(
      `/* detection:exfil.candidates */ SELECT src_ip AS source, ${v.dstOrg} AS destination, count() AS flows,
        sum(${UP}) AS up, sum(${DOWN}) AS down,
        avgIf(stats_size_payload_entropy_sum / stats_size_payload_entropy_count, ifNull(stats_size_payload_entropy_count, 0) > 0) AS entropy,
        ${distinct(8, 'dst_ip')} AS dst_ips, ${distinct(8, 'dst_port')} AS ports,
        ${distinct(4, `coalesce(${TLS_SNI}, dst_ctx_fqdn)`)} AS fqdns, ${distinct(4, TLS_VERSION)} AS tls_versions,
        ${context(v)}
      FROM ${v.from}
      WHERE ${ONCE} AND ${v.egress}
      GROUP BY source, destination
      HAVING up >= {minUploadBytes:Float64} AND up >= {minUploadToDownload:Float64} * greatest(down, 1)
      ORDER BY source, destination`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }

  /** How many internal hosts reached each organization in the baseline, and since when. */
  async orgReach(customerId: string, orgs: string[], baseline: TimeWindow): Promise<Map<string, ReachRow>> {
    if (orgs.length === 0) return new Map();
    const v = await this.view(customerId);
    const rows = await this.engine.query<ReachRow>(
      `/* detection:org_reach */ SELECT ${v.dstOrg} AS org, uniqExact(src_ip) AS sources,
        toUnixTimestamp64Milli(min(timestamp)) AS first_seen_ms
      FROM ${v.from}
      WHERE ${SCOPE} AND ${v.egress} AND org IN {orgs:Array(String)}
      GROUP BY org`,
      { ...scope(customerId, baseline), orgs, ...v.params },
    );
    return new Map(rows.map((r) => [r.org, r]));
  }

  /** Per internal source and tumbling bucket: internal TCP (address, port) pairs tried, and how many failed. */
  async scanBuckets(customerId: string, window: TimeWindow, f: { bucketSecs: number; minTargets: number }) {
    const v = await this.view(customerId);
    return this.engine.query<ScanRow>(
      `/* detection:scan.buckets */ SELECT src_ip AS source,
        ${HOPPING},
        uniqExact(dst_ip, dst_port) AS targets, uniqExact(dst_ip) AS hosts, count() AS flows, countIf(${FAILED}) AS failed,
        ${distinct(64, 'dst_port')} AS ports, ${distinct(4096, 'dst_ip')} AS dst_ips,
        ${context(v)}
      FROM ${v.from}
      WHERE ${ONCE} AND ${v.srcInternal} AND ${v.dstInternal} AND transport_proto = 'TCP'
      GROUP BY source, phase, bucket_ms
      HAVING targets >= {minTargets:UInt32}
      ORDER BY source, bucket_ms, phase`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }

  /** Sessions from `source` to admin services on `hosts` that were answered and carried data. */
  followOnSessions(customerId: string, window: TimeWindow, f: { source: string; hosts: string[]; ports: number[]; minBytes: number }) {
    return this.engine.query<FollowOnRow>(
      `/* detection:scan.follow_on */ SELECT dst_ip AS host, dst_port AS port, count() AS sessions,
        toUnixTimestamp64Milli(min(timestamp)) AS first_ms
      FROM ${FLOWS_TABLE}
      WHERE ${ONCE} AND src_ip = {source:String} AND dst_ip IN {hosts:Array(String)} AND dst_port IN {ports:Array(UInt16)}
        AND NOT ${FAILED} AND ifNull(stats_volume_bytes_total, 0) >= {minBytes:Float64}
      GROUP BY host, port
      ORDER BY first_ms
      LIMIT 50`,
      { ...scope(customerId, window), ...f },
    );
  }

  /** Per (source, internal address, login port) and tumbling bucket: short, small sessions. */
  async bruteforceBuckets(
    customerId: string,
    window: TimeWindow,
    f: { bucketSecs: number; ports: number[]; maxAttemptSecs: number; maxAttemptBytes: number; minAttempts: number },
  ) {
    const v = await this.view(customerId);
    return this.engine.query<BruteforceRow>(
      `/* detection:bruteforce.buckets */ SELECT src_ip AS source, dst_ip AS target, dst_port AS port,
        ${HOPPING},
        count() AS sessions,
        countIf(ifNull(stats_timing_duration_secs_sum, 0) <= {maxAttemptSecs:Float64} AND ifNull(stats_volume_bytes_total, 0) <= {maxAttemptBytes:Float64}) AS attempts,
        toBool(min(${v.srcInternal}) = 0) AS source_external, sum(ifNull(stats_volume_bytes_total, 0)) AS bytes, any(src_geo_org) AS source_org, any(src_geo_country_iso_code) AS source_country,
        any(dst_ctx_fqdn) AS target_fqdn, ${distinct(4, DST_PROCESS)} AS service_processes, any(app_name) AS app,
        countIf(threat_indicator IS NOT NULL) AS threat_flows, arraySort(groupUniqArrayArray(8)(threat_feeds)) AS threat_feeds,
        ${context(v)}
      FROM ${v.from}
      WHERE ${ONCE} AND ${v.dstInternal} AND transport_proto = 'TCP' AND dst_port IN {ports:Array(UInt16)}
      GROUP BY source, target, port, phase, bucket_ms
      HAVING attempts >= {minAttempts:UInt32}
      ORDER BY source, target, port, bucket_ms, phase`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }

  /** Per (internal source, registered domain) and tumbling bucket: DNS questions and their label lengths. */
  async dnsBuckets(customerId: string, window: TimeWindow, f: { bucketSecs: number; minQueries: number }) {
    const v = await this.view(customerId);
    return this.engine.query<DnsRow>(
      `/* detection:dns_tunnel.buckets */ WITH ${DNS_NAME} AS rrname, ${REGISTERED_DOMAIN} AS reg,
        if(length(rrname) > length(reg) + 1, substring(rrname, 1, length(rrname) - length(reg) - 1), '') AS sub
      SELECT src_ip AS source, reg AS domain,
        ${HOPPING},
        count() AS queries, uniqExact(rrname) AS names,
        sum(if(sub = '', 0, length(sub) - length(splitByChar('.', sub)) + 1)) AS label_chars,
        sum(if(sub = '', 0, length(splitByChar('.', sub)))) AS label_count,
        ${distinct(4, 'dst_ip')} AS resolvers, ${distinct(8, DNS_TYPE)} AS rrtypes,
        sum(${UP}) AS up, sum(${DOWN}) AS down,
        ${context(v)}
      FROM ${v.from}
      WHERE ${ONCE} AND ${v.srcInternal} AND dst_port = 53 AND rrname IS NOT NULL AND reg != ''
      GROUP BY source, domain, phase, bucket_ms
      HAVING queries >= {minQueries:UInt32}
      ORDER BY source, domain, bucket_ms, phase`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }

  /** The flows of one (source, organization) pair, oldest first: the timeline of a beacon or a transfer. */
  async pairActivity(customerId: string, window: TimeWindow, f: { source: string; org: string; limit: number }) {
    const v = await this.view(customerId);
    return this.engine.query<ActivityRow>(
      `/* detection:pair_activity */ SELECT toUnixTimestamp64Milli(timestamp) AS at_ms, ${UP} AS up, ${DOWN} AS down,
        ifNull(stats_timing_duration_secs_sum, 0) AS secs, dst_ip, dst_port
      FROM ${v.from}
      WHERE ${ONCE} AND src_ip = {source:String} AND ${v.egress} AND ${v.dstOrg} = {org:String}
      ORDER BY timestamp
      LIMIT {limit:UInt32}`,
      { ...scope(customerId, window), ...f, ...v.params },
    );
  }
}
