// Flows straight into a Native batch (native-batch.ts): each flow's record written as one row of
// columns from its counters, with no record object built and then walked by the encoder. The
// values are buildFlowRecord's, from the same helpers, and a test holds the two forms equal.

import { momentsOf, tidy } from '../flowgen/packets.js';
import type { Moments, ProcessInfo } from '../flowgen/types.js';
import { ColumnSet, NativeColumns } from '../native-batch.js';
import { flowBasics, interArrival, netRtt, ownersOfFlow, type FlowOwners, type RecordContext } from './flow-record.js';
import { TALLY, type FlowCounters, type FlowState } from './flow-state.js';
import { icmpTypeName, sharedFlagNames, transportName } from './well-known.js';

const set = new ColumnSet();
const column = (path: string) => set.column(path);
const moments = (path: string) => set.group(path, ['count', 'sum', 'sum_squares', 'sum_cubes']);
const triple = (path: string) => set.group(path, ['src', 'dst', 'total']);
const end = (side: 'src' | 'dst') => ({
  ...set.group(side, ['ip', 'port', 'address_type']),
  fqdn: column(`${side}.ctx.fqdn`),
  process: {
    ...set.group(`${side}.process`, ['name', 'pid', 'ppid', 'executable']),
    user: set.group(`${side}.process.user`, ['id', 'name']),
  },
});

/** Every column a metered flow can have, in the order of buildFlowRecord's fields. */
const C = {
  docType: column('doc_type'),
  timestamp: column('@timestamp'),
  key: column('key'),
  sessionKey: column('session_key'),
  appName: column('app_name'),
  src: end('src'),
  dst: end('dst'),
  ipVersion: column('ip.version'),
  proto: column('transport.proto'),
  protoNum: column('transport.proto_num'),
  path: column('path'),
  ingestTime: column('meta.@ingest_time'),
  customerId: column('meta.customer_id'),
  tags: column('meta.tags'),
  flowTypes: column('meta.flow_types'),
  timeOfDay: column('meta.time_of_day'),
  dayOfWeek: column('meta.day_of_week'),
  flipped: column('meta.flipped'),
  connectionCount: column('stats.connection_count'),
  srcBytes: moments('stats.volume.bytes.src'),
  dstBytes: moments('stats.volume.bytes.dst'),
  totalBytes: column('stats.volume.bytes.total'),
  packets: triple('stats.volume.packets'),
  bps: triple('stats.rate.bps'),
  pps: triple('stats.rate.pps'),
  rttNet: moments('stats.rtt_secs.net'),
  rttApp: moments('stats.rtt_secs.app'),
  retransPackets: column('stats.quality.retrans.packets'),
  retransBytes: column('stats.quality.retrans.bytes'),
  fragments: column('stats.quality.fragments'),
  packetSize: moments('stats.size.packet'),
  frameSize: moments('stats.size.frame'),
  entropy: moments('stats.size.payload_entropy'),
  duration: moments('stats.timing.duration_secs'),
  gaps: set.group('stats.timing.inter_arrival_secs', ['mean_gap', 'regularity', 'consistency', 'burstiness', 'min_gap', 'max_gap']),
  tcpFlags: column('tcp.flags'),
  tcpWindow: moments('tcp.window_length'),
  icmp: set.group('icmp', ['type', 'type_map', 'code']),
  dns: set.group('dns', ['rrname', 'rrtype', 'rcode', 'answers']),
  tls: set.group('tls', ['version', 'sni', 'alpn', 'ja4']),
  http: set.group('http', ['host', 'method', 'user_agent', 'uri']),
};

type MomentColumns = ReturnType<typeof moments>;
type EndColumns = ReturnType<typeof end>;

/**
 * The flows' records as one Native block, or undefined when they cannot be one (too many rows, a
 * big-endian host): the caller then builds the records. `endMicros` of each flow is its export time.
 */
export function writeFlowBlock(flows: readonly FlowState[], ctx: RecordContext, owners?: FlowOwners): Buffer | undefined {
  // Before any row: owners are asked once per flow, and the records built instead would ask again.
  if (!NativeColumns.fits(flows.length)) return undefined;
  const columns = set.rows(flows.length);
  const path = new PathTexts(ctx);
  for (let row = 0; row < flows.length; row++) writeRow(columns, row, flows[row]!, ctx, path, owners);
  return columns.block();
}

function writeRow(out: NativeColumns, row: number, flow: FlowState, ctx: RecordContext, path: PathTexts, owners: FlowOwners | undefined): void {
  const id = flow.id;
  const c = flow.counters;
  const hints = flow.hints;
  const f = flowBasics(flow, flow.endMicros);
  out.string(C.docType, row, 'flow');
  out.number(C.timestamp, row, f.ts);
  out.string(C.key, row, f.key);
  out.string(C.sessionKey, row, f.sessionKey);
  out.string(C.appName, row, f.appName);
  const processes = owners === undefined ? undefined : ownersOfFlow(owners, flow, f.ts, f.ingestTime);
  writeEnd(out, row, C.src, id.srcIp, id.srcPrivate, id.srcPort, undefined, processes?.src);
  writeEnd(out, row, C.dst, id.dstIp, id.dstPrivate, id.dstPort, f.fqdn, processes?.dst);
  out.number(C.ipVersion, row, id.ipVersion);
  out.string(C.proto, row, transportName(id.protocol));
  out.number(C.protoNum, row, id.protocol);
  out.jsonText(C.path, row, path.of(id.vlan));

  out.number(C.ingestTime, row, f.ingestTime);
  out.string(C.customerId, row, ctx.customerId);
  out.strings(C.tags, row, ctx.tags);
  out.strings(C.flowTypes, row, PACKET_FLOW_TYPES);
  out.number(C.timeOfDay, row, f.timeOfDay);
  out.number(C.dayOfWeek, row, f.dayOfWeek);
  out.boolean(C.flipped, row, id.flipped);

  out.number(C.connectionCount, row, 1);
  writeTally(out, row, C.srcBytes, c, TALLY.srcBytes);
  writeTally(out, row, C.dstBytes, c, TALLY.dstBytes);
  out.number(C.totalBytes, row, f.srcBytes + f.dstBytes);
  out.number(C.packets.src, row, f.srcPackets);
  out.number(C.packets.dst, row, f.dstPackets);
  out.number(C.packets.total, row, f.srcPackets + f.dstPackets);
  const rates = f.rates;
  out.number(C.bps.src, row, rates.bps.src);
  out.number(C.bps.dst, row, rates.bps.dst);
  out.number(C.bps.total, row, rates.bps.total);
  out.number(C.pps.src, row, rates.pps.src);
  out.number(C.pps.dst, row, rates.pps.dst);
  out.number(C.pps.total, row, rates.pps.total);
  writeMoments(out, row, C.rttNet, netRtt(c));
  writeMoments(out, row, C.rttApp, NO_MOMENTS);
  out.number(C.retransPackets, row, c.retransPackets);
  out.number(C.retransBytes, row, c.retransBytes);
  out.number(C.fragments, row, c.fragments);
  writeSums(out, row, C.packetSize, c.packetSum(0), c.packetSum(1), c.packetSum(2), c.packetSum(3));
  writeTally(out, row, C.frameSize, c, TALLY.frames);
  writeTally(out, row, C.entropy, c, TALLY.entropy);
  writeMoments(out, row, C.duration, f.durationMoments);
  const gaps = interArrival(c);
  out.number(C.gaps.mean_gap, row, gaps.mean_gap);
  out.number(C.gaps.regularity, row, gaps.regularity);
  out.number(C.gaps.consistency, row, gaps.consistency);
  out.number(C.gaps.burstiness, row, gaps.burstiness);
  out.number(C.gaps.min_gap, row, gaps.min_gap);
  out.number(C.gaps.max_gap, row, gaps.max_gap);

  if (flow.isTcp) {
    out.strings(C.tcpFlags, row, sharedFlagNames(c.flags));
    writeTally(out, row, C.tcpWindow, c, TALLY.window);
  }
  if (id.icmp !== undefined) {
    out.number(C.icmp.type, row, id.icmp.type);
    out.string(C.icmp.type_map, row, icmpTypeName(id.protocol, id.icmp.type));
    out.number(C.icmp.code, row, id.icmp.code);
  }
  // Hints hold no empty values (mergeHints keeps them out); dns goes only with its name, as in the record.
  const dns = hints.dns;
  if (dns?.rrname) {
    out.string(C.dns.rrname, row, dns.rrname);
    optionalString(out, row, C.dns.rrtype, dns.rrtype);
    optionalString(out, row, C.dns.rcode, dns.rcode);
    if (dns.answers !== undefined) out.strings(C.dns.answers, row, dns.answers);
  }
  const tls = hints.tls;
  if (tls !== undefined) {
    optionalString(out, row, C.tls.version, tls.version);
    optionalString(out, row, C.tls.sni, tls.sni);
    if (tls.alpn !== undefined) out.strings(C.tls.alpn, row, tls.alpn);
    optionalString(out, row, C.tls.ja4, tls.ja4);
  }
  const http = hints.http;
  if (http !== undefined) {
    optionalString(out, row, C.http.host, http.host);
    optionalString(out, row, C.http.method, http.method);
    optionalString(out, row, C.http.user_agent, http.user_agent);
    optionalString(out, row, C.http.uri, http.uri);
  }
}

const PACKET_FLOW_TYPES: readonly string[] = ['packet'];
/** stats.rtt_secs.app: a packet meter sees no application round trip. */
const NO_MOMENTS = momentsOf(0, 0, 0);

function writeEnd(
  out: NativeColumns,
  row: number,
  at: EndColumns,
  ip: string,
  isPrivate: boolean,
  port: number,
  fqdn: string | undefined,
  process: ProcessInfo | undefined,
): void {
  out.string(at.ip, row, ip);
  out.number(at.port, row, port);
  out.string(at.address_type, row, isPrivate ? 'private' : 'public');
  if (fqdn) out.string(at.fqdn, row, fqdn);
  if (process === undefined) return;
  out.string(at.process.name, row, process.name);
  out.number(at.process.pid, row, process.pid);
  if (process.ppid !== undefined) out.number(at.process.ppid, row, process.ppid);
  if (process.executable !== undefined) out.string(at.process.executable, row, process.executable);
  if (process.user !== undefined) {
    out.number(at.process.user.id, row, process.user.id);
    if (process.user.name !== undefined) out.string(at.process.user.name, row, process.user.name);
  }
}

/** A tally's moments as FlowCounters.momentsOf() gives them, without making the object (most of a row's are these). */
function writeTally(out: NativeColumns, row: number, at: MomentColumns, c: FlowCounters, tally: number): void {
  writeSums(out, row, at, c.countOf(tally), c.sumOf(tally), c.sumOfSquares(tally), c.sumOfCubes(tally));
}

/** Power sums as moments: the count, and the sums tidied as momentsOfSums() tidies them. */
function writeSums(out: NativeColumns, row: number, at: MomentColumns, count: number, sum: number, squares: number, cubes: number): void {
  out.number(at.count, row, count);
  out.number(at.sum, row, tidy(sum));
  out.number(at.sum_squares, row, tidy(squares));
  out.number(at.sum_cubes, row, tidy(cubes));
}

function writeMoments(out: NativeColumns, row: number, at: MomentColumns, m: Moments): void {
  out.number(at.count, row, m.count);
  out.number(at.sum, row, m.sum);
  out.number(at.sum_squares, row, m.sum_squares);
  out.number(at.sum_cubes, row, m.sum_cubes);
}

function optionalString(out: NativeColumns, row: number, at: number, value: string | undefined): void {
  if (value !== undefined) out.string(at, row, value);
}

/** The `path` column's text: one sensor per batch, so one text per VLAN (most flows have none). */
class PathTexts {
  private readonly texts = new Map<number | undefined, string>();

  constructor(private readonly ctx: RecordContext) {}

  of(vlan: number | undefined): string {
    let text = this.texts.get(vlan);
    if (text === undefined) {
      const s = this.ctx.sensor;
      const sensor = { id: s.id, type: s.type, name: s.name, hostname: s.hostname, interface: s.interface };
      text = JSON.stringify([vlan === undefined ? { sensor } : { sensor, src_vlan: vlan, dst_vlan: vlan }]);
      this.texts.set(vlan, text);
    }
    return text;
  }
}
