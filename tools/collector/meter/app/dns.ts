// DNS messages (RFC 1035) over UDP, or over TCP behind their 2-byte length prefix: the first
// question's name and type, the response code, and the A/AAAA/CNAME answers. Names follow
// compression pointers only backwards, so a pointer loop cannot exist; labels are bounded by
// RFC 1035's 255-byte name limit.

import type { AppHints, PayloadSelection } from '../packet.js';
import { formatIPv4, formatIPv6 } from '../address.js';
import { appendPrintable, appendText, asciiText, ByteReader, type Inspection } from './inspection.js';

/** Any payload to or from port 53, over UDP or TCP. */
export const DNS_PAYLOADS: PayloadSelection = { ports: [53], prefixes: [] };

/** Type names as flowgen and Suricata spell them; others as RFC 3597's `TYPEnnn`. */
const RR_TYPES: Record<number, string> = {
  1: 'A',
  2: 'NS',
  5: 'CNAME',
  6: 'SOA',
  10: 'NULL',
  12: 'PTR',
  13: 'HINFO',
  15: 'MX',
  16: 'TXT',
  28: 'AAAA',
  33: 'SRV',
  35: 'NAPTR',
  41: 'OPT',
  43: 'DS',
  46: 'RRSIG',
  47: 'NSEC',
  48: 'DNSKEY',
  64: 'SVCB',
  65: 'HTTPS',
  99: 'SPF',
  251: 'IXFR',
  252: 'AXFR',
  255: 'ANY',
  257: 'CAA',
};

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

const HEADER_LENGTH = 12;
/** Pointer hops per name: a name has at most 127 labels, each reachable by one pointer. */
const MAX_POINTER_HOPS = 127;
const MAX_NAME_LENGTH = 255;
const DOT = 0x2e;
/** Enough for a CNAME chain and its addresses; a flow record is no place for a zone transfer. */
export const MAX_ANSWERS = 16;
/** Records looked at for those answers (others, such as RRSIGs, are skipped over). */
const MAX_RECORDS_READ = 64;

export function rrTypeName(type: number): string {
  return RR_TYPES[type] ?? `TYPE${type}`;
}

export function rcodeName(rcode: number): string {
  return RCODES[rcode] ?? `RCODE${rcode}`;
}

/** Inspects a DNS message; `overTcp` when it is preceded by the 2-byte length of DNS over TCP. */
export function inspectDns(payload: Uint8Array, overTcp: boolean): Inspection {
  if (overTcp && payload.length < 2) return { problem: 'dns.truncated' };
  const message = overTcp ? payload.subarray(2, 2 + ((payload[0] << 8) | payload[1])) : payload;
  if (message.length < HEADER_LENGTH) return { problem: 'dns.truncated' };
  const header = new ByteReader(message);
  header.skip(2); // id
  const flags = header.u16();
  const questions = header.u16();
  const answers = header.u16();
  if (questions === 0) return { problem: 'dns.no_question' };
  if ((flags >> 11) & 0x0f) return { problem: 'dns.not_a_query' }; // opcode other than QUERY

  const reader = new ByteReader(message, HEADER_LENGTH);
  const rrname = readName(reader);
  const rrtype = reader.u16();
  reader.skip(2); // class
  if (rrname === undefined || reader.short) return { problem: nameProblem(reader) };

  const dns: NonNullable<AppHints['dns']> = { rrname, rrtype: rrTypeName(rrtype) };
  const hints: AppHints = { app_name: 'DNS', dns };
  if (!(flags & 0x8000)) return { hints }; // a query: no rcode, no answers
  dns.rcode = rcodeName(flags & 0x0f);

  // Only the first question is reported; the rest (rare in practice) are skipped to the answers.
  for (let q = 1; q < questions && !reader.short; q++) {
    if (readName(reader) === undefined) return { hints, problem: nameProblem(reader) };
    reader.skip(4);
  }
  const found = readAnswers(reader, answers);
  if (found.values.length > 0) dns.answers = found.values;
  return found.problem ? { hints, problem: found.problem } : { hints };
}

function readAnswers(reader: ByteReader, count: number): { values: string[]; problem?: string } {
  const values: string[] = [];
  const records = Math.min(count, MAX_RECORDS_READ);
  for (let i = 0; i < records && values.length < MAX_ANSWERS; i++) {
    if (readName(reader) === undefined) return { values, problem: nameProblem(reader) };
    const type = reader.u16();
    reader.skip(6); // class, TTL
    const rdata = reader.take(reader.u16());
    if (reader.short) return { values, problem: 'dns.truncated' };
    const value = answerText(type, rdata);
    if (value !== undefined) values.push(value);
  }
  return { values };
}

/** A name that ran past the bytes was cut by the capture; any other bad name is malformed. */
function nameProblem(reader: ByteReader): string {
  return reader.short ? 'dns.truncated' : 'dns.bad_name';
}

function answerText(type: number, rdata: ByteReader): string | undefined {
  const length = rdata.end - rdata.pos;
  const b = rdata.bytes;
  const at = rdata.pos;
  if (type === 1 && length === 4) return formatIPv4(b, at);
  if (type === 28 && length === 16) return formatIPv6(b, at);
  if (type === 5) return readName(new ByteReader(b, at)); // may point anywhere before it
  return undefined;
}

/**
 * Reads a possibly compressed name in presentation form without the trailing dot ("." for the
 * root); undefined when malformed. Each pointer must point before where the name, or the last
 * jump, started: the targets strictly decrease, so no chain loops. The hop and 255-byte limits
 * bound the work and the text.
 */
export function readName(reader: ByteReader): string | undefined {
  const bytes = reader.bytes;
  let pos = reader.pos;
  let resumeAt = -1; // where the reader continues after the first pointer
  let lowestPointerFrom = pos;
  let wireLength = 0;
  let hops = 0;
  let textLength = 0; // of the name's text so far, in the shared text buffer
  for (;;) {
    if (pos >= reader.end) {
      reader.short = true;
      return undefined;
    }
    const length = bytes[pos];
    if (length === 0) {
      pos += 1;
      break;
    }
    const kind = length & 0xc0;
    if (kind === 0xc0) {
      if (pos + 2 > reader.end) {
        reader.short = true;
        return undefined;
      }
      const target = ((length & 0x3f) << 8) | bytes[pos + 1];
      if (target >= lowestPointerFrom || ++hops > MAX_POINTER_HOPS) return undefined; // a loop or garbage
      if (resumeAt < 0) resumeAt = pos + 2;
      lowestPointerFrom = target;
      pos = target;
      continue;
    }
    if (kind !== 0) return undefined; // extended label types (RFC 6891 obsoleted them)
    wireLength += length + 1;
    if (wireLength + 1 > MAX_NAME_LENGTH) return undefined;
    if (pos + 1 + length > reader.end) {
      reader.short = true;
      return undefined;
    }
    if (textLength > 0) textLength = appendText(DOT, textLength);
    textLength = appendPrintable(bytes, pos + 1, pos + 1 + length, true, textLength);
    pos += 1 + length;
  }
  reader.pos = resumeAt >= 0 ? resumeAt : pos;
  return textLength === 0 ? '.' : asciiText(textLength);
}
