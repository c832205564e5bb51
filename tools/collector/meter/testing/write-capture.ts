// Writes frames as pcap or pcapng bytes, following the formats' specifications: for tests that
// need what Debian's tcpdump 4.99 cannot write (pcapng, big-endian files, several sections and
// interfaces) and for building large captures from a small real one.
import type { CapturedFrame } from '../packet.js';

class ByteWriter {
  private parts: Uint8Array[] = [];
  constructor(private readonly littleEndian: boolean) {}

  u16(value: number): this {
    return this.bytes(2, (v) => v.setUint16(0, value, this.littleEndian));
  }
  u32(value: number): this {
    return this.bytes(4, (v) => v.setUint32(0, value >>> 0, this.littleEndian));
  }
  raw(data: Uint8Array, padTo = 1): this {
    this.parts.push(data);
    const pad = (padTo - (data.length % padTo)) % padTo;
    if (pad > 0) this.parts.push(new Uint8Array(pad));
    return this;
  }
  private bytes(size: number, fill: (view: DataView) => void): this {
    const data = new Uint8Array(size);
    fill(new DataView(data.buffer));
    this.parts.push(data);
    return this;
  }
  done(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

export interface PcapOptions {
  linkType: number;
  bigEndian?: boolean;
  nano?: boolean;
}

export function writePcap(frames: CapturedFrame[], options: PcapOptions): Uint8Array {
  const w = new ByteWriter(!options.bigEndian);
  w.u32(options.nano ? 0xa1b23c4d : 0xa1b2c3d4)
    .u16(2)
    .u16(4)
    .u32(0)
    .u32(0)
    .u32(262144)
    .u32(options.linkType);
  for (const frame of frames) {
    const seconds = Math.floor(frame.tsMicros / 1e6);
    const micros = frame.tsMicros - seconds * 1e6;
    w.u32(seconds)
      .u32(options.nano ? micros * 1000 : micros)
      .u32(frame.data.length)
      .u32(frame.wireLength)
      .raw(frame.data);
  }
  return w.done();
}

/** One pcapng block: type, body, lengths around it (the body padded to 32 bits). */
export function pcapngBlock(type: number, body: Uint8Array, littleEndian = true): Uint8Array {
  const padded = (body.length + 3) & ~3;
  return new ByteWriter(littleEndian)
    .u32(type)
    .u32(padded + 12)
    .raw(body, 4)
    .u32(padded + 12)
    .done();
}

export const pcapng = {
  section(littleEndian = true): Uint8Array {
    const body = new ByteWriter(littleEndian).u32(0x1a2b3c4d).u16(1).u16(0).u32(0xffffffff).u32(0xffffffff).done();
    return pcapngBlock(0x0a0d0d0a, body, littleEndian);
  },
  /** An interface description; `tsresol` is the if_tsresol option's byte (absent: microseconds). */
  iface(linkType: number, tsresol?: number, littleEndian = true): Uint8Array {
    const w = new ByteWriter(littleEndian).u16(linkType).u16(0).u32(262144);
    if (tsresol !== undefined) w.u16(9).u16(1).raw(Uint8Array.of(tsresol), 4).u16(0).u16(0);
    return pcapngBlock(1, w.done(), littleEndian);
  },
  /** An enhanced packet block; `units` is the timestamp in the interface's resolution, as a bigint. */
  enhanced(interfaceId: number, units: bigint, frame: CapturedFrame, littleEndian = true): Uint8Array {
    const w = new ByteWriter(littleEndian)
      .u32(interfaceId)
      .u32(Number(units >> 32n))
      .u32(Number(units & 0xffffffffn));
    return pcapngBlock(6, w.u32(frame.data.length).u32(frame.wireLength).raw(frame.data, 4).done(), littleEndian);
  },
  obsolete(interfaceId: number, units: bigint, frame: CapturedFrame, littleEndian = true): Uint8Array {
    const w = new ByteWriter(littleEndian)
      .u16(interfaceId)
      .u16(0)
      .u32(Number(units >> 32n))
      .u32(Number(units & 0xffffffffn));
    return pcapngBlock(2, w.u32(frame.data.length).u32(frame.wireLength).raw(frame.data, 4).done(), littleEndian);
  },
  simple(frame: CapturedFrame, littleEndian = true): Uint8Array {
    return pcapngBlock(3, new ByteWriter(littleEndian).u32(frame.wireLength).raw(frame.data, 4).done(), littleEndian);
  },
};
