import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TarballError, findMember, packSingleFile, readTarGz } from './tarball.js';

const dir = mkdtempSync(join(tmpdir(), 'bd-tar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tarball', () => {
  it('writes a gzip tar that GNU tar extracts as an executable `prophet`', () => {
    const content = Buffer.from('#!/bin/sh\necho hello\n'.repeat(100));
    const file = join(dir, 'one.tar.gz');
    writeFileSync(file, packSingleFile('prophet', content, { mode: 0o755, mtime: new Date('2026-01-02T00:00:00Z') }));
    expect(execFileSync('tar', ['-tzvf', file], { encoding: 'utf8' })).toMatch(/^-rwxr-xr-x .* prophet\n$/);
    const out = join(dir, 'out');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', file, '-C', out]);
    expect(readFileSync(join(out, 'prophet'))).toEqual(content);
    expect(statSync(join(out, 'prophet')).mode & 0o777).toBe(0o755);
  });

  it('reads what it writes, and what GNU tar writes: nested, long (GNU and pax) names', () => {
    const round = readTarGz(packSingleFile('prophet', Buffer.from('x'), { mode: 0o755, mtime: new Date() }));
    expect(round).toEqual([{ name: 'prophet', type: 'file', mode: 0o755, content: Buffer.from('x') }]);

    const deep = `release/${'d'.repeat(120)}/bin`;
    mkdirSync(join(dir, 'src', deep), { recursive: true });
    writeFileSync(join(dir, 'src', deep, 'prophet'), 'binary');
    writeFileSync(join(dir, 'src', 'release', 'README'), 'readme');
    for (const format of ['gnu', 'pax', 'ustar']) {
      const file = join(dir, `${format}.tar.gz`);
      try {
        execFileSync('tar', [`--format=${format}`, '-czf', file, '-C', join(dir, 'src'), 'release'], { stdio: 'pipe' });
      } catch {
        // ustar cannot hold a 140-byte path; GNU tar refuses, which is the point of the other two.
        expect(format).toBe('ustar');
        continue;
      }
      const members = readTarGz(readFileSync(file));
      expect(members.some((m) => m.type === 'directory')).toBe(true);
      expect(findMember(members, 'prophet')).toMatchObject({ name: `${deep}/prophet`, type: 'file' });
      expect(findMember(members, 'prophet')!.content.toString()).toBe('binary');
    }
  });

  it('finds only a regular file named exactly `prophet`', () => {
    const members = readTarGz(packSingleFile('bin/prophet-helper', Buffer.from('x'), { mode: 0o644, mtime: new Date() }));
    expect(findMember(members, 'prophet')).toBeUndefined();
  });

  it.each([
    ['not gzip', Buffer.from('plain text')],
    ['gzip of garbage', gzipSync(Buffer.alloc(1024, 7))],
    ['truncated', gzipSync(Buffer.from(packSingleFileRaw().subarray(0, 600)))],
  ])('refuses %s', (_name, bytes) => {
    expect(() => readTarGz(bytes)).toThrow(TarballError);
  });
});

/** The uncompressed tar of a 1000-byte member (header + two data blocks). */
function packSingleFileRaw(): Buffer {
  return Buffer.from(execFileSync('gzip', ['-dc'], { input: packSingleFile('prophet', Buffer.alloc(1000, 1), { mode: 0o755, mtime: new Date() }) }));
}
