// The decoder on real bytes: Debian's tcpdump captures TCP, UDP and ICMP the test sends over
// 127.0.0.1 and ::1, as Ethernet (lo), Linux cooked v2 (any) and v1 (any -y LINUX_SLL); fragments
// come from a network namespace whose loopback MTU is 1280. What no Debian tool here can make
// (VLAN tags: this kernel has no 8021q; raw IP and BSD loopback framings; IPv6 extension headers
// other than fragment) is built from the specifications around real IP packets, and says so.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureReader } from './capture.js';
import { decodeFrame } from './decode.js';
import { TcpFlag, type CapturedFrame, type DecodedPacket, type DropCounts } from './packet.js';
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
  src: p.src, dst: p.dst, protocol: p.protocol, srcPort: p.srcPort, dstPort: p.dstPort, flags: p.tcp?.flags, icmp: p.icmp,
  ipLength: p.ipLength, payloadLength: p.payloadLength, fragment: p.fragment,
});

const REQUEST = 'hello';
const RESPONSE = 'world!';
const UDP_SIZES = [10, 200, 3000];
const PING_SIZE = 123;

describe('decoding real loopback captures', () => {
  const captures = new Map<string, Uint8Array>();
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
    for (const [name, capture] of Object.entries(running)) captures.set(name, await capture.stop());
  });
  afterAll(async () => {
    await v4?.close();
    await v6?.close();
  });

  it('reads each capture whole, with the link type tcpdump names', () => {
    const linkTypes = Object.fromEntries([...captures].map(([name, bytes]) => {
      const { frames, drops } = framesOf(bytes);
      expect(drops).toEqual({});
      return [name, [...new Set(frames.map((f) => f.linkType))]];
    }));
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
      const text = (from: number | undefined) => tcp.filter((p) => p.srcPort === from).map((p) => Buffer.from(p.payload).toString()).join('');
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
      expect(packets.map(summary)).toEqual(ethernet.map(summary));
      packets.forEach((p, i) => {
        expect(Number.isInteger(p.tsMicros)).toBe(true);
        expect(Math.abs(p.tsMicros - ethernet[i].tsMicros)).toBeLessThan(50_000);
      });
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
    packets = decodeAll(framesOf(await capture.stop()).frames).packets;
  });
  afterAll(() => {
    execFileSync('ip', ['netns', 'del', namespace]);
  });

  it('marks IPv4 fragments first and later, with the datagram id, and decodes ICMP only in the first', () => {
    const v4 = packets.filter((p) => p.ipVersion === 4);
    // 3008 bytes of ICMP in 1256 + 1256 + 496, for the request and again for the reply.
    expect(v4.map((p) => [p.fragment, p.payloadLength, p.icmp?.type])).toEqual([
      ['first', 1248, 8], ['later', 1256, undefined], ['later', 496, undefined],
      ['first', 1248, 0], ['later', 1256, undefined], ['later', 496, undefined],
    ]);
    expect(new Set(v4.slice(0, 3).map((p) => p.fragmentId)).size).toBe(1);
    expect(v4.every((p) => p.src === '127.0.0.1' && p.protocol === 1 && p.srcPort === undefined)).toBe(true);
  });

  it('walks the IPv6 fragment header: ICMPv6 in the first fragment, the rest marked later', () => {
    const v6 = packets.filter((p) => p.ipVersion === 6);
    expect(v6.map((p) => [p.fragment, p.protocol, p.payloadLength, p.icmp?.type])).toEqual([
      ['first', 58, 1224, 128], ['later', 58, 1232, undefined], ['later', 58, 544, undefined],
      ['first', 58, 1224, 129], ['later', 58, 1232, undefined], ['later', 58, 544, undefined],
    ]);
    expect(v6[0].fragmentId).toBe(v6[2].fragmentId);
    expect(v6[0].ipLength).toBe(40 + 8 + 1232);
  });
});
