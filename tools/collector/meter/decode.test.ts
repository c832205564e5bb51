// The decoder on real bytes: Debian's tcpdump captures TCP, UDP and ICMP the test sends over
// 127.0.0.1 and ::1, as Ethernet (lo), Linux cooked v2 (any) and v1 (any -y LINUX_SLL); fragments
// come from a network namespace whose loopback MTU is 1280. What no Debian tool here can make
// (VLAN tags: this kernel has no 8021q; raw IP and BSD loopback framings; IPv6 extension headers
// other than fragment) is built from the specifications around real IP packets, and says so.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureReader } from './capture.js';
import { decodeFrame, decodeHeaders } from './decode.js';
import { PacketHeaders, TcpFlag, type CapturedFrame, type DecodedPacket, type DropCounts } from './packet.js';
import { listenOnLoopback, ping, startTcpdump, type LoopbackPeers } from './testing/tcpdump.js';

function framesOf(bytes: Uint8Array): { frames: CapturedFrame[]; drops: DropCounts } {
  const reader = new CaptureReader();
  const frames = reader.push(bytes);
  reader.end();
  return { frames, drops: reader.drops };
}

function decodeAll(frames: CapturedFrame[]): { packets: DecodedPacket[]; drops: DropCounts } {
  const drops: DropCounts = {};
  const packets = frames.map((f) => decodeFrame(f, drops)).filter((p): p is DecodedPacket => p !== undefined);
  return { packets, drops };
}

/** What a packet says, without the link layer: the same for every framing of one capture. */
const summary = (p: DecodedPacket) => ({
  src: p.src,
  dst: p.dst,
  protocol: p.protocol,
  srcPort: p.srcPort,
  dstPort: p.dstPort,
  flags: p.tcp?.flags,
  icmp: p.icmp,
  ipLength: p.ipLength,
  payloadLength: p.payloadLength,
  fragment: p.fragment,
});

const REQUEST = 'hello';
const RESPONSE = 'world!';
const UDP_SIZES = [10, 200, 3000];
const PING_SIZE = 123;

const captures = new Map<string, Uint8Array>();
const droppedByKernel = new Map<string, number>();
let v4: LoopbackPeers;
let v6: LoopbackPeers;

beforeAll(async () => {
  v4 = await listenOnLoopback('127.0.0.1');
  v6 = await listenOnLoopback('::1');
  // Only this test's ports and ping size: other tests may use the loopback at the same time.
  const ports = [v4.tcpPort, v4.udpPort, v6.tcpPort, v6.udpPort].map((p) => `port ${p}`).join(' or ');
  const filter = `${ports} or (icmp and ip[2:2] = ${20 + 8 + PING_SIZE}) or (icmp6 and ip6[4:2] = ${8 + PING_SIZE})`;
  const running = {
    ethernet: await startTcpdump({ iface: 'lo', filter }),
    sll2: await startTcpdump({ iface: 'any', filter, args: ['--time-stamp-precision', 'nano'] }),
    sll: await startTcpdump({ iface: 'any', filter, args: ['-y', 'LINUX_SLL'] }),
  };
  for (const peers of [v4, v6]) {
    await peers.exchangeTcp(REQUEST, RESPONSE);
    await peers.sendUdp(UDP_SIZES);
    await ping(peers.host, PING_SIZE, 2);
  }
  for (const [name, capture] of Object.entries(running)) {
    const { bytes, droppedByKernel: dropped } = await capture.stop();
    captures.set(name, bytes);
    droppedByKernel.set(name, dropped);
  }
});
afterAll(async () => {
  await v4?.close();
  await v6?.close();
});

describe('decoding real loopback captures', () => {
  it('reads each capture whole, with the link type tcpdump names', () => {
    // The exact counts below need every packet of the Ethernet capture.
    expect(droppedByKernel.get('ethernet'), 'tcpdump -i lo reported kernel drops').toBe(0);
    const linkTypes = Object.fromEntries(
      [...captures].map(([name, bytes]) => {
        const { frames, drops } = framesOf(bytes);
        expect(drops).toEqual({});
        return [name, [...new Set(frames.map((f) => f.linkType))]];
      }),
    );
    expect(linkTypes).toEqual({ ethernet: [1], sll2: [276], sll: [113] });
  });

  it('decodes TCP over IPv4 and IPv6: handshake, data each way, a FIN each way', () => {
    const { packets, drops } = decodeAll(framesOf(captures.get('ethernet')!).frames);
    expect(drops).toEqual({});
    for (const peers of [v4, v6]) {
      const tcp = packets.filter((p) => p.protocol === 6 && (p.srcPort === peers.tcpPort || p.dstPort === peers.tcpPort));
      const [syn, synAck, ack] = tcp;
      expect(syn).toMatchObject({ src: peers.host, dst: peers.host, dstPort: peers.tcpPort, ipVersion: peers.host === '::1' ? 6 : 4, fragment: 'none' });
      expect(syn.tcp!.flags).toBe(TcpFlag.SYN);
      expect(synAck.tcp!.flags).toBe(TcpFlag.SYN | TcpFlag.ACK);
      expect(synAck.srcPort).toBe(peers.tcpPort);
      expect(synAck.tcp!.ack).toBe((syn.tcp!.seq + 1) >>> 0);
      expect(ack.tcp!.ack).toBe((synAck.tcp!.seq + 1) >>> 0);
      const client = syn.srcPort;
      const text = (from: number | undefined) =>
        tcp
          .filter((p) => p.srcPort === from)
          .map((p) => Buffer.from(p.payload).toString())
          .join('');
      expect(text(client)).toBe(REQUEST);
      expect(text(peers.tcpPort)).toBe(RESPONSE);
      const fins = tcp.filter((p) => p.tcp!.flags & TcpFlag.FIN).map((p) => p.srcPort);
      expect(fins.sort()).toEqual([client, peers.tcpPort].sort());
      const ipHeader = peers.host === '::1' ? 40 : 20;
      for (const p of tcp) {
        expect(p.payloadLength).toBe(p.ipLength - ipHeader - p.tcp!.headerLength);
        expect(p.wireLength).toBe(14 + p.ipLength);
      }
    }
  });

  it('decodes UDP and ICMP/ICMPv6 with exact lengths', () => {
    const { packets } = decodeAll(framesOf(captures.get('ethernet')!).frames);
    for (const peers of [v4, v6]) {
      const ipHeader = peers.host === '::1' ? 40 : 20;
      const udp = packets.filter((p) => p.protocol === 17 && p.dstPort === peers.udpPort);
      expect(udp.map((p) => [p.src, p.dst, p.payloadLength, p.ipLength, p.payload.length])).toEqual(
        UDP_SIZES.map((n) => [peers.host, peers.host, n, ipHeader + 8 + n, n]),
      );
      const icmpProtocol = peers.host === '::1' ? 58 : 1;
      const icmp = packets.filter((p) => p.protocol === icmpProtocol && p.dst === peers.host);
      const [request, reply] = peers.host === '::1' ? [128, 129] : [8, 0];
      expect(icmp.map((p) => [p.icmp!.type, p.icmp!.code, p.payloadLength, p.ipLength])).toEqual(
        [request, reply, request, reply].map((type) => [type, 0, PING_SIZE, ipHeader + 8 + PING_SIZE]),
      );
    }
  });

  it('gives the same packets from Linux cooked v1 and v2 framings, nanosecond stamps rounded to microseconds', () => {
    const ethernet = decodeAll(framesOf(captures.get('ethernet')!).frames).packets;
    for (const name of ['sll', 'sll2']) {
      const { packets, drops } = decodeAll(framesOf(captures.get(name)!).frames);
      expect(drops).toEqual({});
      // The "any" device's ring sometimes overflows on this shared machine (tcpdump then reports
      // kernel drops, counting lo's outgoing copies too); every packet it did write must be the
      // Ethernet capture's next one, and without drops it wrote them all.
      if (droppedByKernel.get(name) === 0) expect(packets.length).toBe(ethernet.length);
      let next = 0;
      for (const p of packets) {
        while (next < ethernet.length && JSON.stringify(summary(ethernet[next])) !== JSON.stringify(summary(p))) next++;
        expect(next, `${name} packet ${JSON.stringify(summary(p))} not in the Ethernet capture`).toBeLessThan(ethernet.length);
        expect(Number.isInteger(p.tsMicros)).toBe(true);
        expect(Math.abs(p.tsMicros - ethernet[next].tsMicros)).toBeLessThan(50_000);
        next++;
      }
    }
  });
});

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('decoding real fragments (a network namespace with a 1280-byte loopback MTU; root only)', () => {
  const namespace = `meter-frag-${process.pid}`;
  const inNamespace = ['ip', 'netns', 'exec', namespace];
  let packets: DecodedPacket[] = [];

  beforeAll(async () => {
    execFileSync('ip', ['netns', 'add', namespace]);
    execFileSync(inNamespace[0], [...inNamespace.slice(1), 'ip', 'link', 'set', 'lo', 'up', 'mtu', '1280']);
    const capture = await startTcpdump({ iface: 'lo', filter: 'ip or ip6', wrapper: inNamespace });
    await ping('127.0.0.1', 3000, 1, inNamespace);
    await ping('::1', 3000, 1, inNamespace);
    packets = decodeAll(framesOf((await capture.stop()).bytes).frames).packets;
  });
  afterAll(() => {
    execFileSync('ip', ['netns', 'del', namespace]);
  });

  it('marks IPv4 fragments first and later, with the datagram id, and decodes ICMP only in the first', () => {
    const v4 = packets.filter((p) => p.ipVersion === 4);
    // 3008 bytes of ICMP in 1256 + 1256 + 496, for the request and again for the reply.
    expect(v4.map((p) => [p.fragment, p.payloadLength, p.icmp?.type])).toEqual([
      ['first', 1248, 8],
      ['later', 1256, undefined],
      ['later', 496, undefined],
      ['first', 1248, 0],
      ['later', 1256, undefined],
      ['later', 496, undefined],
    ]);
    expect(new Set(v4.slice(0, 3).map((p) => p.fragmentId)).size).toBe(1);
    expect(v4.every((p) => p.src === '127.0.0.1' && p.protocol === 1 && p.srcPort === undefined)).toBe(true);
  });

  it('walks the IPv6 fragment header: ICMPv6 in the first fragment, the rest marked later', () => {
    const v6 = packets.filter((p) => p.ipVersion === 6);
    expect(v6.map((p) => [p.fragment, p.protocol, p.payloadLength, p.icmp?.type])).toEqual([
      ['first', 58, 1224, 128],
      ['later', 58, 1232, undefined],
      ['later', 58, 544, undefined],
      ['first', 58, 1224, 129],
      ['later', 58, 1232, undefined],
      ['later', 58, 544, undefined],
    ]);
    expect(v6[0].fragmentId).toBe(v6[2].fragmentId);
    expect(v6[0].ipLength).toBe(40 + 8 + 1232);
  });
});

describe('framings and headers built from the specifications around real IP packets', () => {
  /** The IP bytes of the real Ethernet capture's first packet matching `pick`. */
  function realIp(pick: (p: DecodedPacket) => boolean): Uint8Array {
    const frame = framesOf(captures.get('ethernet')!).frames.find((f) => {
      const p = decodeFrame(f, {});
      return p !== undefined && pick(p);
    })!;
    return frame.data.subarray(14);
  }
  const udp4 = () => realIp((p) => p.ipVersion === 4 && p.protocol === 17);
  const syn6 = () => realIp((p) => p.ipVersion === 6 && p.tcp?.flags === TcpFlag.SYN);
  const ethernet = (etherType: number, ip: Uint8Array, tags: [number, number][] = []) =>
    Buffer.concat([
      Buffer.alloc(12, 0x02),
      ...tags.map(([tpid, vid]) => Buffer.from([tpid >> 8, tpid & 0xff, vid >> 8, vid & 0xff])),
      Buffer.from([etherType >> 8, etherType & 0xff]),
      ip,
    ]);
  const frame = (linkType: number, data: Uint8Array): CapturedFrame => ({ tsMicros: 1, linkType, wireLength: data.length, data });
  const decode = (f: CapturedFrame) => {
    const drops: DropCounts = {};
    return { packet: decodeFrame(f, drops), drops };
  };
  const expectSame = (f: CapturedFrame, ip: Uint8Array) => {
    const { packet, drops } = decode(f);
    expect(drops).toEqual({});
    expect(summary(packet!)).toEqual(summary(decodeFrame(frame(1, ethernet(ip[0] >> 4 === 6 ? 0x86dd : 0x0800, ip)), {})!));
    return packet!;
  };

  it('keeps the outer VLAN id of 802.1Q and 802.1ad (QinQ) tags', () => {
    const ip = udp4();
    expect(expectSame(frame(1, ethernet(0x0800, ip, [[0x8100, 7]])), ip).vlan).toBe(7);
    expect(
      expectSame(
        frame(
          1,
          ethernet(0x0800, ip, [
            [0x88a8, 0x2000 | 100],
            [0x8100, 7],
          ]),
        ),
        ip,
      ).vlan,
    ).toBe(100);
    const tooMany = Array.from({ length: 5 }, (): [number, number] => [0x8100, 1]);
    expect(decode(frame(1, ethernet(0x0800, ip, tooMany))).drops).toEqual({ too_many_vlan_tags: 1 });
  });

  it('reads raw IP (101, 12, 14) and BSD loopback in either byte order', () => {
    const [ip4, ip6] = [udp4(), syn6()];
    for (const type of [101, 12]) expectSame(frame(type, ip4), ip4);
    for (const type of [101, 14]) expectSame(frame(type, ip6), ip6);
    expectSame(frame(0, Buffer.concat([Buffer.from([2, 0, 0, 0]), ip4])), ip4);
    expectSame(frame(0, Buffer.concat([Buffer.from([0, 0, 0, 2]), ip4])), ip4);
    for (const family of [24, 28, 30]) expectSame(frame(0, Buffer.concat([Buffer.from([family, 0, 0, 0]), ip6])), ip6);
    expect(decode(frame(0, Buffer.concat([Buffer.from([7, 0, 0, 0]), ip4]))).drops).toEqual({ not_ip: 1 });
  });

  it('counts ARP as not IP and an unknown link type as unsupported', () => {
    expect(decode(frame(1, ethernet(0x0806, new Uint8Array(28)))).drops).toEqual({ not_ip: 1 });
    expect(decode(frame(147, udp4())).drops).toEqual({ unsupported_link_type: 1 });
  });

  it('skips IPv4 options and Ethernet padding', () => {
    const ip = udp4();
    const withOptions = Buffer.concat([ip.subarray(0, 20), Buffer.from([1, 1, 1, 0]), ip.subarray(20)]);
    withOptions[0] = 0x46;
    withOptions.writeUInt16BE(ip.length + 4, 2);
    const { packet } = decode(frame(1, ethernet(0x0800, withOptions)));
    expect(packet).toMatchObject({ ipLength: ip.length + 4, payloadLength: ip.length - 28, srcPort: decodeFrame(frame(101, ip), {})!.srcPort });
    const padded = decode(frame(1, Buffer.concat([ethernet(0x0800, ip), Buffer.alloc(30, 0xee)]))).packet!;
    expect(Buffer.from(padded.payload)).toEqual(Buffer.from(ip.subarray(28)));
  });

  it('walks hop-by-hop, destination options and routing headers to the transport', () => {
    const ip = syn6();
    const padN = [1, 4, 0, 0, 0, 0];
    const extensions = Buffer.from([60, 0, ...padN, 43, 0, ...padN, 6, 0, 4, 0, 0, 0, 0, 0]);
    const chained = Buffer.concat([ip.subarray(0, 40), extensions, ip.subarray(40)]);
    chained[6] = 0; // hop-by-hop first
    chained.writeUInt16BE(((ip[4] << 8) | ip[5]) + extensions.length, 4);
    const plain = decodeFrame(frame(101, ip), {})!;
    const { packet, drops } = decode(frame(101, chained));
    expect(drops).toEqual({});
    expect(packet).toMatchObject({
      protocol: 6,
      srcPort: plain.srcPort,
      dstPort: plain.dstPort,
      payloadLength: plain.payloadLength,
      ipLength: plain.ipLength + 24,
    });
    const endless = Buffer.concat([ip.subarray(0, 40), Buffer.alloc(8 * 9)]);
    for (let i = 0; i < 9; i++) endless[40 + 8 * i] = 60;
    endless[6] = 60;
    endless.writeUInt16BE(8 * 9, 4);
    expect(decode(frame(101, endless)).drops).toEqual({ too_many_ipv6_extensions: 1 });
  });

  it('counts IPv4 headers that cannot be', () => {
    const ip = Buffer.from(udp4());
    const shortIhl = Buffer.from(ip);
    shortIhl[0] = 0x44;
    const shortTotal = Buffer.from(ip);
    shortTotal.writeUInt16BE(19, 2);
    for (const bad of [shortIhl, shortTotal]) expect(decode(frame(1, ethernet(0x0800, bad))).drops).toEqual({ bad_ip_header: 1 });
    expect(decode(frame(1, ethernet(0x86dd, ip))).drops).toEqual({ bad_ip_header: 1 });
  });
});

describe('hostile frames', () => {
  const known = new Set([
    'truncated_link',
    'truncated_ip',
    'truncated_transport',
    'bad_ip_header',
    'bad_transport_header',
    'not_ip',
    'unsupported_link_type',
    'too_many_vlan_tags',
    'too_many_ipv6_extensions',
  ]);

  it('counts a real frame cut at every byte by the layer the cut falls in', () => {
    const frames = framesOf(captures.get('ethernet')!).frames;
    for (const f of frames) {
      const whole = decodeFrame(f, {})!;
      const ipHeader = whole.ipVersion === 4 ? 20 : 40;
      const transport = whole.tcp?.headerLength ?? 8;
      for (let cut = 0; cut < f.data.length; cut++) {
        const drops: DropCounts = {};
        const packet = decodeFrame({ ...f, data: f.data.subarray(0, cut) }, drops);
        const reason = cut < 14 ? 'truncated_link' : cut < 14 + ipHeader ? 'truncated_ip' : cut < 14 + ipHeader + transport ? 'truncated_transport' : undefined;
        if (reason === undefined) {
          expect([packet?.payloadLength, packet?.srcPort, packet?.payload.length]).toEqual([
            whole.payloadLength,
            whole.srcPort,
            cut - 14 - ipHeader - transport,
          ]);
        } else {
          expect(drops).toEqual({ [reason]: 1 });
        }
      }
    }
  });

  it('never throws on random frames of any link type, and counts every one it drops by a known reason', () => {
    let x = 12345;
    const next = () => {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      return x;
    };
    const drops: DropCounts = {};
    let decoded = 0;
    for (let i = 0; i < 20_000; i++) {
      const data = Uint8Array.from({ length: next() % 120 }, () => next() & 0xff);
      // Half the frames start as IP so that the random bytes reach the deeper layers.
      if (data.length > 0 && i % 2 === 0) data[0] = i % 4 === 0 ? 0x45 : 0x60;
      const linkType = [1, 113, 276, 101, 12, 14, 0, 7][i % 8];
      if (decodeFrame({ tsMicros: 0, linkType, wireLength: data.length, data }, drops)) decoded++;
    }
    expect(Object.keys(drops).filter((reason) => !known.has(reason))).toEqual([]);
    expect(decoded + Object.values(drops).reduce((a, b) => a + b, 0)).toBe(20_000);
  });

  it('gives an empty payload, never a negative one, when the frame ends inside an IPv6 extension header', () => {
    // Raw IPv6 claiming 64 payload bytes: a 16-byte hop-by-hop header (length field 1), then GRE;
    // the frame ends 8 bytes into the hop-by-hop header.
    const ip = new Uint8Array(48);
    ip[0] = 0x60;
    ip[5] = 64;
    ip[6] = 0; // hop-by-hop
    ip[40] = 47; // then GRE
    ip[41] = 1;
    const headers = new PacketHeaders();
    const drops: DropCounts = {};
    expect(decodeHeaders({ tsMicros: 1, linkType: 101, wireLength: 104, bytes: ip, start: 0, end: ip.length }, headers, drops)).toBe(true);
    expect([headers.protocol, headers.capturedPayload, headers.payloadLength]).toEqual([47, 0, 48]);
    expect(decodeFrame({ tsMicros: 1, linkType: 101, wireLength: 104, data: ip }, drops)!.payload.length).toBe(0);
  });
});
