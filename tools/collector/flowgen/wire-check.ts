// A hand-written checker for the flow record types of wire.md §5.4 (what the
// public SDK validates), plus the consistency a sensor's numbers must have.
// Returns a list of problems, empty when the record is valid.

import { isIPv6 } from 'node:net';
import { isPrivate } from './ip.js';

type Json = Record<string, unknown>;

class Problems {
  readonly list: string[] = [];

  add(path: string, message: string): void {
    this.list.push(`${path}: ${message}`);
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function expect(p: Problems, obj: Json, key: string, path: string, kind: 'string' | 'int' | 'float' | 'bool', optional = false): void {
  const v = obj[key];
  const at = `${path}.${key}`;
  if (v === undefined) {
    if (!optional) p.add(at, 'missing');
    return;
  }
  const ok =
    kind === 'string'
      ? typeof v === 'string'
      : kind === 'bool'
        ? typeof v === 'boolean'
        : kind === 'int'
          ? Number.isInteger(v)
          : typeof v === 'number' && Number.isFinite(v);
  if (!ok) p.add(at, `expected ${kind}, got ${JSON.stringify(v)}`);
}

function child(p: Problems, obj: Json, key: string, path: string, optional = false): Json | undefined {
  const v = obj[key];
  if (v === undefined && optional) return undefined;
  if (!isObject(v)) {
    p.add(`${path}.${key}`, `expected object, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return v;
}

function stringArray(p: Problems, obj: Json, key: string, path: string): void {
  const v = obj[key];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) p.add(`${path}.${key}`, 'expected string[]');
}

function moments(p: Problems, obj: Json | undefined, key: string, path: string): Json | undefined {
  if (!obj) return undefined;
  const m = child(p, obj, key, path);
  if (!m) return undefined;
  expect(p, m, 'count', `${path}.${key}`, 'int');
  for (const k of ['sum', 'sum_squares', 'sum_cubes']) expect(p, m, k, `${path}.${key}`, 'float');
  return m;
}

function floats(p: Problems, obj: Json | undefined, key: string, path: string, keys: string[]): void {
  if (!obj) return;
  const o = child(p, obj, key, path);
  if (o) for (const k of keys) expect(p, o, k, `${path}.${key}`, 'float');
}

function direction(p: Problems, record: Json, key: 'src' | 'dst'): void {
  const d = child(p, record, key, '');
  if (!d) return;
  const path = `.${key}`;
  expect(p, d, 'ip', path, 'string');
  if (typeof d.ip === 'string' && !IPV4.test(d.ip) && !isIPv6(d.ip)) p.add(`${path}.ip`, `not an IP address: ${d.ip}`);
  expect(p, d, 'port', path, 'int');
  if (Number.isInteger(d.port) && ((d.port as number) < 0 || (d.port as number) > 65535)) p.add(`${path}.port`, 'out of range');
  expect(p, d, 'address_type', path, 'string');
  if (typeof d.ip === 'string' && IPV4.test(d.ip)) {
    const expected = isPrivate(d.ip) ? 'private' : 'public';
    if (d.address_type !== expected) p.add(`${path}.address_type`, `${d.ip} is ${expected}`);
  }
  const geo = child(p, d, 'geo', path);
  if (geo) {
    for (const k of ['continent_name', 'country_iso_code', 'country_name', 'city_name', 'time_zone', 'location_network', 'org', 'as_network']) {
      expect(p, geo, k, `${path}.geo`, 'string', true);
    }
    expect(p, geo, 'asn', `${path}.geo`, 'int', true);
    expect(p, geo, 'accuracy_radius', `${path}.geo`, 'int', true);
    // A packet meter leaves geo to the server's datasets (geo: {}); geo that is there is whole.
    const located = Object.keys(geo).length > 0;
    if (located) floats(p, geo, 'location', `${path}.geo`, ['lat', 'lon']);
    if (d.address_type === 'public' && located) {
      expect(p, geo, 'asn', `${path}.geo`, 'int');
      expect(p, geo, 'org', `${path}.geo`, 'string');
    }
  }
  const ctx = child(p, d, 'ctx', path);
  if (ctx) for (const k of ['organization', 'industry', 'fqdn']) expect(p, ctx, k, `${path}.ctx`, 'string', true);
  const proc = child(p, d, 'process', path, true);
  if (proc) {
    expect(p, proc, 'name', `${path}.process`, 'string');
    expect(p, proc, 'pid', `${path}.process`, 'int');
    expect(p, proc, 'ppid', `${path}.process`, 'int', true);
    expect(p, proc, 'executable', `${path}.process`, 'string', true);
    const user = child(p, proc, 'user', `${path}.process`, true);
    if (user) {
      expect(p, user, 'id', `${path}.process.user`, 'int');
      expect(p, user, 'name', `${path}.process.user`, 'string', true);
    }
  }
}

function scale(p: Problems, obj: Json, key: string, path: string): void {
  const s = child(p, obj, key, path);
  if (!s) return;
  for (const k of ['beacon_score', 'timing_regularity', 'timing_predictability', 'timing_uniformity', 'pattern_significance']) {
    expect(p, s, k, `${path}.${key}`, 'float');
  }
  expect(p, s, 'is_beacon', `${path}.${key}`, 'bool');
  expect(p, s, 'sample_count', `${path}.${key}`, 'int');
  expect(p, s, 'analysis_type', `${path}.${key}`, 'string');
}

/** Serialises unchanged: no undefined, null, NaN or Infinity, only plain objects and arrays. */
function jsonSafe(p: Problems, value: unknown, path: string): void {
  if (value === null || value === undefined) return p.add(path, `is ${value}`);
  if (typeof value === 'number' && !Number.isFinite(value)) return p.add(path, `is ${value}`);
  if (Array.isArray(value)) return value.forEach((v, i) => jsonSafe(p, v, `${path}[${i}]`));
  if (typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype) return p.add(path, 'is not a plain object');
    for (const [k, v] of Object.entries(value)) jsonSafe(p, v, `${path}.${k}`);
  } else if (!['string', 'number', 'boolean'].includes(typeof value)) p.add(path, `is a ${typeof value}`);
}

export interface CheckBounds {
  startMs: number;
  endMs: number;
  customerId?: string;
}

/** Problems with one record; empty when it matches wire.md §5.4 and is self-consistent. */
export function checkFlowRecord(record: unknown, bounds: CheckBounds): string[] {
  const p = new Problems();
  if (!isObject(record)) return ['record: not an object'];

  jsonSafe(p, record, '');

  for (const k of ['doc_type', 'key', 'session_key', 'app_name']) expect(p, record, k, '', 'string');
  const ts = record['@timestamp'];
  expect(p, record, '@timestamp', '', 'int');
  if (typeof ts === 'number' && (ts < bounds.startMs || ts >= bounds.endMs)) p.add('.@timestamp', `${ts} outside [${bounds.startMs}, ${bounds.endMs})`);

  direction(p, record, 'src');
  direction(p, record, 'dst');
  const ip = child(p, record, 'ip', '');
  if (ip) expect(p, ip, 'version', '.ip', 'int');
  const transport = child(p, record, 'transport', '');
  if (transport) {
    expect(p, transport, 'proto', '.transport', 'string');
    expect(p, transport, 'proto_num', '.transport', 'int');
  }

  if (!Array.isArray(record.path)) p.add('.path', 'expected an array');
  else {
    record.path.forEach((entry, i) => {
      if (!isObject(entry)) return p.add(`.path[${i}]`, 'expected object');
      const sensor = child(p, entry, 'sensor', `.path[${i}]`);
      if (sensor) for (const k of ['id', 'type', 'name', 'hostname', 'interface']) expect(p, sensor, k, `.path[${i}].sensor`, 'string');
      for (const k of ['src_vlan', 'dst_vlan', 'src_as', 'dst_as']) expect(p, entry, k, `.path[${i}]`, 'int', true);
    });
  }

  const meta = child(p, record, 'meta', '');
  if (meta) {
    expect(p, meta, '@ingest_time', '.meta', 'int');
    expect(p, meta, 'customer_id', '.meta', 'string');
    stringArray(p, meta, 'tags', '.meta');
    stringArray(p, meta, 'flow_types', '.meta');
    expect(p, meta, 'time_of_day', '.meta', 'int');
    expect(p, meta, 'day_of_week', '.meta', 'int');
    expect(p, meta, 'flipped', '.meta', 'bool');
    if (bounds.customerId !== undefined && meta.customer_id !== bounds.customerId) p.add('.meta.customer_id', 'wrong customer');
    if (typeof ts === 'number') {
      if (typeof meta['@ingest_time'] === 'number' && meta['@ingest_time'] < ts) p.add('.meta.@ingest_time', 'before @timestamp');
      if (meta.time_of_day !== new Date(ts).getUTCHours()) p.add('.meta.time_of_day', 'is not the UTC hour');
      if (meta.day_of_week !== (new Date(ts).getUTCDay() || 7)) p.add('.meta.day_of_week', 'is not the ISO weekday');
    }
  }

  const stats = child(p, record, 'stats', '');
  if (stats) {
    expect(p, stats, 'connection_count', '.stats', 'int');
    const volume = child(p, stats, 'volume', '.stats');
    const bytes = volume && child(p, volume, 'bytes', '.stats.volume');
    const src = moments(p, bytes, 'src', '.stats.volume.bytes');
    const dst = moments(p, bytes, 'dst', '.stats.volume.bytes');
    if (bytes) expect(p, bytes, 'total', '.stats.volume.bytes', 'float');
    floats(p, volume, 'packets', '.stats.volume', ['src', 'dst', 'total']);
    const rate = child(p, stats, 'rate', '.stats');
    floats(p, rate, 'bps', '.stats.rate', ['src', 'dst', 'total']);
    floats(p, rate, 'pps', '.stats.rate', ['src', 'dst', 'total']);
    const rtt = child(p, stats, 'rtt_secs', '.stats');
    moments(p, rtt, 'net', '.stats.rtt_secs');
    moments(p, rtt, 'app', '.stats.rtt_secs');
    const quality = child(p, stats, 'quality', '.stats', true);
    if (quality) {
      floats(p, quality, 'retrans', '.stats.quality', ['packets', 'bytes']);
      expect(p, quality, 'fragments', '.stats.quality', 'float');
    }
    const size = child(p, stats, 'size', '.stats');
    const packet = moments(p, size, 'packet', '.stats.size');
    moments(p, size, 'frame', '.stats.size');
    moments(p, size, 'payload_entropy', '.stats.size');
    const timing = child(p, stats, 'timing', '.stats');
    moments(p, timing, 'duration_secs', '.stats.timing');
    floats(p, timing, 'inter_arrival_secs', '.stats.timing', ['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap']);

    // A sensor's numbers agree with each other.
    if (src && dst && bytes && volume) {
      const packets = volume.packets as Json;
      if (bytes.total !== (src.sum as number) + (dst.sum as number)) p.add('.stats.volume.bytes.total', 'is not src.sum + dst.sum');
      if (packets.src !== src.count || packets.dst !== dst.count) p.add('.stats.volume.packets', 'disagree with byte moment counts');
      if (packets.total !== (packets.src as number) + (packets.dst as number)) p.add('.stats.volume.packets.total', 'is not src + dst');
      if (packet && (packet.count !== packets.total || packet.sum !== bytes.total)) p.add('.stats.size.packet', 'disagrees with volume');
    }
  }

  const tcp = child(p, record, 'tcp', '', true);
  if (tcp) stringArray(p, tcp, 'flags', '.tcp');
  if ((transport?.proto === 'TCP') !== (tcp !== undefined)) p.add('.tcp', 'present exactly when transport is TCP');

  const suricata = child(p, record, 'suricata', '', true);
  if (suricata) {
    expect(p, suricata, 'flow_id', '.suricata', 'int');
    expect(p, suricata, 'l7_app_map', '.suricata', 'string');
    stringArray(p, suricata, 'event_types', '.suricata');
    const flow = child(p, suricata, 'flow', '.suricata');
    if (flow) {
      expect(p, flow, 'community_id', '.suricata.flow', 'string');
      expect(p, flow, 'event_type', '.suricata.flow', 'string');
      expect(p, flow, 'alerted', '.suricata.flow', 'bool');
    }
  }
  const threat = child(p, record, 'threat', '', true);
  if (threat) {
    for (const k of ['indicator', 'type', 'trajectory', 'ip']) expect(p, threat, k, '.threat', 'string');
    expect(p, threat, 'mask', '.threat', 'int');
    for (const k of ['posture', 'tags', 'feeds', 'countermeasures']) stringArray(p, threat, k, '.threat');
  }
  const beacon = child(p, record, 'beacon', '', true);
  if (beacon) {
    for (const k of ['confidence', 'weighted_confidence', 'consensus_score']) expect(p, beacon, k, '.beacon', 'float');
    for (const k of ['first_seen', 'last_seen', 'primary_evidence']) expect(p, beacon, k, '.beacon', 'string');
    expect(p, beacon, 'has_sessions', '.beacon', 'bool');
    scale(p, beacon, 'packet_level', '.beacon');
    scale(p, beacon, 'session_level', '.beacon');
    const interval = child(p, beacon, 'interval', '.beacon');
    if (interval) expect(p, interval, 'value_ms', '.beacon.interval', 'int');
    const bmeta = child(p, beacon, 'meta', '.beacon');
    if (bmeta) for (const k of ['detection_engine', 'analysis_version']) expect(p, bmeta, k, '.beacon.meta', 'string');
  }
  return p.list;
}
