// Template and options template sets of NetFlow v9 (RFC 3954) and IPFIX
// (RFC 7011): parsed into field lists, bounded by the set's own length.

import type { DropCounts } from '../meter/packet.js';
import type { FieldSpec, Template } from './state.js';

export const VARIABLE_LENGTH = 65535;

export function countDrop(drops: DropCounts, reason: string, n = 1): void {
  drops[reason] = (drops[reason] ?? 0) + n;
}

function minLength(fields: FieldSpec[]): number {
  // A variable-length field takes at least its one length byte.
  return fields.reduce((sum, f) => sum + (f.length === VARIABLE_LENGTH ? 1 : f.length), 0);
}

/** A parsed template record; fields empty means an IPFIX withdrawal. */
export interface TemplateRecord {
  id: number;
  template: Template;
}

const u16 = (b: Uint8Array, o: number): number => (b[o] << 8) | b[o + 1];

/**
 * Reads the field specifiers starting at `off`. IPFIX field ids with the
 * enterprise bit carry a 4-byte enterprise number. Returns the end offset, or
 * -1 when the fields run past `end`.
 */
function readFields(b: Uint8Array, off: number, end: number, count: number, ipfix: boolean, out: FieldSpec[]): number {
  for (let i = 0; i < count; i++) {
    if (off + 4 > end) return -1;
    let ie = u16(b, off);
    const length = u16(b, off + 2);
    off += 4;
    let pen = 0;
    if (ipfix && ie & 0x8000) {
      if (off + 4 > end) return -1;
      ie &= 0x7fff;
      pen = ((b[off] << 24) | (b[off + 1] << 16) | (b[off + 2] << 8) | b[off + 3]) >>> 0;
      off += 4;
    }
    if (!ipfix && length === VARIABLE_LENGTH) return -1; // v9 has no variable-length fields
    out.push({ ie, pen, length });
  }
  return off;
}

/**
 * Template records of one set body [off, end). `options` for options template
 * sets; their scope fields come first. Stops at the first malformed record and
 * counts it: the rest of the set cannot be framed.
 */
export function parseTemplateSet(b: Uint8Array, off: number, end: number, ipfix: boolean, options: boolean, drops: DropCounts): TemplateRecord[] {
  const records: TemplateRecord[] = [];
  const headerLength = options ? 6 : 4;
  // Withdrawals are 4 bytes in options template sets too; what is shorter than 4 is padding.
  while (off + 4 <= end) {
    const id = u16(b, off);
    let fieldCount: number;
    let scopeCount: number;
    if (options && ipfix) {
      fieldCount = u16(b, off + 2);
      scopeCount = fieldCount === 0 || off + headerLength > end ? 0 : u16(b, off + 4);
    } else if (options) {
      // v9 gives scope and option lengths in bytes, four per field specifier.
      scopeCount = u16(b, off + 2) / 4;
      fieldCount = scopeCount + u16(b, off + 4) / 4;
    } else {
      fieldCount = u16(b, off + 2);
      scopeCount = 0;
    }
    if (id === 0 && fieldCount === 0) return records; // zero padding to the set's end
    if (ipfix && fieldCount === 0) {
      // A withdrawal: of one template, or of all (the set's own id, 2 or 3).
      records.push({ id, template: { fields: [], scopeCount: 0, minLength: 0 } });
      off += 4;
      continue;
    }
    if (id < 256 || off + headerLength > end || !Number.isInteger(scopeCount) || !Number.isInteger(fieldCount) || scopeCount > fieldCount) {
      countDrop(drops, 'bad_template');
      return records;
    }
    const fields: FieldSpec[] = [];
    const next = readFields(b, off + headerLength, end, fieldCount, ipfix, fields);
    const length = minLength(fields);
    if (next < 0 || length === 0) {
      countDrop(drops, 'bad_template');
      return records;
    }
    records.push({ id, template: { fields, scopeCount, minLength: length } });
    off = next;
  }
  return records;
}
