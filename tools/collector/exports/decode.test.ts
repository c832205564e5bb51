// The export decoder on real NetFlow v5, v9 and IPFIX datagrams that Debian's
// softflowd makes at test time from loopback traffic this test sends.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFlowRecord } from '../flowgen/wire-check.js';
import { ExportDecoder } from './decode.js';
import type { ExportRecord } from './record.js';
import { captureLoopback, softflowdExport, withTempDir, type LoopbackTraffic } from './softflowd-kit.js';

const TRAFFIC: LoopbackTraffic = { tcpPort: 47101, udpPort: 47102, closedPort: 47103, tcpBytesEachWay: 1000, udpPayloads: [100, 200], udpFlows: 70 };
const VERSIONS = [
  { name: 'v5', args: ['5'], kind: 'netflow_v5' },
  { name: 'v9', args: ['9'], kind: 'netflow_v9' },
  { name: 'IPFIX', args: ['10'], kind: 'ipfix' },
  { name: 'IPFIX biflow (-b)', args: ['10', '-b'], kind: 'ipfix' },
] as const;

interface Export {
  datagrams: Buffer[];
  port: number;
  /** softflowd's own account of each flow it exported (its -D output). */
  expired: string[];
}

const exports = new Map<string, Export>();
let temp: ReturnType<typeof withTempDir>;

/** "proto srcport>dstport bytes/packets", from softflowd's EXPIRED lines. */
function fromVerbose(verbose: string): string[] {
  const lines = verbose.split('\n').filter((l) => l.startsWith('EXPIRED:'));
  return lines
    .map((l) => {
      const m = /\]:(\d+) <> \[[^\]]+\]:(\d+) proto:(\d+) octets>:(\d+) packets>:(\d+)/.exec(l)!;
      const ports = m[3] === '1' ? '' : `${m[1]}>${m[2]}`;
      return `${m[3]} ${ports} ${m[4]}/${m[5]}`;
    })
    .sort();
}

function summary(r: ExportRecord): string {
  const ports = r.transport.proto_num === 1 ? '' : `${r.src.port}>${r.dst.port}`;
  return `${r.transport.proto_num} ${ports} ${r.stats.volume.bytes.src.sum}/${r.stats.volume.packets.src}`;
}

function decodeAll(datagrams: Buffer[], port: number): { records: ExportRecord[]; decoder: ExportDecoder } {
  const decoder = new ExportDecoder({ customerId: 'c1' });
  const records = datagrams.flatMap((d) => decoder.decode(d, '127.0.0.1', port));
  return { records, decoder };
}

beforeAll(async () => {
  temp = withTempDir();
  const pcap = await captureLoopback(temp.dir, TRAFFIC);
  for (const v of VERSIONS) {
    const e = await softflowdExport(pcap, v.args[0], v.args.slice(1));
    exports.set(v.name, { datagrams: e.datagrams, port: e.port, expired: fromVerbose(e.verbose) });
  }
}, 60_000);

afterAll(() => temp?.remove());

describe.each(VERSIONS)('softflowd $name', (v) => {
  it('decodes every flow softflowd exported, with its ports, protocol, bytes and packets', () => {
    const e = exports.get(v.name)!;
    expect(e.datagrams.length).toBeGreaterThan(1);
    const { records, decoder } = decodeAll(e.datagrams, e.port);
    expect(decoder.drops).toEqual({});
    expect(decoder.sequence).toEqual({ gaps: 0, missing: 0 });
    expect(records.map(summary).sort()).toEqual(e.expired);
    // Two senders may share an ephemeral port, and so a flow: softflowd's count is the reference.
    expect(records.length).toBeGreaterThan(TRAFFIC.udpFlows);

    const udp = records.find((r) => r.dst.port === TRAFFIC.udpPort && r.stats.volume.packets.src === 2)!;
    expect(udp.transport).toEqual({ proto: 'UDP', proto_num: 17 });
    expect(udp.stats.volume.bytes.src.sum).toBe(2 * 28 + 100 + 200); // IP + UDP headers each
    const tcp = records.find((r) => r.dst.port === TRAFFIC.tcpPort)!;
    expect(tcp.tcp?.flags).toEqual(expect.arrayContaining(['SYN', 'ACK', 'FIN']));
    expect(records.find((r) => r.transport.proto === 'ICMP')?.icmp).toEqual({ type: 3, code: 3 }); // port unreachable
    for (const r of records) {
      expect(r.meta.flow_types).toEqual([v.kind]);
      expect(r.path[0].sensor).toMatchObject({ type: v.kind, hostname: '127.0.0.1' });
    }
  });

  it('gives each record the flow start time of the captured packets', () => {
    const e = exports.get(v.name)!;
    const { records } = decodeAll(e.datagrams, e.port);
    const now = Date.now();
    for (const r of records) {
      expect(r['@timestamp']).toBeGreaterThan(now - 120_000);
      expect(r['@timestamp']).toBeLessThanOrEqual(now);
    }
  });

  it('makes records that pass the wire check except for what an export cannot know', () => {
    const e = exports.get(v.name)!;
    const { records } = decodeAll(e.datagrams, e.port);
    const now = Date.now();
    // Absent on purpose: per-packet moments, RTT, sizes, inter-arrival times, the app name, ICMP ports.
    // Geo is enrichment the server adds, not something an exporter says.
    const unknowable =
      /^\.(app_name|stats\.(volume\.bytes\.(src|dst)\.sum_(squares|cubes)|rtt_secs|size|timing\.inter_arrival_secs|timing\.duration_secs\.sum_(squares|cubes))|(src|dst)\.(port|geo\.location|geo\.asn|geo\.org)): (missing|expected object, got undefined)$/;
    for (const r of records) {
      const problems = checkFlowRecord(r, { startMs: now - 120_000, endMs: now + 1, customerId: 'c1' });
      expect(problems.filter((p) => !unknowable.test(p))).toEqual([]);
    }
  });
});

describe.each(VERSIONS.filter((v) => v.name !== 'v5'))('softflowd $name templates and sequence', (v) => {
  it('holds data sets that arrive before their template and decodes them when it comes', () => {
    const e = exports.get(v.name)!;
    const inOrder = decodeAll(e.datagrams, e.port).records.map(summary).sort();
    const decoder = new ExportDecoder({ customerId: 'c1' });
    const late = e.datagrams.slice(1).flatMap((d) => decoder.decode(d, '127.0.0.1', e.port));
    expect(late).toEqual([]);
    expect(decoder.waitingSets()).toBe(e.datagrams.length - 1);
    const all = [...late, ...decoder.decode(e.datagrams[0], '127.0.0.1', e.port)];
    expect(all.map(summary).sort()).toEqual(inOrder);
    expect(decoder.waitingSets()).toBe(0);
  });

  it('counts a sequence gap when a datagram is lost', () => {
    const e = exports.get(v.name)!;
    const lost = decodeAll(e.datagrams.slice(0, 2), e.port).records.length - decodeAll(e.datagrams.slice(0, 1), e.port).records.length;
    const { decoder } = decodeAll([e.datagrams[0], ...e.datagrams.slice(2)], e.port);
    // v9 numbers packets; IPFIX numbers data records.
    expect(decoder.sequence).toEqual({ gaps: 1, missing: v.kind === 'netflow_v9' ? 1 : lost });
  });
});

it('counts a lost NetFlow v5 datagram as the flows it carried', () => {
  const e = exports.get('v5')!;
  const lost = e.datagrams[1].readUInt16BE(2);
  const { decoder } = decodeAll([e.datagrams[0], ...e.datagrams.slice(2)], e.port);
  expect(decoder.sequence).toEqual({ gaps: 1, missing: lost });
});

it('reads RFC 5103 reverse elements in softflowd -b templates', () => {
  const e = exports.get('IPFIX biflow (-b)')!;
  // Template field specifiers with the enterprise bit, enterprise 29305.
  expect(e.datagrams[0].toString('hex')).toMatch(/8001000400007279/);
  const { records } = decodeAll(e.datagrams, e.port);
  // softflowd 1.1.0 reading a file meters each direction as its own flow: reverse counts are 0.
  for (const r of records) expect(r.stats.volume.packets.dst).toBe(0);
});

