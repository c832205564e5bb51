import { describe, expect, it } from 'vitest';
import { checkFlowRecord } from '../flowgen/wire-check.js';
import type { FlowRecord } from '../flowgen/types.js';
import { FlowTable, type FlowTableOptions } from './flow-table.js';
import { icmpPacket, reversed, tcpPacket, TcpConversation, udpPacket, type Ends } from './hand-packets.js';
import { TcpFlag, type AppHints, type DecodedPacket, type InspectedPacket, type PayloadInspector } from './packet.js';
import { inspectPayload } from './app/index.js';

const { SYN, ACK, PSH, RST } = TcpFlag;
const T0 = Date.UTC(2026, 10, 27, 10, 0, 0) * 1000; // micros
const SEC = 1_000_000;
const SENSOR = { id: 'sensor-1', type: 'packet', name: 'meter', hostname: 'router', interface: 'eth0' };
const web: Ends = { src: '10.0.0.5', dst: '93.184.216.34', srcPort: 50000, dstPort: 80 };

function table(options: Partial<FlowTableOptions> = {}): FlowTable {
  return new FlowTable({ customerId: 'c1', sensor: SENSOR, tags: ['site-a'], ...options });
}

/** Every record a test sees passes the wire checker. */
function valid(records: FlowRecord[]): FlowRecord[] {
  for (const r of records) {
    expect(checkFlowRecord(JSON.parse(JSON.stringify(r)), { startMs: T0 / 1000 - 1, endMs: T0 / 1000 + 86_400_000, customerId: 'c1' })).toEqual([]);
  }
  return records;
}

function feed(t: FlowTable, packets: DecodedPacket[]): FlowRecord[] {
  const out: FlowRecord[] = [];
  for (const p of packets) {
    t.add(p);
    out.push(...t.advance(p.tsMicros));
  }
  return valid(out);
}

const bytes = (n: number, fill = 0x41): Uint8Array => new Uint8Array(n).fill(fill);

/** A DNS message (RFC 1035 4.1) with one A question for `name`, as a query or an empty answer. */
function dnsQuestion(id: number, name: string, answer = false): Uint8Array {
  const labels = name.split('.').flatMap((label) => [label.length, ...new TextEncoder().encode(label)]);
  const header = [id >> 8, id & 0xff, answer ? 0x81 : 0x01, answer ? 0x80 : 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
  return new Uint8Array([...header, ...labels, 0, 0, 1, 0, 1]);
}
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('TCP', () => {
  it('meters a handshake, data both ways and a FIN close into one record as soon as the last ACK is seen', () => {
    const c = new TcpConversation(web);
    const request = text('GET / HTTP/1.1\r\nHost: example.com\r\n\r\n');
    const packets = [
      ...c.handshake(T0, 20_000),
      c.segment(T0 + 30_000, true, PSH | ACK, request),
      c.segment(T0 + 60_000, false, ACK, bytes(1000)),
      c.segment(T0 + 70_000, false, PSH | ACK, bytes(500)),
      c.segment(T0 + 80_000, true, ACK),
      ...c.close(T0 + 100_000, 10_000),
    ];
    const t = table();
    const records = feed(t, packets);
    expect(records).toHaveLength(1);
    const r = records[0];
    expect(r['@timestamp']).toBe(T0 / 1000);
    expect(r.src).toMatchObject({ ip: '10.0.0.5', port: 50000, address_type: 'private' });
    expect(r.dst).toMatchObject({ ip: '93.184.216.34', port: 80, address_type: 'public' });
    expect(r.app_name).toBe('HTTP');
    expect(r.transport).toEqual({ proto: 'TCP', proto_num: 6 });
    expect(r.tcp!.flags).toEqual(['SYN', 'ACK', 'PSH', 'FIN']);
    expect(r.meta.flipped).toBe(false);
    // client: SYN, ACK, request, ACK, FIN, last ACK; server: SYN-ACK, 2 data, FIN
    expect(r.stats.volume.packets).toEqual({ src: 6, dst: 4, total: 10 });
    expect(r.stats.volume.bytes.src.sum).toBe(6 * 40 + request.length);
    expect(r.stats.volume.bytes.dst.sum).toBe(4 * 40 + 1500);
    expect(r.stats.size.frame.sum).toBe(r.stats.size.packet.sum + 10 * 14);
    expect(r.stats.rtt_secs.net).toMatchObject({ count: 1, sum: 0.02 });
    expect(r.stats.timing.duration_secs.sum).toBe(0.12);
    expect(r.stats.timing.inter_arrival_secs).toMatchObject({ min_gap: 0.01, max_gap: 0.03 });
    expect(r.stats.timing.inter_arrival_secs.mean_gap).toBeCloseTo(0.12 / 9, 6);
    expect(r.stats.quality.retrans.packets).toBe(0);
    expect(r.tcp!.window_length!.count).toBe(10);
    expect(r.stats.size.payload_entropy.count).toBe(3);
    expect(r.path[0].sensor).toEqual(SENSOR);
    expect(r.meta.tags).toEqual(['site-a']);
    expect(r.key).toMatch(/^[0-9a-f]{16}$/);
    expect(t.stats()).toMatchObject({ active: 0, flows: 1, records: 1 });
  });

  it('emits a refused connection (SYN, RST-ACK) once the linger has passed', () => {
    const c = new TcpConversation(web);
    const t = table({ tcpLingerSecs: 1 });
    expect(feed(t, [c.segment(T0, true, SYN), c.segment(T0 + 1000, false, RST | ACK)])).toEqual([]);
    expect(t.advance(T0 + 0.5 * SEC)).toEqual([]);
    const [r] = valid(t.advance(T0 + 1001 + SEC));
    expect(r.tcp!.flags).toEqual(['SYN', 'ACK', 'RST']);
    expect(r.stats.volume.packets).toEqual({ src: 1, dst: 1, total: 2 });
  });

  it('waits the linger for a last ACK that does not come after both FINs', () => {
    const c = new TcpConversation(web);
    const packets = [...c.handshake(T0, 1000), ...c.close(T0 + 5000, 1000).slice(0, 2)];
    const t = table({ tcpLingerSecs: 2 });
    expect(feed(t, packets)).toEqual([]);
    expect(t.advance(T0 + 6000 + 1.9 * SEC)).toEqual([]);
    const [r] = valid(t.advance(T0 + 6000 + 2 * SEC));
    expect(r.tcp!.flags).toEqual(['SYN', 'ACK', 'FIN']);
    expect(r.meta['@ingest_time']).toBe((T0 + 6000 + 2 * SEC) / 1000);
  });

  it('counts a segment whose sequence range was already sent as a retransmission', () => {
    const c = new TcpConversation(web);
    const t = table();
    const handshake = c.handshake(T0, 20_000);
    const data = c.segment(T0 + 30_000, true, PSH | ACK, bytes(100));
    const again = { ...data, tsMicros: T0 + 230_000 };
    const more = c.segment(T0 + 240_000, true, PSH | ACK, bytes(50));
    feed(t, [...handshake, data, again, more]);
    const [r] = valid(t.flush());
    expect(r.stats.quality.retrans).toEqual({ packets: 1, bytes: 140 });
    expect(r.tcp!.flags).toEqual(['SYN', 'ACK', 'PSH']);
  });

  it('makes the receiver of a SYN-ACK seen first the initiator', () => {
    const c = new TcpConversation(web);
    const [, synAck, ack] = c.handshake(T0, 20_000);
    const t = table();
    feed(t, [synAck, ack]);
    const [r] = valid(t.flush());
    expect(r.src).toMatchObject({ ip: '10.0.0.5', port: 50000 });
    expect(r.dst).toMatchObject({ ip: '93.184.216.34', port: 80 });
    expect(r.meta.flipped).toBe(true);
    expect(r.stats.volume.packets).toEqual({ src: 1, dst: 1, total: 2 });
    expect(r.stats.rtt_secs.net.count).toBe(0);
  });

  it('takes a mid-stream packet from a service port to an ephemeral one as coming from the server', () => {
    const t = table();
    feed(t, [tcpPacket(T0, reversed(web), ACK, 9, 9, bytes(10)), tcpPacket(T0 + 100, web, ACK, 9, 19)]);
    const [r] = valid(t.flush());
    expect(r.src.port).toBe(50000);
    expect(r.dst.port).toBe(80);
    expect(r.meta.flipped).toBe(true);
    expect(r.stats.volume.packets.dst).toBe(1);
  });

  it('starts a new record when a new SYN reuses the ports of an ended connection', () => {
    const first = new TcpConversation(web);
    const second = new TcpConversation(web, 90_000, 7000);
    const t = table({ tcpLingerSecs: 5 });
    const out = feed(t, [first.segment(T0, true, SYN), first.segment(T0 + 10, false, RST | ACK), ...second.handshake(T0 + 1000, 100)]);
    expect(out).toHaveLength(1);
    expect(out[0].tcp!.flags).toEqual(['SYN', 'ACK', 'RST']);
    const [next] = valid(t.flush());
    expect(next.stats.volume.packets.total).toBe(3);
    expect(next['@timestamp']).toBe(Math.floor((T0 + 1000) / 1000));
  });

  it('turns a SYN scan of many ports into one small record per port', () => {
    const scanner = '10.0.0.66';
    const target = '10.0.0.9';
    const t = table();
    const packets: DecodedPacket[] = [];
    for (let port = 1; port <= 1000; port++) {
      const probe = { src: scanner, dst: target, srcPort: 40000, dstPort: port };
      const ts = T0 + port * 100;
      packets.push(tcpPacket(ts, probe, SYN, 77, 0));
      // Port 22 is open: SYN-ACK, then the scanner resets; the rest are closed.
      if (port === 22) packets.push(tcpPacket(ts + 10, reversed(probe), SYN | ACK, 500, 78), tcpPacket(ts + 20, probe, RST, 78, 0));
      else packets.push(tcpPacket(ts + 10, reversed(probe), RST | ACK, 0, 78));
    }
    const records = [...feed(t, packets), ...valid(t.advance(T0 + 2 * SEC))];
    expect(records).toHaveLength(1000);
    expect(new Set(records.map((r) => r.dst.port)).size).toBe(1000);
    expect(records.every((r) => r.src.ip === scanner && r.stats.volume.packets.src >= 1 && r.stats.volume.packets.total <= 3)).toBe(true);
    const ssh = records.find((r) => r.dst.port === 22)!;
    expect(ssh.app_name).toBe('SSH');
    expect(ssh.stats.volume.packets).toEqual({ src: 2, dst: 1, total: 3 });
    expect(t.stats().active).toBe(0);
  });
});

describe('UDP and ICMP', () => {
  it('pairs a DNS query with its answer and emits the flow as soon as the answer is seen', () => {
    const dns: Ends = { src: '10.0.0.5', dst: '9.9.9.9', srcPort: 53124, dstPort: 53 };
    const t = table({ idleTimeoutSecs: 30 });
    const [r] = feed(t, [udpPacket(T0, dns, bytes(40)), udpPacket(T0 + 15_000, reversed(dns), bytes(120))]);
    expect(r.app_name).toBe('DNS');
    expect(r.transport).toEqual({ proto: 'UDP', proto_num: 17 });
    expect(r.src).toMatchObject({ ip: '10.0.0.5', port: 53124 });
    expect(r.stats.volume.bytes.src.sum).toBe(20 + 8 + 40);
    expect(r.stats.volume.bytes.dst.sum).toBe(20 + 8 + 120);
    expect(r.tcp).toBeUndefined();
    expect(r.meta['@ingest_time']).toBe((T0 + 15_000) / 1000);
    expect(t.stats()).toMatchObject({ active: 0, records: 1 });
  });

  it('makes one record per question when a client asks many from one socket (a DNS tunnel)', () => {
    const dns: Ends = { src: '10.0.0.5', dst: '9.9.9.9', srcPort: 41000, dstPort: 53 };
    const names = ['paaaaaa0.tun.example', 'pbbbbbb1.tun.example', 'pcccccc2.tun.example'];
    const t = table({ inspectors: [inspectPayload] });
    const packets = names.flatMap((name, i) => [
      udpPacket(T0 + i * SEC, dns, dnsQuestion(i, name)),
      udpPacket(T0 + i * SEC + 2_000, reversed(dns), dnsQuestion(i, name, true)),
    ]);
    const records = feed(t, packets);
    expect(records.map((r) => r.dns?.rrname)).toEqual(names);
    expect(records.map((r) => r.stats.volume.packets)).toEqual(names.map(() => ({ src: 1, dst: 1, total: 2 })));
    // A question still unanswered stays open, and leaves after the idle timeout as before.
    t.add(udpPacket(T0 + 5 * SEC, dns, dnsQuestion(9, 'pdddddd3.tun.example')));
    expect(t.advance(T0 + 6 * SEC)).toEqual([]);
    expect(valid(t.advance(T0 + 36 * SEC)).map((r) => r.dns?.rrname)).toEqual(['pdddddd3.tun.example']);
  });

  it('keeps other UDP conversations whole across answers', () => {
    const ntp: Ends = { src: '10.0.0.5', dst: '9.9.9.9', srcPort: 123, dstPort: 123 };
    const t = table();
    expect(feed(t, [udpPacket(T0, ntp, bytes(48)), udpPacket(T0 + 5_000, reversed(ntp), bytes(48)), udpPacket(T0 + SEC, ntp, bytes(48))])).toEqual([]);
    expect(t.stats().active).toBe(1);
  });

  it('meets ICMP echo requests and replies in one flow, IPv4 and IPv6', () => {
    const v4: Ends = { src: '10.0.0.5', dst: '8.8.8.8', srcPort: 0, dstPort: 0 };
    const v6: Ends = { src: 'fd00::5', dst: '2001:db8::1', srcPort: 0, dstPort: 0 };
    const t = table();
    feed(t, [
      icmpPacket(T0, v4, 8, 0),
      icmpPacket(T0 + 5000, reversed(v4), 0, 0),
      icmpPacket(T0 + SEC, v4, 8, 0),
      icmpPacket(T0 + SEC + 5000, reversed(v4), 0, 0),
      icmpPacket(T0, v6, 128, 0),
      icmpPacket(T0 + 3000, reversed(v6), 129, 0),
      icmpPacket(T0 + 2 * SEC, reversed(v4), 3, 1),
    ]);
    const records = valid(t.flush());
    expect(records).toHaveLength(3);
    const [echo4, echo6, unreachable] = records;
    expect(echo4.transport).toEqual({ proto: 'ICMP', proto_num: 1 });
    expect(echo4.icmp).toEqual({ type: 8, type_map: 'echo-request', code: 0 });
    expect(echo4.dst.port).toBe(8 * 256);
    expect(echo4.stats.volume.packets).toEqual({ src: 2, dst: 2, total: 4 });
    expect(echo6.ip.version).toBe(6);
    expect(echo6.transport).toEqual({ proto: 'IPv6-ICMP', proto_num: 58 });
    expect(echo6.src).toMatchObject({ ip: 'fd00::5', address_type: 'private' });
    expect(echo6.dst.address_type).toBe('public');
    expect(echo6.stats.volume.packets).toEqual({ src: 1, dst: 1, total: 2 });
    expect(unreachable.icmp).toEqual({ type: 3, type_map: 'destination-unreachable', code: 1 });
    expect(unreachable.src.ip).toBe('8.8.8.8');
  });

  it('makes the receiver of an echo reply seen first the initiator', () => {
    const t = table();
    feed(t, [icmpPacket(T0, { src: '8.8.8.8', dst: '10.0.0.5', srcPort: 0, dstPort: 0 }, 0, 0)]);
    const [r] = valid(t.flush());
    expect(r.src.ip).toBe('10.0.0.5');
    expect(r.meta.flipped).toBe(true);
    expect(r.stats.volume.packets).toEqual({ src: 0, dst: 1, total: 1 });
  });
});

describe('fragments', () => {
  it('counts later fragments in the flow of their first fragment, and drops those without one', () => {
    const ends: Ends = { src: '10.0.0.5', dst: '10.0.0.9', srcPort: 5000, dstPort: 6000 };
    const first = { ...udpPacket(T0, ends, bytes(1472)), fragment: 'first' as const, fragmentId: 42 };
    const later = (ts: number, id: number): DecodedPacket => ({
      ...udpPacket(ts, ends, bytes(800)),
      srcPort: undefined,
      dstPort: undefined,
      fragment: 'later',
      fragmentId: id,
    });
    const t = table();
    feed(t, [first, later(T0 + 10, 42), later(T0 + 20, 42), later(T0 + 30, 43)]);
    const [r] = valid(t.flush());
    expect(r.stats.quality.fragments).toBe(3);
    expect(r.stats.volume.packets).toEqual({ src: 3, dst: 0, total: 3 });
    expect(t.stats()).toMatchObject({ fragments: 4, dropped: { fragment_without_first: 1 } });
  });
});

describe('timeouts and bounds', () => {
  it('cuts a long flow at the active timeout into records without FIN, then the last with it', () => {
    const c = new TcpConversation(web);
    const packets = [...c.handshake(T0, 10_000)];
    for (let s = 10; s < 720; s += 10) packets.push(c.segment(T0 + s * SEC, true, PSH | ACK, bytes(100)));
    packets.push(...c.close(T0 + 720 * SEC, 1000));
    const t = table({ activeTimeoutSecs: 300 });
    const records = feed(t, packets);
    expect(records).toHaveLength(3);
    expect(records.map((r) => r['@timestamp'])).toEqual([T0 / 1000, T0 / 1000 + 300_000, T0 / 1000 + 600_000]);
    expect(records[0].tcp!.flags).toEqual(['SYN', 'ACK', 'PSH']);
    expect(records[1].tcp!.flags).toEqual(['ACK', 'PSH']);
    expect(records[2].tcp!.flags).toEqual(['ACK', 'PSH', 'FIN']);
    expect(records[0].stats.timing.duration_secs.sum).toBe(290);
    expect(records.reduce((n, r) => n + r.stats.volume.packets.total, 0)).toBe(packets.length);
    expect(new Set(records.map((r) => r.session_key)).size).toBe(1);
    expect(t.stats().activeCuts).toBe(2);
  });

  it('emits the least recently seen flow early when the table is full, and counts it', () => {
    const t = table({ maxFlows: 3 });
    const flows = [1, 2, 3, 4, 5].map((i) => udpPacket(T0 + i * SEC, { src: '10.0.0.5', dst: '10.0.0.9', srcPort: 40000 + i, dstPort: 9999 }, bytes(10)));
    const touch = udpPacket(T0 + 3.5 * SEC, { src: '10.0.0.5', dst: '10.0.0.9', srcPort: 40001, dstPort: 9999 }, bytes(10));
    const out: FlowRecord[] = [];
    for (const p of [flows[0], flows[1], flows[2], touch, flows[3], flows[4]]) {
      t.add(p);
      out.push(...t.advance(p.tsMicros));
    }
    valid(out);
    expect(out.map((r) => r.src.port)).toEqual([40002, 40003]);
    expect(t.stats()).toMatchObject({ evicted: 2, active: 3 });
  });

  it('holds at most 100,000 flows by default, evicting the least recently seen beyond them', () => {
    const t = table();
    const flowAt = (i: number, ts: number) =>
      udpPacket(ts, { src: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, dst: '198.18.0.1', srcPort: 40000, dstPort: 9999 }, bytes(10));
    const out: FlowRecord[] = [];
    for (let i = 0; i < 100_001; i++) {
      t.add(flowAt(i, T0 + i));
      out.push(...t.advance(T0 + i));
    }
    expect(t.stats()).toMatchObject({ flows: 100_001, evicted: 1, active: 100_000 });
    expect(valid(out).map((r) => r.src.ip)).toEqual(['10.0.0.0']);
    // Every held flow is still found: a second packet of each joins its flow rather than opening one.
    for (let i = 1; i < 100_001; i++) t.add(flowAt(i, T0 + 200_000 + i));
    expect(t.stats()).toMatchObject({ flows: 100_001, evicted: 1, active: 100_000 });
    expect(t.flush().every((r) => r.stats.volume.packets.total === 2)).toBe(true);
  });

  it('keeps VLANs apart and names them in the path', () => {
    const t = table();
    feed(t, [udpPacket(T0, { ...web, vlan: 10 }, bytes(5)), udpPacket(T0, { ...web, vlan: 20 }, bytes(5))]);
    const records = valid(t.flush());
    expect(records.map((r) => r.path[0].src_vlan)).toEqual([10, 20]);
    expect(records[0].key).not.toBe(records[1].key);
  });

  it('accounts for every packet of a random mix (any flags, fragments, out-of-order times) in valid records', () => {
    let x = 7;
    const rand = (n: number): number => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x % n);
    const hosts = ['10.0.0.1', '10.0.0.2', '192.0.2.7', 'fd00::1', 'fd00::2'];
    const t = table({ maxFlows: 20, idleTimeoutSecs: 5, activeTimeoutSecs: 20, maxFragmentDatagrams: 4 });
    const out: FlowRecord[] = [];
    let ts = T0;
    for (let i = 0; i < 5000; i++) {
      ts += rand(400_000) - 50_000;
      const v6 = rand(4) === 0;
      const pick = (): string => hosts[v6 ? 3 + rand(2) : rand(3)];
      const ends: Ends = { src: pick(), dst: pick(), srcPort: [22, 53, 80, 40000, 40001][rand(5)], dstPort: [22, 53, 80, 40000, 40001][rand(5)] };
      if (rand(3) === 0) ends.vlan = rand(2);
      const kind = rand(10);
      let p =
        kind < 5
          ? tcpPacket(ts, ends, rand(256), rand(2) === 0 ? rand(4096) : 4294967295 - rand(4096), rand(4096), bytes(rand(3) * 50))
          : kind < 8
            ? udpPacket(ts, ends, bytes(rand(100)))
            : icmpPacket(ts, ends, v6 ? [128, 129, 1][rand(3)] : [8, 0, 3][rand(3)], rand(2));
      if (rand(8) === 0) p = { ...p, fragment: 'first', fragmentId: rand(6) };
      else if (rand(8) === 0) p = { ...p, fragment: 'later', fragmentId: rand(6), srcPort: undefined, dstPort: undefined, tcp: undefined };
      t.add(p);
      out.push(...t.advance(ts));
    }
    out.push(...t.flush());
    valid(out);
    const counted = out.reduce((n, r) => n + r.stats.volume.packets.total, 0);
    const s = t.stats();
    expect(counted + (s.dropped.fragment_without_first ?? 0)).toBe(5000);
    expect(s.records).toBe(out.length);
    expect(s.evicted).toBeGreaterThan(0);
    expect(s.active).toBe(0);
  });

  it('gives the same records for the same packets', () => {
    const run = (): FlowRecord[] => {
      const c = new TcpConversation(web);
      const t = table();
      return [...feed(t, [...c.handshake(T0, 5000), c.segment(T0 + 9000, true, PSH | ACK, bytes(300, 7))]), ...t.flush()];
    };
    expect(run()).toEqual(run());
  });
});

describe('payload', () => {
  it('measures payload entropy: high for random bytes, low for text', () => {
    let x = 12345;
    const random = Uint8Array.from({ length: 1400 }, () => ((x = Math.imul(x, 1103515245) + 12345), (x >>> 16) & 255));
    const t = table();
    feed(t, [udpPacket(T0, web, random), udpPacket(T0 + 10, reversed(web), text('hello hello hello hello hello hello'))]);
    const [r] = valid(t.flush());
    const e = r.stats.size.payload_entropy;
    expect(e.count).toBe(2);
    const high = (e.sum + Math.sqrt(2 * e.sum_squares - e.sum * e.sum)) / 2;
    expect(high).toBeGreaterThan(7);
    expect(e.sum - high).toBeLessThan(3);
  });

  it("merges inspectors' hints (first value per field wins) from the first packets of each direction only", () => {
    const seen: boolean[] = [];
    const sni: PayloadInspector = (_p, fromInitiator) => {
      seen.push(fromInitiator);
      return fromInitiator
        ? { app_name: 'HTTPS', tls: { sni: seen.length === 1 ? 'a.example' : 'b.example', version: '' } }
        : { tls: { version: 'TLS 1.3', alpn: ['h2'] } };
    };
    const none: PayloadInspector = () => undefined;
    const ends: Ends = { ...web, dstPort: 8443 };
    const c = new TcpConversation(ends);
    const handshake = c.handshake(T0, 10_000);
    const data = Array.from({ length: 6 }, (_, i) => c.segment(T0 + 100_000 + i * 1000, i % 2 === 0, PSH | ACK, bytes(200)));
    const t = table({ inspectors: [sni, none], inspectPerDirection: 2 });
    feed(t, [...handshake, ...data]);
    const [r] = valid(t.flush());
    expect(seen).toEqual([true, false, true, false]);
    expect(r.app_name).toBe('HTTPS');
    expect(r.tls).toEqual({ sni: 'a.example', version: 'TLS 1.3', alpn: ['h2'] });
    expect(r.dst.ctx).toEqual({ fqdn: 'a.example' });
  });

  it('shows an inspector only the payloads it says it reads, each other one still counted against its direction', () => {
    const shown: string[] = [];
    const reads: PayloadInspector['reads'] = { ports: [7], prefixes: [{ bytes: [...text('HI')], minLength: 3, initiatorOnly: true }] };
    const greeter: PayloadInspector = Object.assign(
      (p: InspectedPacket, fromInitiator: boolean) => {
        shown.push(`${fromInitiator ? '>' : '<'}${new TextDecoder().decode(p.data.subarray(p.payloadStart, p.payloadEnd))}`);
        return undefined;
      },
      { reads },
    );
    const c = new TcpConversation({ ...web, dstPort: 8080 });
    // Initiator: too short, read, not a prefix, then read but past the two inspected; responder: prefixed but not the initiator.
    const payloads: Array<[boolean, string]> = [
      [true, 'HI'],
      [true, 'HI!'],
      [true, 'xHI'],
      [false, 'HI?'],
      [true, 'HI.'],
    ];
    const t = table({ inspectors: [greeter], inspectPerDirection: 3 });
    feed(t, [...c.handshake(T0, 1000), ...payloads.map(([fromClient, payload], i) => c.segment(T0 + 10_000 + i * 1000, fromClient, PSH | ACK, text(payload)))]);
    expect(shown).toEqual(['>HI!']);
    // Its port: every payload to or from it, of TCP or UDP.
    const echo: Ends = { src: '10.0.0.5', dst: '10.0.0.1', srcPort: 41000, dstPort: 7 };
    feed(t, [udpPacket(T0 + SEC, echo, text('x')), udpPacket(T0 + SEC + 1, reversed(echo), text('y'))]);
    expect(shown).toEqual(['>HI!', '>x', '<y']);
    // An inspector beside it that does not say what it reads is shown every payload inspected.
    const all: string[] = [];
    const any: PayloadInspector = (p) => void all.push(new TextDecoder().decode(p.data.subarray(p.payloadStart, p.payloadEnd)));
    const both = table({ inspectors: [greeter, any], inspectPerDirection: 3 });
    const d = new TcpConversation({ ...web, srcPort: 50001, dstPort: 8080 });
    feed(both, [
      ...d.handshake(T0, 1000),
      ...payloads.map(([fromClient, payload], i) => d.segment(T0 + 10_000 + i * 1000, fromClient, PSH | ACK, text(payload))),
    ]);
    expect(all).toEqual(['HI', 'HI!', 'xHI', 'HI?']);
  });

  it('takes the TLS version the responder negotiated over the one the initiator offered', () => {
    const hello: PayloadInspector = (_p, fromInitiator) =>
      fromInitiator ? { app_name: 'HTTPS', tls: { sni: 'old.example', version: 'TLS 1.3' } } : { tls: { version: 'TLS 1.2', sni: 'ignored.example' } };
    const c = new TcpConversation({ ...web, dstPort: 8443 });
    const t = table({ inspectors: [hello] });
    feed(t, [...c.handshake(T0, 10_000), c.segment(T0 + 100_000, true, PSH | ACK, bytes(200)), c.segment(T0 + 101_000, false, PSH | ACK, bytes(200))]);
    const [r] = valid(t.flush());
    expect(r.tls).toEqual({ sni: 'old.example', version: 'TLS 1.2' });
  });

  it("writes a DNS inspector's question and answer into the record", () => {
    const dnsHints = (_p: InspectedPacket, fromInitiator: boolean): AppHints =>
      fromInitiator
        ? { app_name: 'DNS', dns: { rrname: 'example.com', rrtype: 'A' } }
        : { dns: { rrname: 'example.com', rrtype: 'A', rcode: 'NOERROR', answers: ['93.184.216.34'] } };
    const ends: Ends = { src: '10.0.0.5', dst: '10.0.0.1', srcPort: 41000, dstPort: 5353 };
    const t = table({ inspectors: [dnsHints] });
    feed(t, [udpPacket(T0, ends, bytes(30)), udpPacket(T0 + 500, reversed(ends), bytes(46))]);
    const [r] = valid(t.flush());
    expect(r.app_name).toBe('DNS');
    expect(r.dns).toEqual({ rrname: 'example.com', rrtype: 'A', rcode: 'NOERROR', answers: ['93.184.216.34'] });
  });
});

describe("the records' keys", () => {
  it('are one per flow, and one session key per client, server, server port and protocol', () => {
    const t = table({ maxFlows: 5_000 });
    let x = 0x2545f491;
    const random = () => (x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0);
    const octets = () => [random() >>> 24, (random() >>> 16) & 255, (random() >>> 8) & 255, random() >>> 24];
    const address = (v6: boolean) => (v6 ? `2001:db8:${(random() >>> 16).toString(16)}::${(random() >>> 16).toString(16)}` : octets().join('.'));
    for (let i = 0; i < 3_000; i++) {
      const v6 = i % 4 === 1;
      const ends: Ends = { src: address(v6), dst: address(v6), srcPort: 1024 + (random() % 60_000), dstPort: 1 + (random() % 1023) };
      if (i % 3 === 0) ends.vlan = i % 4096;
      const ts = T0 + i * 1_000;
      t.add(i % 5 === 0 && !v6 ? icmpPacket(ts, ends, 8, 0) : i % 2 === 0 ? udpPacket(ts, ends, bytes(10)) : tcpPacket(ts, ends, SYN, 1, 0));
    }
    // One client's connections to one service, from other ports, on another VLAN, to another port.
    const service: Ends = { src: '10.1.2.3', dst: '192.0.2.80', srcPort: 40_000, dstPort: 443 };
    const sessions = [service, { ...service, srcPort: 40_001 }, { ...service, srcPort: 40_002, vlan: 7 }, { ...service, dstPort: 8443 }];
    sessions.forEach((ends, i) => t.add(tcpPacket(T0 + 4_000_000 + i, ends, SYN, 1, 0)));
    const records = t.flush();
    expect(records).toHaveLength(3_004);
    expect(new Set(records.map((r) => r.key)).size).toBe(3_004);
    const randomFlows = records.filter((r) => r.src.ip !== service.src);
    expect(new Set(randomFlows.map((r) => r.session_key)).size).toBe(3_000);
    const [first, second, tagged, otherPort] = sessions.map((ends) =>
      records.find((r) => r.src.port === ends.srcPort && r.dst.port === ends.dstPort && r.src.ip === ends.src)!,
    );
    expect(second.session_key).toBe(first.session_key);
    expect(tagged.session_key).toBe(first.session_key);
    expect(otherPort.session_key).not.toBe(first.session_key);
    expect(first.key).toMatch(/^[0-9a-f]{16}$/);
  });
});
