// TLS handshakes (RFC 8446, RFC 5246) from the first record of each direction: the ClientHello's
// SNI, ALPN offer, highest offered version and JA4 fingerprint; the ServerHello's negotiated
// version and, before TLS 1.3 encrypts it, its ALPN choice. A hello cut short by the capture
// still yields what precedes the cut; the fingerprint needs the whole hello.

import { hash } from 'node:crypto';
import type { AppHints, PayloadSelection } from '../packet.js';
import { ByteReader, type Inspection, printable, ScratchBytes } from './inspection.js';

const CONTENT_HANDSHAKE = 0x16;
const CLIENT_HELLO = 1;
const SERVER_HELLO = 2;
const EXT_SERVER_NAME = 0x0000;
const EXT_SIGNATURE_ALGORITHMS = 0x000d;
const EXT_ALPN = 0x0010;
const EXT_SUPPORTED_VERSIONS = 0x002b;

/** Versions as flowgen (and Suricata) spell them. */
const VERSION_NAMES: Record<number, string> = { 0x0300: 'SSL 3.0', 0x0301: 'TLS 1.0', 0x0302: 'TLS 1.1', 0x0303: 'TLS 1.2', 0x0304: 'TLS 1.3' };
/** JA4's two-character version codes. */
const JA4_VERSIONS: Record<number, string> = {
  0x0304: '13',
  0x0303: '12',
  0x0302: '11',
  0x0301: '10',
  0x0300: 's3',
  0x0002: 's2',
  0xfeff: 'd1',
  0xfefd: 'd2',
  0xfefc: 'd3',
};
/** ALPN values kept per hello: browsers offer two or three. */
const MAX_ALPN = 8;

/** GREASE values (RFC 8701): 0x?a?a with both bytes equal. Ignored everywhere, as JA4 requires. */
export function isGrease(value: number): boolean {
  return (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff);
}

/**
 * Payloads that start like a TLS handshake record (record versions SSL 3.0 to TLS 1.3) and hold
 * its header and a handshake type at least.
 */
export const TLS_PAYLOADS: PayloadSelection = {
  ports: [],
  prefixes: [0, 1, 2, 3, 4].map((minor) => ({ bytes: [CONTENT_HANDSHAKE, 3, minor], minLength: 6, initiatorOnly: false })),
};

/** The fields of a ClientHello that JA4 and the hints need. */
export interface ClientHello {
  version: number;
  ciphers: number[];
  extensions: number[];
  sni?: string;
  /** The offered protocols, raw (JA4 looks at their bytes). */
  alpn: Uint8Array[];
  supportedVersions: number[];
  signatureAlgorithms: number[];
}

/** Inspects a payload starting with a TLS handshake record; only hellos say anything. */
export function inspectTls(payload: Uint8Array): Inspection {
  const recordEnd = 5 + ((payload[3] << 8) | payload[4]);
  const body = new ByteReader(payload, 5, Math.min(recordEnd, payload.length));
  const type = body.u8();
  // A hello longer than its record's captured bytes was cut by the capture (or continues in the
  // next record, which this one-packet view cannot join): its reader starts `short`.
  const hello = body.take(body.u24());
  if (type === CLIENT_HELLO) return clientHelloInspection(hello);
  if (type === SERVER_HELLO) return serverHelloInspection(hello);
  return {}; // a later handshake message (TLS 1.2 key exchange, an encrypted Finished): nothing to say
}

function clientHelloInspection(reader: ByteReader): Inspection {
  const hello = readClientHello(reader);
  if (hello === undefined) return { problem: 'tls.truncated' };
  const complete = !reader.short;
  const tls: NonNullable<AppHints['tls']> = {};
  // A cut hello's legacy version (always TLS 1.2 from modern clients) would hide a 1.3 offer past the cut.
  const offered = complete || hello.supportedVersions.length > 0 ? highestVersion(hello) : undefined;
  if (offered !== undefined && VERSION_NAMES[offered]) tls.version = VERSION_NAMES[offered];
  if (hello.sni !== undefined) tls.sni = hello.sni;
  const alpn = alpnNames(hello.alpn);
  if (alpn.length > 0) tls.alpn = alpn;
  if (complete) tls.ja4 = ja4(hello);
  const hints: AppHints = { tls };
  return complete ? { hints } : { hints, problem: 'tls.truncated' };
}

/** Reads a ClientHello body; undefined when it is cut before its cipher suites end. */
export function readClientHello(reader: ByteReader): ClientHello | undefined {
  const version = reader.u16();
  reader.skip(32); // random
  reader.skip(reader.u8()); // session id
  const cipherBytes = reader.take(reader.u16());
  if (reader.short) return undefined;
  const hello: ClientHello = { version, ciphers: [], extensions: [], alpn: [], supportedVersions: [], signatureAlgorithms: [] };
  while (cipherBytes.remaining >= 2) hello.ciphers.push(cipherBytes.u16());
  reader.skip(reader.u8()); // compression methods
  if (reader.remaining === 0 && !reader.short) return hello; // no extensions at all: allowed before TLS 1.3
  const extensions = reader.take(reader.u16());
  while (extensions.remaining >= 4) {
    const type = extensions.u16();
    const data = extensions.take(extensions.u16());
    hello.extensions.push(type);
    if (data.short) break; // cut: its body is incomplete, the rest is absent
    if (type === EXT_SERVER_NAME) hello.sni = readServerName(data);
    else if (type === EXT_ALPN) hello.alpn = readAlpn(data);
    else if (type === EXT_SUPPORTED_VERSIONS) hello.supportedVersions = readU16List(data, data.u8());
    else if (type === EXT_SIGNATURE_ALGORITHMS) hello.signatureAlgorithms = readU16List(data, data.u16());
  }
  if (extensions.remaining > 0) reader.short = true; // a stray byte or a cut extension header
  return hello;
}

function serverHelloInspection(reader: ByteReader): Inspection {
  const legacyVersion = reader.u16();
  reader.skip(32); // random
  reader.skip(reader.u8()); // session id
  reader.skip(3); // cipher suite, compression method
  if (reader.short) return { problem: 'tls.truncated' };
  let selectedVersion: number | undefined;
  let alpn: string[] = [];
  const extensions = reader.remaining > 0 ? reader.take(reader.u16()) : reader.take(0); // none before TLS 1.3 is fine
  while (extensions.remaining >= 4) {
    const type = extensions.u16();
    const data = extensions.take(extensions.u16());
    if (data.short) break;
    if (type === EXT_SUPPORTED_VERSIONS)
      selectedVersion = data.u16(); // TLS 1.3 negotiates here (RFC 8446 §4.2.1)
    else if (type === EXT_ALPN) alpn = alpnNames(readAlpn(data));
  }
  if (extensions.remaining > 0) reader.short = true;
  // As in the ClientHello, a cut hello's legacy version says nothing about a selection past the cut.
  const version = selectedVersion ?? (reader.short ? undefined : legacyVersion);
  const tls: NonNullable<AppHints['tls']> = {};
  if (version !== undefined && VERSION_NAMES[version]) tls.version = VERSION_NAMES[version];
  if (alpn.length > 0) tls.alpn = alpn;
  const hints: AppHints = { tls };
  return reader.short ? { hints, problem: 'tls.truncated' } : { hints };
}

function readServerName(data: ByteReader): string | undefined {
  const list = data.take(data.u16());
  while (list.remaining >= 3) {
    const nameType = list.u8();
    const name = list.take(list.u16());
    if (nameType === 0 && !name.short) return printable(name.bytes, name.pos, name.end);
  }
  return undefined;
}

function readAlpn(data: ByteReader): Uint8Array[] {
  const list = data.take(data.u16());
  const protocols: Uint8Array[] = [];
  while (list.remaining >= 1 && protocols.length < MAX_ALPN) {
    const value = list.take(list.u8());
    if (value.short) break;
    protocols.push(value.bytes.subarray(value.pos, value.end));
  }
  return protocols;
}

/**
 * The protocols as text, without empty ones: RFC 7301 names are 1 to 255 bytes, so an empty one
 * is malformed and names no protocol (JA4 still reads the raw first value: `00` when it is empty).
 */
function alpnNames(protocols: readonly Uint8Array[]): string[] {
  const names: string[] = [];
  for (const protocol of protocols) if (protocol.length > 0) names.push(printable(protocol, 0, protocol.length));
  return names;
}

function readU16List(data: ByteReader, byteLength: number): number[] {
  const list = data.take(byteLength);
  const values: number[] = [];
  while (list.remaining >= 2) values.push(list.u16());
  return values;
}

function highestVersion(hello: ClientHello): number {
  const offered = hello.supportedVersions.filter((v) => !isGrease(v));
  return offered.length > 0 ? Math.max(...offered) : hello.version;
}

/**
 * JA4 (FoxIO, technical_details/JA4.md), for TLS over TCP: `t`, version, `d`/`i` for SNI, cipher
 * and extension counts, first and last character of the first ALPN value; then the truncated
 * SHA-256 of the sorted cipher list; then that of the sorted extension list (without SNI and
 * ALPN) joined by `_` to the signature algorithms in their order. GREASE is left out throughout.
 */
export function ja4(hello: ClientHello): string {
  const ciphers = hello.ciphers.filter((c) => !isGrease(c));
  const extensions = hello.extensions.filter((e) => !isGrease(e));
  const version = JA4_VERSIONS[highestVersion(hello)] ?? '00';
  const sni = extensions.includes(EXT_SERVER_NAME) ? 'd' : 'i';
  const a = `t${version}${sni}${twoDigits(ciphers.length)}${twoDigits(extensions.length)}${alpnCode(hello.alpn[0])}`;
  const bEnd = writeHexList(ciphers, true, 0); // first: it may grow listBytes into a new buffer
  const b = truncatedSha256(listBytes.bytes.subarray(0, bEnd));
  const signatures = hello.signatureAlgorithms.filter((s) => !isGrease(s));
  let cEnd = writeHexList(
    extensions.filter((e) => e !== EXT_SERVER_NAME && e !== EXT_ALPN),
    true,
    0,
  );
  if (cEnd > 0 && signatures.length > 0) {
    listBytes.room(cEnd, 1)[cEnd++] = UNDERSCORE;
    cEnd = writeHexList(signatures, false, cEnd);
  }
  return `${a}_${b}_${truncatedSha256(listBytes.bytes.subarray(0, cEnd))}`;
}

/** JA4_b and JA4_c from their raw comma-separated lists, as text or its bytes ("000000000000" for an empty one). */
export function truncatedSha256(list: string | Uint8Array): string {
  return list.length === 0 ? '000000000000' : hash('sha256', list).slice(0, 12);
}

// JA4's lists are written as the bytes they hash, into one buffer: sorting with a comparator and
// building the text piece by piece took about a third of a ClientHello's inspection.
const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const COMMA = 0x2c;
const UNDERSCORE = 0x5f;
/** Five bytes a value at most: a hello's lists hold at most 32,767 (its 64 KiB). */
const listBytes = new ScratchBytes(1024);
let sortScratch = new Uint16Array(256);

/**
 * Writes the values into listBytes from `at`, as four lower-case hex digits each joined by commas,
 * sorted first when asked (numeric order is the hex order JA4 sorts by); returns where it ended.
 */
function writeHexList(values: readonly number[], sorted: boolean, at: number): number {
  const out = listBytes.room(at, values.length * 5);
  let ordered: ArrayLike<number> = values;
  if (sorted) {
    if (values.length > sortScratch.length) sortScratch = new Uint16Array(2 * values.length);
    const scratch = sortScratch.subarray(0, values.length);
    scratch.set(values);
    ordered = scratch.sort();
  }
  for (let i = 0; i < ordered.length; i++) {
    if (i > 0) out[at++] = COMMA;
    const value = ordered[i]!;
    out[at++] = HEX_DIGITS[(value >> 12) & 15]!;
    out[at++] = HEX_DIGITS[(value >> 8) & 15]!;
    out[at++] = HEX_DIGITS[(value >> 4) & 15]!;
    out[at++] = HEX_DIGITS[value & 15]!;
  }
  return at;
}

function twoDigits(count: number): string {
  return String(Math.min(count, 99)).padStart(2, '0');
}

/** The first and last character of the first ALPN value; its hex form's when either is not alphanumeric. */
function alpnCode(first: Uint8Array | undefined): string {
  if (first === undefined || first.length === 0) return '00';
  const head = first[0];
  const tail = first[first.length - 1];
  if (isAlphanumeric(head) && isAlphanumeric(tail)) return String.fromCharCode(head, tail);
  return (head >> 4).toString(16) + (tail & 0x0f).toString(16);
}

function isAlphanumeric(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
}
