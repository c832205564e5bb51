import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * Just enough of the tar format for collector releases: write a gzip tar holding one file, and
 * read the members of one that an operator publishes (ustar, with GNU long names and pax `path`
 * records, which GNU tar and bsdtar emit for long paths). No dependency: the format is small.
 */

const BLOCK = 512;
/** A collector build is tens of megabytes; anything far larger is a mistake or a bomb. */
export const MAX_TARBALL_BYTES = 512 * 1024 * 1024;

export interface TarMember {
  /** The full path inside the archive, as recorded (long names and pax paths applied). */
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  mode: number;
  content: Buffer;
}

export class TarballError extends Error {}

export const isGzip = (bytes: Buffer) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;

/** A gzip tar with the single regular file `name` (ustar; names up to 100 bytes). */
export function packSingleFile(name: string, content: Buffer, options: { mode: number; mtime: Date }): Buffer {
  if (Buffer.byteLength(name) > 100) throw new TarballError(`member name too long: ${name}`);
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100, 'utf8');
  writeOctal(header, 100, 8, options.mode);
  writeOctal(header, 108, 8, 0); // uid
  writeOctal(header, 116, 8, 0); // gid
  writeOctal(header, 124, 12, content.length);
  writeOctal(header, 136, 12, Math.floor(options.mtime.getTime() / 1000));
  header.write('0', 156, 1, 'ascii'); // regular file
  header.write('ustar\0', 257, 6, 'ascii');
  header.write('00', 263, 2, 'ascii');
  header.write('root', 265, 32, 'ascii');
  header.write('root', 297, 32, 'ascii');
  header.write(`${checksum(header).toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  const padding = Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK);
  return gzipSync(Buffer.concat([header, content, padding, Buffer.alloc(2 * BLOCK)]), { level: 9 });
}

/** Every member of a gzip tar; throws TarballError when it is not one. */
export function readTarGz(tarGz: Buffer): TarMember[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(tarGz, { maxOutputLength: MAX_TARBALL_BYTES * 2 });
  } catch (error) {
    throw new TarballError(`not a gzip stream: ${(error as Error).message}`);
  }
  const members: TarMember[] = [];
  let longName: string | undefined;
  let paxPath: string | undefined;
  for (let offset = 0; offset + BLOCK <= tar.length;) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // end-of-archive marker
    if (readOctal(header, 148, 8) !== checksum(header)) throw new TarballError(`bad header checksum at byte ${offset}`);
    const size = readSize(header);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new TarballError('truncated archive');
    const content = tar.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    const flag = String.fromCharCode(header[156]);
    if (flag === 'L') {
      longName = cString(content);
      continue;
    }
    if (flag === 'x') {
      paxPath = paxRecords(content).path ?? paxPath;
      continue;
    }
    if (flag === 'g') continue;
    const prefix = header.subarray(257, 262).toString('ascii') === 'ustar' ? cString(header.subarray(345, 500)) : '';
    const recorded = cString(header.subarray(0, 100));
    const name = paxPath ?? longName ?? (prefix ? `${prefix}/${recorded}` : recorded);
    longName = paxPath = undefined;
    members.push({ name, type: memberType(flag), mode: readOctal(header, 100, 8), content: Buffer.from(content) });
  }
  return members;
}

/** The regular-file member whose basename is `basename`, at any depth (what the SDK extracts). */
export function findMember(members: TarMember[], basename: string): TarMember | undefined {
  return members.find((m) => m.type === 'file' && m.name.replace(/\/+$/, '').split('/').at(-1) === basename);
}

function memberType(flag: string): TarMember['type'] {
  if (flag === '0' || flag === '\0' || flag === '7') return 'file';
  if (flag === '5') return 'directory';
  if (flag === '2') return 'symlink';
  return 'other';
}

/** The header sum with the checksum field counted as eight spaces. */
function checksum(header: Buffer): number {
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += header[i];
  return sum;
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

function readOctal(buf: Buffer, offset: number, length: number): number {
  const text = buf
    .subarray(offset, offset + length)
    .toString('ascii')
    .split('\0')[0]
    .trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/** Sizes over 8 GiB use GNU base-256 (high bit set); octal otherwise. */
function readSize(header: Buffer): number {
  if (header[124] & 0x80) {
    let value = header[124] & 0x7f;
    for (let i = 125; i < 136; i++) value = value * 256 + header[i];
    return value;
  }
  const size = readOctal(header, 124, 12);
  if (!Number.isSafeInteger(size) || size < 0) throw new TarballError('bad member size');
  return size;
}

const cString = (buf: Buffer) => {
  const end = buf.indexOf(0);
  return buf.subarray(0, end === -1 ? buf.length : end).toString('utf8');
};

/** pax extended header: records `<length> <key>=<value>\n`. */
function paxRecords(content: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number.parseInt(content.subarray(offset, space).toString('ascii'), 10);
    if (!Number.isInteger(length) || length <= 0) break;
    const record = content.subarray(space + 1, offset + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) records[record.slice(0, eq)] = record.slice(eq + 1);
    offset += length;
  }
  return records;
}
