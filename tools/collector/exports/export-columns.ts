// Export records straight into a Native batch (native-batch.ts): buildExportRecord fills a known
// set of fields, so each is read by name rather than found by the encoder's walk over the
// record, which cost more than decoding the export did. A test holds the block equal to the
// encoder's on softflowd's exports of every version.

import { ColumnSet, NativeColumns } from '../native-batch.js';
import type { ExportRecord } from './record.js';

const set = new ColumnSet();
const column = (path: string) => set.column(path);
const triple = (path: string) => set.group(path, ['src', 'dst', 'total']);
const totals = (path: string) => set.group(path, ['count', 'sum']);
const end = (side: 'src' | 'dst') => set.group(side, ['ip', 'port', 'address_type']);

/** Every column of an export record, in the order of buildExportRecord's fields. */
const C = {
  docType: column('doc_type'),
  timestamp: column('@timestamp'),
  key: column('key'),
  sessionKey: column('session_key'),
  src: end('src'),
  dst: end('dst'),
  ipVersion: column('ip.version'),
  transport: set.group('transport', ['proto', 'proto_num']),
  path: column('path'),
  meta: set.group('meta', ['@ingest_time', 'customer_id', 'tags', 'flow_types', 'time_of_day', 'day_of_week', 'flipped']),
  connectionCount: column('stats.connection_count'),
  srcBytes: totals('stats.volume.bytes.src'),
  dstBytes: totals('stats.volume.bytes.dst'),
  totalBytes: column('stats.volume.bytes.total'),
  packets: triple('stats.volume.packets'),
  bps: triple('stats.rate.bps'),
  pps: triple('stats.rate.pps'),
  duration: totals('stats.timing.duration_secs'),
  tcpFlags: column('tcp.flags'),
  icmp: set.group('icmp', ['type', 'type_map', 'code']),
};

/** The records as one Native block, or undefined when they cannot be one: the caller sends them as records. */
export function writeExportBlock(records: readonly ExportRecord[]): Buffer | undefined {
  const out = set.rows(records.length);
  for (let row = 0; row < records.length; row++) writeRow(out, row, records[row]!);
  return out.block();
}

function writeRow(out: NativeColumns, row: number, r: ExportRecord): void {
  out.string(C.docType, row, r.doc_type);
  out.number(C.timestamp, row, r['@timestamp']);
  out.string(C.key, row, r.key);
  out.string(C.sessionKey, row, r.session_key);
  writeEnd(out, row, C.src, r.src);
  writeEnd(out, row, C.dst, r.dst);
  out.number(C.ipVersion, row, r.ip.version);
  out.string(C.transport.proto, row, r.transport.proto);
  out.number(C.transport.proto_num, row, r.transport.proto_num);
  out.jsonText(C.path, row, JSON.stringify(r.path));

  const meta = r.meta;
  out.number(C.meta['@ingest_time'], row, meta['@ingest_time']);
  out.string(C.meta.customer_id, row, meta.customer_id);
  out.strings(C.meta.tags, row, meta.tags);
  out.strings(C.meta.flow_types, row, meta.flow_types);
  out.number(C.meta.time_of_day, row, meta.time_of_day);
  out.number(C.meta.day_of_week, row, meta.day_of_week);
  out.boolean(C.meta.flipped, row, meta.flipped);

  const stats = r.stats;
  out.number(C.connectionCount, row, stats.connection_count);
  const bytes = stats.volume.bytes;
  out.number(C.srcBytes.count, row, bytes.src.count);
  out.number(C.srcBytes.sum, row, bytes.src.sum);
  out.number(C.dstBytes.count, row, bytes.dst.count);
  out.number(C.dstBytes.sum, row, bytes.dst.sum);
  out.number(C.totalBytes, row, bytes.total);
  writeTriple(out, row, C.packets, stats.volume.packets);
  writeTriple(out, row, C.bps, stats.rate.bps);
  writeTriple(out, row, C.pps, stats.rate.pps);
  out.number(C.duration.count, row, stats.timing.duration_secs.count);
  out.number(C.duration.sum, row, stats.timing.duration_secs.sum);

  if (r.tcp !== undefined) out.strings(C.tcpFlags, row, r.tcp.flags);
  if (r.icmp !== undefined) {
    out.number(C.icmp.type, row, r.icmp.type);
    out.string(C.icmp.type_map, row, r.icmp.type_map);
    out.number(C.icmp.code, row, r.icmp.code);
  }
}

function writeEnd(out: NativeColumns, row: number, at: ReturnType<typeof end>, e: ExportRecord['src']): void {
  out.string(at.ip, row, e.ip);
  if (e.port !== undefined) out.number(at.port, row, e.port);
  out.string(at.address_type, row, e.address_type);
}

function writeTriple(out: NativeColumns, row: number, at: ReturnType<typeof triple>, values: { src: number; dst: number; total: number }): void {
  out.number(at.src, row, values.src);
  out.number(at.dst, row, values.dst);
  out.number(at.total, row, values.total);
}
