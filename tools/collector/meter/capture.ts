// Reads pcap and pcapng bytes into frames, incrementally: a file read in chunks and a capture
// streamed from `tcpdump -w -` go through the same reader. It never throws on what it reads; what
// it cannot use is counted in `drops` by reason. Link types are passed through untouched: the
// decoder counts the ones it does not know.
import { createReadStream } from 'node:fs';
import type { CapturedFrame, DropCounts, FrameSpan } from './packet.js';

/** A record (pcap) or block (pcapng) larger than this is taken for corruption: tcpdump's largest snap length is 256 KiB. */
export const MAX_RECORD_BYTES = 256 * 1024 + 64;
/** Bytes after a cut record that can complete it: its largest body and a pcap record header. */
const JOIN_BYTES = MAX_RECORD_BYTES + 16;
/** Bytes joined first: enough to complete nearly every cut record (a full Ethernet frame and its header). */
const FIRST_JOIN_BYTES = 2048;

const PCAP_MICRO = 0xa1b2c3d4;
const PCAP_NANO = 0xa1b23c4d;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BYTE_ORDER = 0x1a2b3c4d;
const BLOCK_IDB = 1;
const BLOCK_OPB = 2;
const BLOCK_SPB = 3;
const BLOCK_EPB = 6;
const OPTION_END = 0;
const OPTION_TSRESOL = 9;
const OPTION_TSOFFSET = 14;
const TWO_32 = 4294967296;

interface Interface {
  linkType: number;
  /** Timestamp units per second as 10^k or 2^k. */
  resolution: { base: 10 | 2; exponent: number };
  offsetSeconds: number;
}

type Format = 'unknown' | 'pcap' | 'pcapng' | 'stopped';

export type FrameVisitor = (frame: FrameSpan) => void;

/** How a classic pcap file's records read, from its header. */
export interface PcapFormat {
  littleEndian: boolean;
  /** Nanosecond timestamps (else microseconds). */
  nanos: boolean;
  linkType: number;
}

/**
 * Takes the whole pcap records of `bytes` from `at`, until one ends at or past `until`, as the
 * reader would hand them to its visitor (a meter reading them where they lie); returns where it
 * stopped, `at` when it took none. The reader reads what it leaves.
 */
export type PcapRecordsTaker = (bytes: Uint8Array, at: number, until: number, format: PcapFormat) => number;

function count(drops: DropCounts, reason: string): void {
  drops[reason] = (drops[reason] ?? 0) + 1;
}

/** Epoch microseconds from a 64-bit count of 10^-k or 2^-k second units, exact for 10^-9 without BigInt. */
function unitsToMicros(high: number, low: number, iface: Interface): number {
  const { base, exponent } = iface.resolution;
  const offset = iface.offsetSeconds * 1e6;
  if (base === 10 && exponent >= 6 && exponent <= 12) {
    const divisor = 10 ** (exponent - 6);
    const quotient = Math.floor(high / divisor);
    const remainder = high - quotient * divisor;
    return offset + quotient * TWO_32 + Math.round((remainder * TWO_32 + low) / divisor);
  }
  const units = high * TWO_32 + low;
  return offset + Math.round((units * 1e6) / base ** exponent);
}

/**
 * Push chunks in, take frames out. Buffered bytes are bounded by one record: a record or block
 * longer than MAX_RECORD_BYTES, a block whose lengths disagree, or a header that is no capture's
 * stops the reader with the reason counted (a pcap has no marker to resynchronise on).
 */
export class CaptureReader {
  readonly drops: DropCounts;
  private format: Format = 'unknown';
  private pending: Uint8Array = new Uint8Array(0);
  private littleEndian = true;
  private pcap: PcapFormat = { littleEndian: true, nanos: false, linkType: 0 };
  // pcapng: the current section's interfaces, and the last timestamp for the timeless simple packet block
  private interfaces: Interface[] = [];
  private lastMicros = 0;
  /** The one span read() hands every frame in. */
  private readonly span: FrameSpan = { tsMicros: 0, linkType: 0, wireLength: 0, bytes: new Uint8Array(0), start: 0, end: 0 };

  /** Why the reader stopped reading, when it did (also counted in drops). */
  stoppedReason?: string;

  constructor(drops: DropCounts = {}) {
    this.drops = drops;
  }

  /** The frames completed by this chunk. */
  push(chunk: Uint8Array): CapturedFrame[] {
    const frames: CapturedFrame[] = [];
    this.read(chunk, (f) => frames.push({ tsMicros: f.tsMicros, linkType: f.linkType, wireLength: f.wireLength, data: f.bytes.subarray(f.start, f.end) }));
    return frames;
  }

  /**
   * As push, but each frame goes to `visit` as soon as it is read, as a span of the chunk in an
   * object reused for every frame: nothing is allocated per frame (the meter's path).
   */
  read(input: Uint8Array, visit: FrameVisitor, takePcapRecords?: PcapRecordsTaker): void {
    if (this.format === 'stopped') return;
    const chunk = plainBytes(input);
    // Frames are handed over as spans of the chunk itself (not of a view of its rest), so that a
    // meter reading into its own memory knows them by the chunk's identity.
    let from = 0;
    const carried = this.pending.length;
    if (carried > 0) {
      // The record cut by the last chunk's end is joined with only the bytes it can need: copying
      // every chunk behind the carried bytes would cost more than reading it. Most records are
      // short: the first join takes a few bytes, and only a record they leave cut takes the rest.
      // Carried bytes are less than one record, so a join that completes none has read nothing.
      let joined = concat(this.pending, chunk.subarray(0, Math.min(chunk.length, FIRST_JOIN_BYTES)));
      let at = this.readRecords(joined, 0, carried, visit);
      if (at === 0 && this.stoppedReason === undefined && chunk.length > FIRST_JOIN_BYTES) {
        joined = concat(this.pending, chunk.subarray(0, Math.min(chunk.length, JOIN_BYTES)));
        at = this.readRecords(joined, 0, carried, visit);
      }
      if (at < carried) {
        // Still cut (or stopped): the joined bytes hold the whole chunk, since JOIN_BYTES exceeds any record.
        this.pending = this.stoppedReason === undefined ? joined.slice(at) : new Uint8Array(0);
        return;
      }
      from = at - carried;
    }
    const at = this.readRecords(chunk, from, chunk.length, visit, takePcapRecords);
    // Slice rather than keep a view: the rest of a large chunk must not stay alive for a few bytes.
    this.pending = this.stoppedReason === undefined ? chunk.slice(at) : new Uint8Array(0);
  }

  /** Reads records from `from` in `bytes` until one ends at or past `until`, or none is complete; returns where it stopped. */
  private readRecords(bytes: Uint8Array, from: number, until: number, visit: FrameVisitor, takePcapRecords?: PcapRecordsTaker): number {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = from;
    while (at < until) {
      if (this.format === 'pcap' && takePcapRecords !== undefined) {
        const taken = takePcapRecords(bytes, at, until, this.pcap);
        if (taken > at) {
          at = taken;
          continue;
        }
      }
      const used =
        this.format === 'unknown'
          ? this.readFileHeader(bytes, view, at, visit)
          : this.format === 'pcap'
            ? this.readPcapRecord(bytes, view, at, visit)
            : this.format === 'pcapng'
              ? this.readPcapngBlock(bytes, view, at, visit)
              : 0;
      if (used === 0) break;
      at += used;
    }
    return at;
  }

  /** The input has ended: bytes of an unfinished record or header are a cut file. */
  end(): void {
    if (this.format !== 'stopped' && (this.pending.length > 0 || this.format === 'unknown')) {
      count(this.drops, this.format === 'unknown' ? 'truncated_file_header' : 'truncated_record');
    }
    this.pending = new Uint8Array(0);
  }

  private stop(reason: string): number {
    count(this.drops, reason);
    this.stoppedReason = reason;
    this.format = 'stopped';
    return 0;
  }

  private readFileHeader(bytes: Uint8Array, view: DataView, at: number, visit: FrameVisitor): number {
    if (bytes.length - at < 4) return 0;
    const magicBig = view.getUint32(at, false);
    const magicLittle = view.getUint32(at, true);
    if (magicBig === PCAPNG_SHB) {
      this.format = 'pcapng';
      return this.readPcapngBlock(bytes, view, at, visit);
    }
    const magic = [magicBig, magicLittle].find((m) => m === PCAP_MICRO || m === PCAP_NANO);
    if (magic === undefined) return this.stop('unknown_file_format');
    if (bytes.length - at < 24) return 0;
    this.littleEndian = magic === magicLittle;
    // The upper bits of the link type field may carry FCS information (pcap spec §4).
    this.pcap = { littleEndian: this.littleEndian, nanos: magic === PCAP_NANO, linkType: view.getUint32(at + 20, this.littleEndian) & 0x0fffffff };
    this.format = 'pcap';
    return 24;
  }

  private readPcapRecord(bytes: Uint8Array, view: DataView, at: number, visit: FrameVisitor): number {
    if (bytes.length - at < 16) return 0;
    const le = this.littleEndian;
    const captured = view.getUint32(at + 8, le);
    if (captured > MAX_RECORD_BYTES) return this.stop('oversized_record');
    if (bytes.length - at < 16 + captured) return 0;
    const seconds = view.getUint32(at, le);
    const fraction = view.getUint32(at + 4, le);
    visit(
      this.spanOf(
        seconds * 1e6 + (this.pcap.nanos ? Math.round(fraction / 1000) : fraction),
        this.pcap.linkType,
        Math.max(view.getUint32(at + 12, le), captured),
        bytes,
        at + 16,
        captured,
      ),
    );
    return 16 + captured;
  }

  private readPcapngBlock(bytes: Uint8Array, view: DataView, at: number, visit: FrameVisitor): number {
    if (bytes.length - at < 12) return 0;
    const isSection = view.getUint32(at, false) === PCAPNG_SHB;
    if (isSection) {
      // The section's byte order is known only from its own byte-order magic, after the length.
      const order = view.getUint32(at + 8, true);
      if (order !== PCAPNG_BYTE_ORDER && view.getUint32(at + 8, false) !== PCAPNG_BYTE_ORDER) return this.stop('bad_section_header');
      this.littleEndian = order === PCAPNG_BYTE_ORDER;
    }
    const le = this.littleEndian;
    const type = view.getUint32(at, le);
    const length = view.getUint32(at + 4, le);
    if (length < 12 || length % 4 !== 0) return this.stop('bad_block_length');
    if (length > MAX_RECORD_BYTES) return this.stop('oversized_record');
    if (bytes.length - at < length) return 0;
    if (view.getUint32(at + length - 4, le) !== length) return this.stop('bad_block_length');
    const body = at + 8;
    const bodyEnd = at + length - 4;
    if (isSection) {
      this.interfaces = [];
    } else if (type === BLOCK_IDB) {
      this.readInterface(view, body, bodyEnd);
    } else if (type === BLOCK_EPB || type === BLOCK_OPB) {
      this.readPacketBlock(type, bytes, view, body, bodyEnd, visit);
    } else if (type === BLOCK_SPB) {
      this.readSimplePacket(bytes, view, body, bodyEnd, visit);
    }
    // Other blocks (name resolution, statistics, custom, decryption secrets) say nothing about packets.
    return length;
  }

  private readInterface(view: DataView, body: number, end: number): void {
    if (end - body < 8) {
      count(this.drops, 'bad_interface_block');
      return;
    }
    const iface: Interface = { linkType: view.getUint16(body, this.littleEndian), resolution: { base: 10, exponent: 6 }, offsetSeconds: 0 };
    for (let at = body + 8; at + 4 <= end;) {
      const code = view.getUint16(at, this.littleEndian);
      const length = view.getUint16(at + 2, this.littleEndian);
      if (code === OPTION_END || at + 4 + length > end) break;
      if (code === OPTION_TSRESOL && length >= 1) {
        const value = view.getUint8(at + 4);
        iface.resolution = { base: value & 0x80 ? 2 : 10, exponent: value & 0x7f };
      } else if (code === OPTION_TSOFFSET && length >= 8) {
        const high = view.getUint32(at + 4 + (this.littleEndian ? 4 : 0), this.littleEndian);
        const low = view.getUint32(at + 4 + (this.littleEndian ? 0 : 4), this.littleEndian);
        iface.offsetSeconds = high * TWO_32 + low;
      }
      at += 4 + ((length + 3) & ~3);
    }
    this.interfaces.push(iface);
  }

  /** Enhanced (6) and obsolete (2) packet blocks: same fields, interface id 32 or 16 bits wide. */
  private readPacketBlock(type: number, bytes: Uint8Array, view: DataView, body: number, end: number, visit: FrameVisitor): void {
    const le = this.littleEndian;
    if (end - body < 20) {
      count(this.drops, 'bad_packet_block');
      return;
    }
    const iface = this.interfaces[type === BLOCK_EPB ? view.getUint32(body, le) : view.getUint16(body, le)];
    if (iface === undefined) {
      count(this.drops, 'unknown_interface');
      return;
    }
    const captured = view.getUint32(body + 12, le);
    if (captured > end - body - 20) {
      count(this.drops, 'bad_packet_block');
      return;
    }
    this.lastMicros = unitsToMicros(view.getUint32(body + 4, le), view.getUint32(body + 8, le), iface);
    visit(this.spanOf(this.lastMicros, iface.linkType, Math.max(view.getUint32(body + 16, le), captured), bytes, body + 20, captured));
  }

  /** A simple packet block has no timestamp: it takes the last one seen in the capture. */
  private readSimplePacket(bytes: Uint8Array, view: DataView, body: number, end: number, visit: FrameVisitor): void {
    const iface = this.interfaces[0];
    if (iface === undefined || end - body < 4) {
      count(this.drops, iface === undefined ? 'unknown_interface' : 'bad_packet_block');
      return;
    }
    const wireLength = view.getUint32(body, this.littleEndian);
    const captured = Math.min(wireLength, end - body - 4);
    visit(this.spanOf(this.lastMicros, iface.linkType, wireLength, bytes, body + 4, captured));
  }

  private spanOf(tsMicros: number, linkType: number, wireLength: number, bytes: Uint8Array, start: number, captured: number): FrameSpan {
    const span = this.span;
    span.tsMicros = tsMicros;
    span.linkType = linkType;
    span.wireLength = wireLength;
    span.bytes = bytes;
    span.start = start;
    span.end = start + captured;
    return span;
  }
}

/**
 * A Buffer (what streams hand over) as a plain Uint8Array over the same memory. Frames are read
 * from chunks and from the joined bytes of a cut record (a Uint8Array); bytes of one class keep
 * every byte read in the decoder monomorphic, where a second class met mid-run deoptimised the
 * whole per-packet path (and Uint8Array.slice copies, as `pending` needs).
 */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}

/**
 * The frames of a capture file, a batch per 1 MiB chunk read (one await per frame would cost more
 * than decoding it); what could not be read is counted in `drops`.
 */
export async function* readCaptureFile(path: string, drops: DropCounts = {}): AsyncGenerator<CapturedFrame[]> {
  const reader = new CaptureReader(drops);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const frames = reader.push(chunk as Buffer);
    if (frames.length > 0) yield frames;
  }
  reader.end();
}
