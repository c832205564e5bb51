// The capture-file pipeline on a real capture (Debian's tcpdump on lo while the test exchanges TCP
// and UDP on 127.0.0.1): records with the capture's times and counts, one flow table across files,
// a cut file counted, back-pressure from the sink, and files that are no captures refused by name.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFlowRecord } from '../flowgen/wire-check.js';
import type { FlowRecord } from '../flowgen/types.js';
import { CaptureReader } from './capture.js';
import { CaptureFileError, CaptureMeter, checkCaptureFile } from './meter-capture.js';
import type { CapturedFrame } from './packet.js';
import { listenOnLoopback, startTcpdump } from './testing/tcpdump.js';
import { pcapng, writePcap } from './testing/write-capture.js';

const SENSOR = { id: 'sensor-1', type: 'packet', name: 'meter', hostname: 'host', interface: 'pcap' };
const REQUEST = 'x'.repeat(300);
const RESPONSE = 'y'.repeat(5000);

let dir: string;
let capturePath: string;
let frames: CapturedFrame[];
let ports: { tcp: number; udp: number };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meter-capture-test-'));
  const peers = await listenOnLoopback('127.0.0.1');
  ports = { tcp: peers.tcpPort, udp: peers.udpPort };
  const capture = await startTcpdump({ iface: 'lo', filter: `port ${peers.tcpPort} or port ${peers.udpPort}` });
  await peers.exchangeTcp(REQUEST, RESPONSE);
  await peers.sendUdp([100, 200]);
  const bytes = (await capture.stop()).bytes;
  await peers.close();
  capturePath = join(dir, 'capture.pcap');
  writeFileSync(capturePath, bytes);
  const reader = new CaptureReader();
  frames = reader.push(bytes);
}, 20_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sink that keeps what it is given; `gate` holds every push until it resolves. */
function memorySink(gate: Promise<void> = Promise.resolve()) {
  const pushes: FlowRecord[][] = [];
  return {
    pushes,
    records: () => pushes.flat(),
    async push(flows: readonly unknown[]) {
      await gate;
      pushes.push(flows as FlowRecord[]);
    },
  };
}

const meter = (sink: ReturnType<typeof memorySink>, batchFlows = 100) => new CaptureMeter({ customerId: 'c1', sensor: SENSOR, tags: [], batchFlows }, sink);

function valid(records: FlowRecord[]): FlowRecord[] {
  const startMs = frames[0].tsMicros / 1000 - 1;
  for (const r of records) expect(checkFlowRecord(JSON.parse(JSON.stringify(r)), { startMs, endMs: startMs + 60_000, customerId: 'c1' })).toEqual([]);
  return records;
}

describe('metering a real capture', () => {
  it('gives one record per conversation with its ports, packets, bytes and the capture time', async () => {
    const sink = memorySink();
    const m = meter(sink);
    await m.run([capturePath], new AbortController().signal);
    const records = valid(sink.records());
    const tcp = records.find((r) => r.transport.proto === 'TCP')!;
    const udp = records.find((r) => r.transport.proto === 'UDP')!;
    expect(records).toHaveLength(2);
    expect(tcp.dst.port).toBe(ports.tcp);
    expect(tcp['@timestamp']).toBe(Math.floor(frames[0].tsMicros / 1000));
    // Payload bytes each way travel inside the IP bytes, with 20 + at least 20 bytes of headers per packet.
    const bytes = tcp.stats.volume.bytes;
    expect(bytes.src.sum).toBeGreaterThanOrEqual(REQUEST.length + 40 * bytes.src.count);
    expect(bytes.dst.sum).toBeGreaterThanOrEqual(RESPONSE.length + 40 * bytes.dst.count);
    expect(tcp.tcp!.flags).toEqual(expect.arrayContaining(['SYN', 'ACK', 'FIN']));
    expect(udp.dst.port).toBe(ports.udp);
    expect(udp.stats.volume.bytes.src).toMatchObject({ count: 2, sum: 100 + 200 + 2 * 28 });
    expect(m.stats()).toMatchObject({
      files: 1,
      packets_read: frames.length,
      packets_decoded: frames.length,
      flows_emitted: 2,
      active_flows: 0,
      dropped: { capture: {}, decode: {}, flow_table: {} },
    });
  });

  it('keeps one flow table across files: a conversation split between two files is one record', async () => {
    const half = Math.floor(frames.length / 2);
    const first = join(dir, 'first.pcap');
    const second = join(dir, 'second.pcap');
    writeFileSync(first, writePcap(frames.slice(0, half), { linkType: frames[0].linkType }));
    writeFileSync(second, writePcap(frames.slice(half), { linkType: frames[0].linkType }));
    const whole = memorySink();
    await meter(whole).run([capturePath], new AbortController().signal);
    const split = memorySink();
    const m = meter(split);
    await m.run([first, second], new AbortController().signal);
    expect(split.records().map((r) => r.stats.volume)).toEqual(whole.records().map((r) => r.stats.volume));
    expect(m.stats()).toMatchObject({ files: 2, packets_read: frames.length });
  });

  it('meters a stream in chunks of any size (copied into its buffer) as it meters the file', async () => {
    // Over 1 MiB, the meter's buffer: the capture's frames again and again, a minute apart.
    const repeats: CapturedFrame[] = [];
    for (let r = 0; repeats.length * 200 < 2.5 * 2 ** 20; r++) for (const f of frames) repeats.push({ ...f, tsMicros: f.tsMicros + r * 60e6 });
    const bytes = writePcap(repeats, { linkType: frames[0].linkType });
    expect(bytes.length).toBeGreaterThan(2 ** 20);
    const path = join(dir, 'repeated.pcap');
    writeFileSync(path, bytes);
    const fromFile = memorySink();
    await meter(fromFile).run([path], new AbortController().signal);
    for (const size of [bytes.length, 1000]) {
      const sink = memorySink();
      const m = meter(sink);
      const reader = new CaptureReader(m.captureDrops);
      for (let at = 0; at < bytes.length; at += size) m.meterChunk(reader, Buffer.from(bytes.subarray(at, at + size)));
      reader.end();
      await m.finish(new AbortController().signal);
      expect(JSON.stringify(sink.records())).toBe(JSON.stringify(fromFile.records()));
    }
    expect(fromFile.records().length).toBeGreaterThan((2 * 2 ** 20) / (200 * frames.length));
  });

  it('gives the same records from a pcap in either byte order and time unit, and from pcapng', async () => {
    // pcap records are metered in WebAssembly where they lie; pcapng blocks are read by JavaScript.
    const linkType = frames[0].linkType;
    const variants = {
      little: writePcap(frames, { linkType }),
      big: writePcap(frames, { linkType, bigEndian: true }),
      nano: writePcap(frames, { linkType, nano: true }),
      bigNano: writePcap(frames, { linkType, bigEndian: true, nano: true }),
      pcapng: Buffer.concat([pcapng.section(), pcapng.iface(linkType), ...frames.map((f) => pcapng.enhanced(0, BigInt(f.tsMicros), f))]),
    };
    const recordsOf = async (bytes: Uint8Array, name: string) => {
      const path = join(dir, `${name}.capture`);
      writeFileSync(path, bytes);
      const sink = memorySink();
      const m = meter(sink);
      await m.run([path], new AbortController().signal);
      expect(m.stats()).toMatchObject({
        packets_read: frames.length,
        packets_decoded: frames.length,
        last_packet_time: Math.floor(frames.at(-1)!.tsMicros / 1000),
      });
      return JSON.stringify(sink.records());
    };
    const expected = await recordsOf(variants.little, 'little');
    for (const [name, bytes] of Object.entries(variants)) expect(await recordsOf(bytes, name), name).toBe(expected);
  });

  it('meters pcap records of random bytes without throwing, each frame decoded or counted', async () => {
    let x = 2463534242;
    const random = (n: number) => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) % n);
    const linkTypes = [1, 113, 276, 101, 0, 12, 14, 9999];
    const junk: CapturedFrame[] = Array.from({ length: 3000 }, (_, i) => {
      const data = Uint8Array.from({ length: random(200) }, () => random(256));
      // Some frames start as IPv4 or IPv6, so that decoding goes past the first bytes.
      if (data.length > 0 && i % 3 === 0) data[0] = random(2) === 0 ? 0x45 : 0x60;
      return { tsMicros: 1_700_000_000_000_000 + i * 1000, linkType: 101, wireLength: data.length + random(2000), data };
    });
    for (const linkType of linkTypes) {
      const bytes = writePcap(junk, { linkType });
      const sink = memorySink();
      const m = meter(sink);
      const reader = new CaptureReader(m.captureDrops);
      for (let at = 0; at < bytes.length; at += 4096) m.meterChunk(reader, bytes.subarray(at, at + 4096));
      reader.end();
      await m.finish(new AbortController().signal);
      const stats = m.stats();
      const dropped = Object.values(stats.dropped.decode).reduce((a, b) => a + b, 0);
      expect(stats.packets_read, `link type ${linkType}`).toBe(junk.length);
      expect(stats.packets_decoded + dropped, `link type ${linkType}`).toBe(junk.length);
      expect(stats.active_flows).toBe(0);
    }
  });

  it('counts a file cut mid-record and still hands over the flows it held', async () => {
    const bytes = writePcap(frames, { linkType: frames[0].linkType });
    const cut = join(dir, 'cut.pcap');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 10));
    const sink = memorySink();
    const m = meter(sink);
    await m.run([cut], new AbortController().signal);
    expect(m.stats()).toMatchObject({ packets_read: frames.length - 1, dropped: { capture: { truncated_record: 1 } } });
    expect(sink.records().length).toBeGreaterThan(0);
  });

  it('waits for the sink: nothing more is read while a push is pending', async () => {
    let open!: () => void;
    const sink = memorySink(new Promise<void>((resolve) => (open = resolve)));
    let finished = false;
    const running = meter(sink, 1)
      .run([capturePath, capturePath], new AbortController().signal)
      .then(() => (finished = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(finished).toBe(false);
    expect(sink.pushes).toHaveLength(0);
    open();
    await running;
    expect(sink.records().length).toBeGreaterThanOrEqual(2);
  });
});

describe('files that cannot be metered', () => {
  it('names a missing, an empty and a non-capture file; accepts a capture', async () => {
    const empty = join(dir, 'empty.pcap');
    const text = join(dir, 'notes.txt');
    writeFileSync(empty, '');
    writeFileSync(text, 'these are not packets\n');
    await expect(checkCaptureFile(join(dir, 'missing.pcap'))).rejects.toThrow(
      new CaptureFileError(`cannot read capture file ${join(dir, 'missing.pcap')}: no such file`),
    );
    await expect(checkCaptureFile(empty)).rejects.toThrow(`capture file ${empty} is empty`);
    await expect(checkCaptureFile(text)).rejects.toThrow(`${text} is not a pcap or pcapng capture (unknown_file_format)`);
    await expect(checkCaptureFile(dir)).rejects.toThrow(`cannot read capture file ${dir}: EISDIR`);
    await expect(checkCaptureFile(capturePath)).resolves.toBeUndefined();
  });
});
