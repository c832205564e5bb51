// What one protocol inspector returns: the hints it found and, when the bytes were cut short or
// malformed, why it stopped (a drop-count key such as "tls.truncated"). A truncated message may
// still yield hints: what was read before the cut is kept.

import type { AppHints } from '../packet.js';

export interface Inspection {
  hints?: AppHints;
  problem?: string;
}

/**
 * Reads big-endian integers from a byte range, never past its end: a read beyond it returns 0 and
 * sets `short`, so parsers check once after a group of reads instead of before every byte.
 */
export class ByteReader {
  short = false;
  constructor(
    readonly bytes: Uint8Array,
    public pos = 0,
    readonly end = bytes.length,
  ) {}

  get remaining(): number {
    return Math.max(0, this.end - this.pos);
  }

  u8(): number {
    if (this.pos + 1 > this.end) return this.overrun();
    return this.bytes[this.pos++];
  }

  u16(): number {
    if (this.pos + 2 > this.end) return this.overrun();
    const value = (this.bytes[this.pos] << 8) | this.bytes[this.pos + 1];
    this.pos += 2;
    return value;
  }

  u24(): number {
    if (this.pos + 3 > this.end) return this.overrun();
    const value = (this.bytes[this.pos] << 16) | (this.bytes[this.pos + 1] << 8) | this.bytes[this.pos + 2];
    this.pos += 3;
    return value;
  }

  skip(count: number): void {
    if (this.pos + count > this.end) this.overrun();
    else this.pos += count;
  }

  /** A sub-reader over the next `length` bytes (cut at this reader's end, with `short` set if cut). */
  take(length: number): ByteReader {
    const end = Math.min(this.pos + length, this.end);
    const sub = new ByteReader(this.bytes, this.pos, end);
    if (end < this.pos + length) {
      sub.short = true;
      this.short = true;
    }
    this.pos = end;
    return sub;
  }

  private overrun(): number {
    this.short = true;
    this.pos = this.end;
    return 0;
  }
}

/** Printable ASCII as is; anything else as a `\DDD` escape (dig's presentation format). */
export function printable(bytes: Uint8Array, start: number, end: number, escapeDot = false): string {
  return asciiText(appendPrintable(bytes, start, end, escapeDot, 0));
}

/**
 * Bytes written in place and grown on demand, kept for the process: inspectors write text there
 * (escaped names, JA4's lists) and read it once, instead of building strings piece by piece.
 */
export class ScratchBytes {
  bytes: Uint8Array;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
  }

  /** The buffer, grown (keeping bytes[0, at)) if it has fewer than `more` bytes past `at`. */
  room(at: number, more: number): Uint8Array {
    if (at + more > this.bytes.length) {
      const grown = new Uint8Array(2 * (at + more));
      grown.set(this.bytes.subarray(0, at));
      this.bytes = grown;
    }
    return this.bytes;
  }
}

// Text is written as bytes and made a string once: built a character at a time, a DNS name's
// labels were about a third of reading a response.
const text = new ScratchBytes(1024);

/** printable()'s bytes written into the text buffer from `at`; returns where they end. */
export function appendPrintable(bytes: Uint8Array, start: number, end: number, escapeDot: boolean, at: number): number {
  const out = text.room(at, 4 * (end - start));
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b > 0x20 && b < 0x7f && b !== 0x5c && !(escapeDot && b === 0x2e)) {
      out[at++] = b;
    } else {
      out[at++] = 0x5c;
      out[at++] = 0x30 + Math.floor(b / 100);
      out[at++] = 0x30 + (Math.floor(b / 10) % 10);
      out[at++] = 0x30 + (b % 10);
    }
  }
  return at;
}

/** Appends one byte of text (a separator such as the dot between DNS labels) at `at`; returns the end. */
export function appendText(byte: number, at: number): number {
  text.room(at, 1)[at] = byte;
  return at + 1;
}

/** The first `length` bytes of the text buffer (ASCII) as a string. */
export function asciiText(length: number): string {
  const bytes = text.bytes.subarray(0, length);
  // apply() takes a few hundred arguments cheaply; longer text (a hostile SNI) goes through Buffer.
  return length <= 256 ? String.fromCharCode.apply(null, bytes as unknown as number[]) : Buffer.from(bytes.buffer, 0, length).toString('latin1');
}
