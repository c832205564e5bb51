// The capture reader on a small real capture (Debian's tcpdump on lo, the test's own UDP and ping
// traffic), read whole, in pieces and cut at every byte; pcapng, big-endian and nanosecond pcap are
// built from the specifications around the real capture's frames, because tcpdump 4.99 with
// libpcap 1.10 writes only little-endian pcap and no editcap is installed. Then hostile bytes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CaptureReader, MAX_RECORD_BYTES, readCaptureFile } from './capture.js';
import type { CapturedFrame, DropCounts } from './packet.js';
import { listenOnLoopback, ping, startTcpdump } from './testing/tcpdump.js';
import { pcapng, pcapngBlock, writePcap } from './testing/write-capture.js';

function readAll(chunks: Uint8Array[]): { frames: CapturedFrame[]; drops: DropCounts; stopped?: string } {
  const reader = new CaptureReader();
  const frames = chunks.flatMap((chunk) => reader.push(chunk));
  reader.end();
  return { frames, drops: reader.drops, stopped: reader.stoppedReason };
}

/** Frames as plain values, so two readings compare by content rather than by buffer identity. */
const plain = (frames: CapturedFrame[]) => frames.map((f) => ({ ...f, data: Buffer.from(f.data).toString('hex') }));

let real: Uint8Array;
let frames: CapturedFrame[];

beforeAll(async () => {
  const peers = await listenOnLoopback('127.0.0.1');
  const capture = await startTcpdump({ iface: 'lo', filter: `port ${peers.udpPort} or (icmp and ip[2:2] = ${20 + 8 + 77})` });
  await peers.sendUdp([1, 60, 500]);
  await ping('127.0.0.1', 77, 2);
  real = (await capture.stop()).bytes;
  await peers.close();
  frames = readAll([real]).frames;
});

describe('a real pcap', () => {
  it('reads every record tcpdump wrote, with its link type, lengths and timestamps', () => {
    expect(frames.map((f) => [f.linkType, f.wireLength, f.data.length])).toEqual([
      [1, 14 + 28 + 1, 43],
      [1, 14 + 28 + 60, 102],
      [1, 14 + 28 + 500, 542],
      ...Array(4).fill([1, 14 + 20 + 8 + 77, 119]),
    ]);
    const now = Date.now() * 1000;
    expect(frames.every((f, i) => Math.abs(f.tsMicros - now) < 60e6 && (i === 0 || f.tsMicros >= frames[i - 1].tsMicros))).toBe(true);
  });

  it('reads the same frames whatever the chunks: split at every byte, or one byte at a time', () => {
    const whole = plain(frames);
    for (let cut = 0; cut <= real.length; cut++) {
      const { frames: split, drops } = readAll([real.subarray(0, cut), real.subarray(cut)]);
      expect(drops).toEqual({});
      expect(plain(split)).toEqual(whole);
    }
    const bytewise = readAll(Array.from(real, (_, i) => real.subarray(i, i + 1)));
    expect(plain(bytewise.frames)).toEqual(whole);
  });

  it('counts a file cut at any byte as one truncated record or header, keeping the whole records before it', () => {
    const ends: number[] = [24];
    for (const f of frames) ends.push(ends[ends.length - 1] + 16 + f.data.length);
    for (let cut = 0; cut < real.length; cut++) {
      const { frames: read, drops } = readAll([real.subarray(0, cut)]);
      const whole = ends.filter((end) => end <= cut).length - 1;
      expect(read.length).toBe(Math.max(whole, 0));
      const expected = cut < 24 ? { truncated_file_header: 1 } : ends.includes(cut) ? {} : { truncated_record: 1 };
      expect(drops).toEqual(expected);
    }
  });

  it('reads the file in chunks through readCaptureFile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meter-read-'));
    try {
      writeFileSync(join(dir, 'x.pcap'), real.subarray(0, real.length - 3));
      const drops: DropCounts = {};
      const read: CapturedFrame[] = [];
      for await (const batch of readCaptureFile(join(dir, 'x.pcap'), drops)) read.push(...batch);
      expect(plain(read)).toEqual(plain(frames.slice(0, -1)));
      expect(drops).toEqual({ truncated_record: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pcap variants built from the specification around the real frames', () => {
  it('reads big-endian and nanosecond pcap as the same frames', () => {
    for (const bigEndian of [false, true]) {
      for (const nano of [false, true]) {
        const { frames: read, drops } = readAll([writePcap(frames, { linkType: 1, bigEndian, nano })]);
        expect(drops).toEqual({});
        expect(plain(read)).toEqual(plain(frames));
      }
    }
  });

  it('joins records longer than the first join across chunks of any size', () => {
    // Real frames padded to 3,000 and 65,000 bytes: a record cut by a chunk's end needs more than
    // the first bytes joined to it.
    const grown = (f: CapturedFrame, size: number): CapturedFrame => {
      const data = new Uint8Array(size);
      data.set(f.data);
      return { ...f, wireLength: size, data };
    };
    const large = [grown(frames[0], 3000), frames[1], grown(frames[2], 65_000), frames[3], grown(frames[4], 3000)];
    const bytes = writePcap(large, { linkType: 1 });
    const whole = plain(large);
    for (const size of [1000, 2047, 2048, 2049, 4096, 70_000]) {
      const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      const { frames: read, drops } = readAll(chunks);
      expect(drops).toEqual({});
      expect(plain(read)).toEqual(whole);
    }
    for (let cut = 0; cut <= bytes.length; cut += 97) expect(plain(readAll([bytes.subarray(0, cut), bytes.subarray(cut)]).frames)).toEqual(whole);
  });

  it('keeps the link type, without the FCS bits pcap may set above it', () => {
    const bytes = writePcap(frames.slice(0, 1), { linkType: 276 | 0x10000000 });
    expect(readAll([bytes]).frames[0].linkType).toBe(276);
  });
});

describe('pcapng built from the specification around the real frames', () => {
  const ts = (frame: CapturedFrame, unitsPerSecond: bigint) => (BigInt(frame.tsMicros) * unitsPerSecond) / 1_000_000n;

  it('reads sections of either byte order, several interfaces and resolutions, EPB, OPB and SPB, skipping other blocks', () => {
    const [a, b, c, d, e] = frames;
    const bytes = Buffer.concat([
      pcapng.section(true),
      pcapng.iface(1), // microseconds by default
      pcapng.iface(276, 9), // nanoseconds
      pcapng.enhanced(0, ts(a, 1_000_000n), a),
      pcapngBlock(4, new Uint8Array(8)), // name resolution: says nothing about packets
      pcapng.enhanced(1, ts(b, 1_000_000_000n), b),
      pcapngBlock(0x40000bad, Uint8Array.of(1, 2, 3)), // unknown (custom) block
      pcapng.obsolete(0, ts(c, 1_000_000n), c),
      pcapng.section(false), // a new section forgets the interfaces of the last
      pcapng.iface(113, 0x80 | 20, false), // 2^-20 s
      pcapng.enhanced(0, ts(d, 1n << 20n), d, false),
      pcapng.simple(e, false),
    ]);
    const { frames: read, drops } = readAll([bytes]);
    expect(drops).toEqual({});
    expect(read.map((f) => f.linkType)).toEqual([1, 276, 1, 113, 113]);
    expect(plain(read).map((f) => f.data)).toEqual(plain([a, b, c, d, e]).map((f) => f.data));
    expect(read.slice(0, 3).map((f) => f.tsMicros)).toEqual([a.tsMicros, b.tsMicros, c.tsMicros]);
    // 2^-20 s units are finer than a microsecond but not a multiple of it: within one.
    expect(Math.abs(read[3].tsMicros - d.tsMicros)).toBeLessThanOrEqual(1);
    expect(read[4].tsMicros).toBe(read[3].tsMicros); // a simple packet block has no time of its own
    expect(plain(readAll(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1))).frames)).toEqual(plain(read));
  });

  it('counts packets of an interface the section never described, and packet blocks too short for their lengths', () => {
    const body = Buffer.alloc(20);
    body.writeUInt32LE(0xffffffff, 12); // captured length
    const broken = pcapngBlock(6, body);
    const bytes = Buffer.concat([
      pcapng.section(),
      pcapng.enhanced(0, 0n, frames[0]),
      pcapng.iface(1),
      pcapng.enhanced(3, 0n, frames[0]),
      broken,
      pcapng.enhanced(0, 0n, frames[1]),
    ]);
    const { frames: read, drops } = readAll([bytes]);
    expect(read).toHaveLength(1);
    expect(drops).toEqual({ unknown_interface: 2, bad_packet_block: 1 });
  });
});

describe('hostile bytes', () => {
  /** A small deterministic generator, so a failure can be replayed. */
  function randomBytes(seed: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    let x = seed >>> 0 || 1;
    for (let i = 0; i < length; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      out[i] = x & 0xff;
    }
    return out;
  }

  it('stops on bytes that are no capture, counting why', () => {
    expect(readAll([randomBytes(1, 4096)])).toMatchObject({ frames: [], drops: { unknown_file_format: 1 }, stopped: 'unknown_file_format' });
  });

  it('never throws on random records after a real header, and keeps no more than one record buffered', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const reader = new CaptureReader();
      for (const chunk of [real.subarray(0, 24), randomBytes(seed, 3000), randomBytes(seed + 1000, 3000)]) {
        for (const frame of reader.push(chunk)) expect(frame.data.length).toBeLessThanOrEqual(MAX_RECORD_BYTES);
      }
      reader.end();
      expect(Object.keys(reader.drops).every((k) => ['oversized_record', 'truncated_record'].includes(k))).toBe(true);
    }
  });

  it('stops at a declared length larger than any snap length instead of waiting for it', () => {
    const huge = Buffer.from(real.subarray(0, 24 + 16));
    huge.writeUInt32LE(0xfffffff0, 24 + 8);
    expect(readAll([huge])).toMatchObject({ frames: [], drops: { oversized_record: 1 }, stopped: 'oversized_record' });
    const hugeBlock = Buffer.concat([pcapng.section(), Buffer.from([6, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0])]);
    expect(readAll([hugeBlock])).toMatchObject({ frames: [], drops: { oversized_record: 1 } });
  });

  it('stops at pcapng block lengths that cannot be (not a multiple of 4, too short, or disagreeing with the trailer)', () => {
    const block = pcapng.enhanced(0, 0n, frames[0]);
    const odd = Buffer.from(block);
    odd.writeUInt32LE(block.length - 2, 4);
    const short = Buffer.from(block);
    short.writeUInt32LE(8, 4);
    const trailer = Buffer.from(block);
    trailer.writeUInt32LE(block.length + 4, block.length - 4);
    for (const bad of [odd, short, trailer]) {
      const { frames: read, drops } = readAll([Buffer.concat([pcapng.section(), pcapng.iface(1), bad, block])]);
      expect(read).toEqual([]);
      expect(drops).toEqual({ bad_block_length: 1 });
    }
  });

  it('stops on a section header whose byte-order magic is wrong', () => {
    const bad = Buffer.from(pcapng.section());
    bad.writeUInt32LE(0x12345678, 8);
    expect(readAll([bad]).drops).toEqual({ bad_section_header: 1 });
  });
});
