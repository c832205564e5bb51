import { describe, expect, it } from 'vitest';
import { COLUMNS, FIELD_ALIASES, columnForPath, filterableFields, sortableFields } from './columns.js';
import { createFlowsTableSql } from './ddl.js';
import { FlowIngestError } from './errors.js';
import { FLOW_ROW_COLUMNS, flowToRow, recordId, type FlowRow } from './ingest-rows.js';
import { projectionFor } from './projection.js';

const moments = (p: string) => ['count', 'sum', 'sum_squares', 'sum_cubes'].map((k) => `${p}.${k}`);
const triple = (p: string) => ['src', 'dst', 'total'].map((k) => `${p}.${k}`);
const scale = (p: string) =>
  ['beacon_score', 'timing_regularity', 'timing_predictability', 'timing_uniformity', 'pattern_significance', 'is_beacon', 'sample_count', 'analysis_type'].map(
    (k) => `${p}.${k}`,
  );
const side = (s: string) => [
  ...['ip', 'port', 'address_type'].map((k) => `${s}.${k}`),
  ...[
    'continent_name',
    'country_iso_code',
    'country_name',
    'city_name',
    'time_zone',
    'location_network',
    'asn',
    'org',
    'as_network',
    'accuracy_radius',
    'location.lat',
    'location.lon',
  ].map((k) => `${s}.geo.${k}`),
  ...['organization', 'industry', 'fqdn', 'id', 'method', 'vector'].map((k) => `${s}.ctx.${k}`),
];

/** Every leaf of the flow record in wire.md 5.4. */
const WIRE_PATHS = [
  'doc_type',
  '@timestamp',
  'key',
  'session_key',
  'app_name',
  ...side('src'),
  ...side('dst'),
  'ip.version',
  'transport.proto',
  'transport.proto_num',
  'path',
  ...['indicator', 'type', 'trajectory', 'ip', 'mask', 'posture', 'tags', 'feeds', 'countermeasures'].map((k) => `threat.${k}`),
  ...[
    'confidence',
    'first_seen',
    'last_seen',
    'primary_evidence',
    'has_sessions',
    'weighted_confidence',
    'consensus_score',
    'interval.value_ms',
    'meta.detection_engine',
    'meta.analysis_version',
  ].map((k) => `beacon.${k}`),
  ...scale('beacon.packet_level'),
  ...scale('beacon.session_level'),
  ...['@ingest_time', 'customer_id', 'tags', 'flow_types', 'time_of_day', 'day_of_week', 'flipped'].map((k) => `meta.${k}`),
  'icmp.type',
  'icmp.type_map',
  'icmp.code',
  'tcp.flags',
  ...moments('tcp.window_length'),
  ...['event', 'event_map', 'xdst_ip', 'xdst_port', 'xsrc_ip', 'xsrc_port'].map((k) => `nat.${k}`),
  ...[
    'top_label_ip',
    'top_label_type',
    'top_label_prefix_len',
    'count',
    '1_label',
    '2_label',
    '3_label',
    '4_label',
    '5_label',
    '6_label',
    'last_ttl',
    'last_label',
  ].map((k) => `mpls.${k}`),
  ...['src_ip', 'src_port', 'dst_ip', 'dst_port', 'proto', 'proto_map', 'ipv6_src_ip', 'ipv6_dst_ip'].map((k) => `encap.${k}`),
  ...['flow_id', 'l7_app_map', 'event_types', 'flow.community_id', 'flow.event_type', 'flow.alerted'].map((k) => `suricata.${k}`),
  'stats.connection_count',
  ...moments('stats.volume.bytes.src'),
  ...moments('stats.volume.bytes.dst'),
  'stats.volume.bytes.total',
  ...triple('stats.volume.packets'),
  ...triple('stats.rate.bps'),
  ...triple('stats.rate.pps'),
  ...moments('stats.rtt_secs.net'),
  ...moments('stats.rtt_secs.app'),
  'stats.quality.retrans.packets',
  'stats.quality.retrans.bytes',
  'stats.quality.fragments',
  ...moments('stats.size.packet'),
  ...moments('stats.size.frame'),
  ...moments('stats.size.payload_entropy'),
  ...moments('stats.timing.duration_secs'),
  ...['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap'].map((k) => `stats.timing.inter_arrival_secs.${k}`),
  'metric.src_bytes',
  'metric.dst_bytes',
  'metric.total_bytes',
];

/** Extras collectors send (docs/flowgen.md) that have their own columns for explore and PQL. */
const PROMOTED_PATHS = ['src.process.name', 'dst.process.name', 'tls.version', 'tls.sni', 'dns.rrname'];

describe('column registry', () => {
  it('covers every leaf of the wire flow record plus the promoted extras, and nothing else as a record leaf', () => {
    const leaves = COLUMNS.filter((c) => c.role === 'leaf')
      .map((c) => c.path)
      .sort();
    expect(leaves).toEqual([...WIRE_PATHS, ...PROMOTED_PATHS].sort());
    expect(columnForPath('id')?.role).toBe('internal');
  });

  it('gives each field the PQL kind of its wire type', () => {
    const kind = (p: string) => columnForPath(p)?.kind;
    expect([
      kind('src.geo.asn'),
      kind('@timestamp'),
      kind('meta.@ingest_time'),
      kind('tcp.flags'),
      kind('src.ip'),
      kind('meta.flipped'),
      kind('stats.volume.bytes.total'),
      kind('path'),
    ]).toEqual(['int', 'timestamp', 'timestamp', 'string[]', 'ip', 'bool', 'float', 'json']);
    expect(columnForPath('mpls.1_label')?.column).toBe('mpls_1_label');
    expect(columnForPath('meta.customer_id')?.column).toBe('customer_id');
  });

  it('resolves the SDK README aliases to filterable, sortable fields', () => {
    for (const [alias, path] of Object.entries(FIELD_ALIASES)) {
      expect(columnForPath(alias)?.path).toBe(path);
      expect(filterableFields()).toContain(alias);
    }
    expect(sortableFields()).toEqual(expect.arrayContaining(['protocol', 'bytes', 'packets', '@timestamp', 'dst.port']));
    expect(sortableFields()).not.toContain('hostname');
    expect(filterableFields()).not.toContain('path');
  });

  it('reads promoted extras of older rows from their extras JSON', () => {
    const ddl = createFlowsTableSql(30);
    expect(ddl).toContain("`tls_version` LowCardinality(Nullable(String)) DEFAULT JSONExtract(`extras`, 'tls', 'version', 'Nullable(String)')");
    expect(ddl).toContain("`src_process_name` LowCardinality(Nullable(String)) DEFAULT JSONExtract(`extras`, 'src', 'process', 'name', 'Nullable(String)')");
    for (const path of PROMOTED_PATHS) expect(filterableFields()).toContain(path);
  });

  it('generates the flows DDL with tenant-then-time key, day partitions and TTL', () => {
    const ddl = createFlowsTableSql(30);
    expect(ddl).toMatch(/^\/\* flowstore:schema\.create_flows \*\/ CREATE TABLE IF NOT EXISTS flows/);
    expect(ddl).toContain('PRIMARY KEY (`customer_id`, `timestamp`)\nORDER BY (`customer_id`, `timestamp`, `id`)');
    expect(ddl).toContain('PARTITION BY toDate(`timestamp`)');
    expect(ddl).toContain('TTL toDateTime(`timestamp`) + toIntervalDay(30)');
    expect(ddl).toContain('`mpls_1_label` Nullable(UInt32)');
    expect(ddl).toContain('`src_ip_addr` Nullable(IPv6) MATERIALIZED toIPv6OrNull(`src_ip`)');
    expect(() => createFlowsTableSql(0)).toThrow();
  });
});

describe('rows and records', () => {
  const batch = { customerId: 'c1', nodeId: 'n1', batchId: 'b1', ingestTimeMs: 5 };
  /** The row's values by column name, absent ones left out. */
  const byColumn = (row: FlowRow) => Object.fromEntries(FLOW_ROW_COLUMNS.map((c, i) => [c, row[i]]).filter(([, v]) => v !== undefined));

  it('flattens a record into columns, keeps unknown keys as extras, owns the tenant', () => {
    const row = byColumn(
      flowToRow(batch, { '@timestamp': 10, src: { ip: '10.0.0.1', region: 'x' }, meta: { customer_id: 'spoofed' }, custom: [1], ip: 'not-an-object' }, 3),
    );
    expect(row).toMatchObject({
      customer_id: 'c1',
      node_id: 'n1',
      batch_id: 'b1',
      id: recordId('c1', 'n1', 'b1', 3),
      timestamp: 10,
      src_ip: '10.0.0.1',
      meta_ingest_time: 5,
    });
    expect(JSON.parse(row.extras as string)).toEqual({ src: { region: 'x' }, custom: [1], ip: 'not-an-object' });
  });

  it('stores promoted extras in their columns and keeps their siblings in extras', () => {
    const row = byColumn(
      flowToRow(
        batch,
        {
          '@timestamp': 1,
          src: { ip: '10.0.0.1', process: { name: 'chrome.exe', pid: 42 } },
          tls: { version: 'TLS 1.3', sni: 'a.example' },
          dns: { rrname: 'x.example', rrtype: 'A' },
        },
        0,
      ),
    );
    expect(row).toMatchObject({ src_process_name: 'chrome.exe', tls_version: 'TLS 1.3', tls_sni: 'a.example', dns_rrname: 'x.example' });
    expect(JSON.parse(row.extras as string)).toEqual({ src: { process: { pid: 42 } }, dns: { rrtype: 'A' } });
    expect(() => flowToRow(batch, { '@timestamp': 1, tls: { version: 13 } }, 0)).toThrow(/tls.version/);
  });

  it('rejects a leaf of the wrong type, naming it', () => {
    expect(() => flowToRow(batch, { '@timestamp': 1, dst: { port: 70000 } }, 0)).toThrow(FlowIngestError);
    expect(() => flowToRow(batch, { '@timestamp': 1, src: { ip: 42 } }, 2)).toThrow(/flow #2: src.ip/);
    expect(() => flowToRow(batch, { app_name: 'x' }, 0)).toThrow(/@timestamp/);
    // Past what a DateTime64 column holds: refused here, not by the engine for the whole batch.
    expect(() => flowToRow(batch, { '@timestamp': 1e308 }, 0)).toThrow(/@timestamp: expected epoch milliseconds up to 2299-12-31/);
    expect(() => flowToRow(batch, { '@timestamp': 1, meta: { '@ingest_time': Date.UTC(2300, 0, 1) } }, 0)).toThrow(/meta.@ingest_time/);
  });

  it('stores a lone surrogate as U+FFFD, as a UTF-8 encoder would', () => {
    const row = byColumn(flowToRow(batch, { '@timestamp': 1, app_name: 'cut \ud83d', meta: { tags: ['\udc00x'] } }, 0));
    expect(row).toMatchObject({ app_name: 'cut \ufffd', meta_tags: ['\ufffdx'] });
    expect(JSON.parse(row.source as string)).toMatchObject({ app_name: 'cut \ufffd', meta: { tags: ['\ufffdx'] } });
  });

  it('writes records in SQL with requested paths as parameters, never as text', () => {
    const hostile = "x') OR 1=1 --";
    const p = projectionFor(['src.ip', `custom.${hostile}`, `path.sensor.${hostile}`]);
    expect(p.sql).not.toContain(hostile);
    expect(Object.values(p.params)).toContain(hostile);
    // Its member's key, within the one prefix of the `custom` object holding only it.
    expect(Object.values(p.params)).toContain(`,"custom":{${JSON.stringify(hostile)}:`);
  });

  it('binds each distinct key text once, however many paths name it', () => {
    const fields = Array.from({ length: 300 }, (_, i) => `shared.middle.leaf${i}`);
    const values = Object.values(projectionFor(fields).params);
    expect(new Set(values).size).toBe(values.length);
    // `shared`, `middle` and each leaf, the prefix text of each object, and nothing else.
    expect(values.filter((v) => v === 'shared' || v === 'middle')).toHaveLength(2);
  });
});
