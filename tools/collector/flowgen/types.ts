// The flow record as wire.md §5.4 defines it, limited to the fields this
// generator fills. Fields marked "extra" are not in §5.4 (which allows extras):
// they carry what §9 explore needs and a packet sensor with host logs knows
// (process, TLS version, DNS question).

export interface Moments {
  count: number; // int
  sum: number;
  sum_squares: number;
  sum_cubes: number;
}

export interface GeoEntry {
  continent_name?: string;
  country_iso_code?: string;
  country_name?: string;
  city_name?: string;
  time_zone?: string;
  location_network?: string;
  asn?: number; // int, never "AS15169"
  org?: string;
  as_network?: string;
  accuracy_radius?: number; // int
  location?: { lat: number; lon: number };
}

export interface ClassificationContext {
  organization?: string;
  industry?: string;
  fqdn?: string;
}

/**
 * extra: the process that owns the socket, from host logs on managed hosts, or from /proc when
 * the collector runs on the host (tools/collector/host/). Optional fields follow Elastic Common
 * Schema's `process.*` names.
 */
export interface ProcessInfo {
  name: string;
  pid: number; // int
  ppid?: number; // int
  /** Absolute path of the program file. */
  executable?: string;
  /** The socket's owner: `id` the uid, `name` from the host's passwd when it has one. */
  user?: { id: number; name?: string }; // id int
}

export interface DirectionFields {
  ip: string;
  port?: number; // int
  address_type: 'private' | 'public';
  geo: GeoEntry;
  ctx: ClassificationContext;
  process?: ProcessInfo; // extra
}

export interface SensorInfo {
  id: string;
  type: string;
  name: string;
  hostname: string;
  interface: string;
}

export interface PathEntry {
  sensor: SensorInfo;
  src_vlan?: number; // int
  dst_vlan?: number; // int
}

export interface SessionMetrics {
  connection_count: number; // int
  volume: {
    bytes: { src: Moments; dst: Moments; total: number };
    packets: { src: number; dst: number; total: number };
  };
  rate: {
    bps: { src: number; dst: number; total: number };
    pps: { src: number; dst: number; total: number };
  };
  rtt_secs: { net: Moments; app: Moments };
  quality: { retrans: { packets: number; bytes: number }; fragments: number };
  size: { packet: Moments; frame: Moments; payload_entropy: Moments };
  timing: {
    duration_secs: Moments;
    inter_arrival_secs: {
      mean_gap: number;
      regularity: number;
      consistency: number;
      burstiness: number;
      min_gap: number;
      max_gap: number;
    };
  };
}

export interface Meta {
  '@ingest_time': number; // int epoch ms
  customer_id: string;
  tags: string[];
  flow_types: string[];
  time_of_day: number; // int, UTC hour 0..23
  day_of_week: number; // int, ISO 1 = Monday .. 7 = Sunday (UTC)
  flipped: boolean;
}

export interface SuricataFields {
  flow_id: number; // int
  l7_app_map: string;
  event_types: string[];
  flow: { community_id: string; event_type: string; alerted: boolean };
  /** extra: the alert that made the flow worth enriching, as in Suricata's eve.json. */
  alert?: { signature: string; signature_id: number; category: string; severity: number };
}

export interface ThreatFields {
  indicator: string;
  type: string;
  trajectory: string;
  ip: string;
  mask: number; // int
  posture: string[];
  tags: string[];
  feeds: string[];
  countermeasures: string[];
}

export interface ScaleAnalysis {
  beacon_score: number;
  timing_regularity: number;
  timing_predictability: number;
  timing_uniformity: number;
  pattern_significance: number;
  is_beacon: boolean;
  sample_count: number; // int
  analysis_type: string;
}

export interface BeaconData {
  confidence: number;
  first_seen: string;
  last_seen: string;
  packet_level: ScaleAnalysis;
  session_level: ScaleAnalysis;
  primary_evidence: string;
  has_sessions: boolean;
  weighted_confidence: number;
  consensus_score: number;
  interval: { value_ms: number }; // int
  meta: { detection_engine: string; analysis_version: string };
}

/** IANA protocol keyword: flowgen makes TCP and UDP; the packet meter also ICMP, "IPv6-ICMP", … */
export type TransportName = 'TCP' | 'UDP' | (string & {});

export interface FlowRecord {
  doc_type: string;
  '@timestamp': number; // int epoch ms, flow start
  key: string;
  session_key: string;
  app_name: string;
  src: DirectionFields;
  dst: DirectionFields;
  ip: { version: number };
  transport: { proto: TransportName; proto_num: number };
  path: PathEntry[];
  meta: Meta;
  stats: SessionMetrics;
  tcp?: { flags: string[]; window_length?: Moments };
  icmp?: { type: number; type_map: string; code: number };
  // extras below, in Suricata's spelling ("TLS 1.3"); a packet meter fills what the payload showed
  tls?: { version?: string; sni?: string; alpn?: string[]; ja4?: string };
  dns?: { rrname: string; rrtype: string; rcode?: string; answers?: string[] };
  http?: { host?: string; method?: string; user_agent?: string; uri?: string };
  suricata?: SuricataFields;
  threat?: ThreatFields;
  beacon?: BeaconData;
}
