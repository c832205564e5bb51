import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminCli } from '../../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, fetchDocumented, graphql } from '../../../test/kit/http.js';
import { createLogger } from '../../infra/logger.js';
import { CollectorService } from './collector.service.js';
import { CollectorStore } from './collector.store.js';
import { SUPPORTED_PLATFORMS } from './platforms.js';
import { findMember, packSingleFile, readTarGz } from './tarball.js';

const DOWNLOAD = '/rest/collector/download/1.0';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('collector releases and downloads', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'bd-collector-'));
  const binaryV1 = Buffer.from('\x7fELF fake collector 1.0.0\n');
  const binaryV2 = Buffer.from('\x7fELF fake collector 1.1.0\n');
  const file = (name: string, content: Buffer | string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const publish = (args: Record<string, string>) =>
    adminCli(['release', 'publish', ...Object.entries(args).flatMap(([k, v]) => [`--${k}`, v])], { DATABASE_URL: t.config.databaseUrl! });
  /** A download's 302 Location, as a path on the test server. */
  const location = async (query: string) => {
    const res = await call(t.url, 'GET', `${DOWNLOAD}?${query}`);
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  };
  const fetchAsset = (url: URL | string) => fetchDocumented(String(url).replace(/^.*?\/rest\//, `${t.url}/rest/`));

  let rawRelease: Record<string, any>;
  let tarRelease: Record<string, any>;
  let tarball: Buffer;

  beforeAll(async () => {
    t = await startTestApp();
    mkdirSync(join(dir, 'pkg/dist'), { recursive: true });
    writeFileSync(join(dir, 'pkg/dist/prophet'), 'arm7 collector', { mode: 0o755 });
    writeFileSync(join(dir, 'pkg/README'), 'read me');
    execFileSync('tar', ['-czf', join(dir, 'arm7.tar.gz'), '-C', join(dir, 'pkg'), 'dist', 'README']);
    tarball = readFileSync(join(dir, 'arm7.tar.gz'));
    const raw = await publish({ file: file('prophet-amd64', binaryV1), version: '1.0.0', channel: 'stable', os: 'linux', arch: 'amd64' });
    expect(raw, raw.stderr).toMatchObject({ code: 0 });
    const tar = await publish({ file: join(dir, 'arm7.tar.gz'), version: 'v0.3.0', channel: 'stable', os: 'linux', arch: 'arm7' });
    expect(tar, tar.stderr).toMatchObject({ code: 0 });
    rawRelease = raw.json;
    tarRelease = tar.json;
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('release publish (admin CLI)', () => {
    it('packages a raw binary as `prophet` and prints the release', () => {
      expect(rawRelease).toEqual({
        id: expect.stringMatching(/^rel_/),
        version: '1.0.0',
        channel: 'stable',
        os: 'linux',
        arch: 'amd64',
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        size: expect.any(Number),
        filename: 'prophet_collector_v1.0.0_linux_amd64.tar.gz',
        created_at: expect.stringMatching(/Z$/),
      });
    });

    it("keeps a ready tarball as given, and drops the version's leading v", () => {
      expect(tarRelease).toMatchObject({
        version: '0.3.0',
        filename: 'prophet_collector_v0.3.0_linux_arm7.tar.gz',
        sha256: sha256(tarball),
        size: tarball.length,
      });
    });

    it('refuses a tarball without `prophet`, a duplicate, and missing options', async () => {
      const noBinary = file('no-binary.tar.gz', packSingleFile('bin/prophetd', Buffer.from('x'), { mode: 0o755, mtime: new Date() }));
      const base = { file: file('bin', 'binary'), version: '2.0.0', channel: 'stable', os: 'linux', arch: 'amd64' };
      const [tar, duplicate, usage] = await Promise.all([
        publish({ ...base, file: noBinary }),
        publish({ ...base, version: '1.0.0' }),
        publish({ file: base.file, version: '1.0.0' }),
      ]);
      expect(tar.code).toBe(1);
      expect(JSON.parse(tar.stderr)).toEqual({ error: 'invalid_release_file', message: expect.stringContaining('no regular file named "prophet"') });
      expect(duplicate.code).toBe(1);
      expect(JSON.parse(duplicate.stderr)).toMatchObject({ error: 'release_exists', message: expect.stringContaining('already published on stable') });
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--channel is required');
    }, 60_000);

    it.each<[string, Record<string, string | Buffer>, RegExp]>([
      ['gzip that is not a tar', { file: Buffer.from([0x1f, 0x8b, 1, 2, 3]) }, /not a readable tar/],
      ['an empty file', { file: Buffer.alloc(0) }, /empty/],
      ['an unknown os', { os: 'solaris' }, /--os must be one of linux, darwin, windows/],
      ['an unknown arch', { arch: 'mips' }, /--arch must be one of amd64, arm7, arm64/],
      ['a pair without a build', { arch: 'arm64' }, /no linux\/arm64 build; supported pairs: linux\/amd64, linux\/arm7, darwin\/arm64, windows\/amd64/],
      ['an unknown channel', { channel: 'beta' }, /--channel must be one of stable, dev/],
      ['a version that is not semver', { version: 'latest' }, /Version must look like 1.2.3/],
      ['a different build under a published version', { version: '1.0.0', channel: 'dev' }, /published on stable with different content/],
    ])('refuses %s', async (_name, override, message) => {
      const input = { file: Buffer.from('binary'), version: '2.0.0', channel: 'stable', os: 'linux', arch: 'amd64', ...override };
      await expect(t.app.services.collector.publish(input as never)).rejects.toThrow(message);
    });

    it('promotes the same build to another channel under the same filename', async () => {
      const promoted = await publish({ file: join(dir, 'arm7.tar.gz'), version: '0.3.0', channel: 'dev', os: 'linux', arch: 'arm7' });
      expect(promoted.code).toBe(0);
      expect(promoted.json).toMatchObject({ channel: 'dev', filename: tarRelease.filename, sha256: tarRelease.sha256 });
      expect(promoted.json.id).not.toBe(tarRelease.id);
    });
  });

  describe('GET /rest/collector/download/1.0', () => {
    it('redirects (302) to a signed, short-lived asset link on {base_url}', async () => {
      const res = await call(t.url, 'GET', `${DOWNLOAD}?os=linux&arch=amd64&channel=stable`);
      expect(res.status).toBe(302);
      expect(res.headers.get('x-checksum-sha256')).toBe(rawRelease.sha256);
      const url = new URL(res.headers.get('location')!);
      expect(`${url.origin}${url.pathname}`).toBe(`${t.url}/rest/collector/assets/1.0/${rawRelease.id}/${rawRelease.filename}`);
      const expires = Number(url.searchParams.get('expires'));
      expect(expires - Date.now() / 1000).toBeGreaterThan(200);
      expect(expires - Date.now() / 1000).toBeLessThanOrEqual(300);
      expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    });

    it("defaults to linux/amd64 on stable, as the SDK's defaults", async () => {
      expect((await location('')).pathname).toContain(rawRelease.id);
    });

    it('yields, once followed, the gzip tar with `prophet` under a versioned filename', async () => {
      const res = await fetchDocumented(`${t.url}${DOWNLOAD}?os=linux&arch=amd64&channel=stable`);
      expect(res.status).toBe(200);
      expect(res.redirected).toBe(true);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="prophet_collector_v1.0.0_linux_amd64.tar.gz"`);
      expect(res.headers.get('content-length')).toBe(String(bytes.length));
      expect(res.headers.get('x-checksum-sha256')).toBe(sha256(bytes));
      expect(sha256(bytes)).toBe(rawRelease.sha256);
      const member = findMember(readTarGz(bytes), 'prophet')!;
      expect(member).toMatchObject({ name: 'prophet', type: 'file', mode: 0o755 });
      expect(member.content).toEqual(binaryV1);
    });

    it('serves a published tarball byte for byte', async () => {
      const res = await fetchDocumented(`${t.url}${DOWNLOAD}?os=linux&arch=arm7&channel=stable`);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(tarball);
      expect(res.headers.get('content-disposition')).toContain('prophet_collector_v0.3.0_linux_arm7.tar.gz');
    });

    it('answers 400 with the supported pairs for an unsupported platform', async () => {
      for (const [query, platform] of [
        ['os=windows&arch=arm7&channel=stable', 'windows/arm7'],
        ['os=linux&arch=arm64&channel=dev', 'linux/arm64'],
        ['os=solaris&arch=amd64', 'solaris/amd64'],
        ['arch=mips', 'linux/mips'],
      ]) {
        const res = await call(t.url, 'GET', `${DOWNLOAD}?${query}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: `Unsupported platform: ${platform}`,
          code: 'unsupported_platform',
          message: `Unsupported platform: ${platform}`,
          supported: [...SUPPORTED_PLATFORMS],
        });
      }
    });

    it('answers 400 for an unknown channel', async () => {
      const res = await call(t.url, 'GET', `${DOWNLOAD}?os=linux&arch=amd64&channel=beta`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_channel', error: expect.stringContaining('beta') });
    });

    it('answers 404 when the channel has no release for the platform', async () => {
      for (const query of ['os=darwin&arch=arm64&channel=stable', 'os=linux&arch=amd64&channel=dev']) {
        const res = await call(t.url, 'GET', `${DOWNLOAD}?${query}`);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ code: 'release_not_found', error: expect.stringMatching(/^No (stable|dev) collector release for/) });
      }
    });

    it('answers 500 with an `error` body when the release lookup fails', async () => {
      const spy = vi.spyOn(CollectorStore.prototype, 'latest').mockRejectedValueOnce(new Error('connection terminated'));
      try {
        const res = await call(t.url, 'GET', `${DOWNLOAD}?os=linux&arch=amd64&channel=stable`);
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'Collector release lookup failed', code: 'release_lookup_failed', message: 'Collector release lookup failed' });
      } finally {
        spy.mockRestore();
      }
    });

    it('defaults to the dev channel in a development deployment', async () => {
      const store = new CollectorStore(t.app.db.prisma);
      const dev = new CollectorService(store, t.app.services.links, { deploymentEnv: 'development' }, createLogger('silent'), () =>
        t.app.services.keys.signingSecrets(),
      );
      await dev.publish({ file: Buffer.from('dev build'), version: '1.1.0-dev.1', channel: 'dev', os: 'windows', arch: 'amd64' });
      expect((await dev.download({ os: 'windows', arch: 'amd64' })).release).toMatchObject({ channel: 'dev', version: '1.1.0-dev.1' });
      // The production server (the test app) keeps `stable`, which has no windows build.
      expect((await call(t.url, 'GET', `${DOWNLOAD}?os=windows&arch=amd64`)).status).toBe(404);
    });

    it('points at the new release, under a new filename, once one is published', async () => {
      const published = await t.app.services.collector.publish({ file: binaryV2, version: '1.1.0', channel: 'stable', os: 'linux', arch: 'amd64' });
      const res = await fetchDocumented(`${t.url}${DOWNLOAD}?os=linux&arch=amd64&channel=stable`);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="prophet_collector_v1.1.0_linux_amd64.tar.gz"`);
      expect(findMember(readTarGz(Buffer.from(await res.arrayBuffer())), 'prophet')!.content).toEqual(binaryV2);
      expect(published.filename).not.toBe(rawRelease.filename);
      expect(await t.app.services.collector.latestRelease('stable', 'linux', 'amd64')).toMatchObject({ id: published.id });
    });
  });

  describe('GET /rest/collector/assets/1.0/{release_id}/{filename}', () => {
    const status403 = async (url: URL, code: string) => {
      const res = await call(t.url, 'GET', `${url.pathname}${url.search}`);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
    };

    it('answers 403 for a tampered signature, expiry or path, and for a missing signature', async () => {
      const good = await location('os=linux&arch=arm7&channel=stable');
      expect((await fetchAsset(good)).status).toBe(200);
      const signature = good.searchParams.get('signature')!;
      const tampered = new URL(good);
      tampered.searchParams.set('signature', (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1));
      await status403(tampered, 'invalid_signature');
      const later = new URL(good);
      later.searchParams.set('expires', String(Number(good.searchParams.get('expires')) + 60));
      await status403(later, 'invalid_signature');
      const otherRelease = new URL(good);
      otherRelease.pathname = `/rest/collector/assets/1.0/${rawRelease.id}/${rawRelease.filename}`;
      await status403(otherRelease, 'invalid_signature');
      const unsigned = new URL(good);
      unsigned.search = '';
      await status403(unsigned, 'invalid_signature');
    });

    it('answers 403 link_expired for a link past its expiry', async () => {
      const release = (await t.app.services.collector.latestRelease('stable', 'linux', 'arm7'))!;
      const keys = await t.app.services.collector.linkKeys();
      const expired = new URL(t.app.services.collector.signedAssetUrl(release, Math.floor(Date.now() / 1000) - 1, keys));
      await status403(expired, 'link_expired');
    });

    it('keeps issued links valid across a signing-key rotation', async () => {
      const before = await location('os=linux&arch=arm7&channel=stable');
      await t.app.services.keys.rotate();
      expect((await fetchAsset(before)).status).toBe(200);
      const after = await location('os=linux&arch=arm7&channel=stable');
      expect(after.searchParams.get('signature')).not.toBe(before.searchParams.get('signature'));
      expect((await fetchAsset(after)).status).toBe(200);
    });

    it('answers 405 to other methods', async () => {
      const good = await location('os=linux&arch=arm7&channel=stable');
      expect((await call(t.url, 'POST', `${good.pathname}${good.search}`)).status).toBe(405);
    });
  });

  describe('GraphQL', () => {
    it('lists releases newest first, filtered, without a token', async () => {
      const res = await graphql(t.url, '{ collectorReleases(os: "linux", arch: "arm7") { id version channel platform filename sha256 size createdAt } }');
      expect(res.errors).toBeUndefined();
      expect(res.data.collectorReleases.map((r: { channel: string }) => r.channel)).toEqual(['dev', 'stable']);
      expect(res.data.collectorReleases[1]).toMatchObject({ id: tarRelease.id, platform: 'linux/arm7', size: tarball.length });
    });

    it('answers the latest release of a line, or null', async () => {
      const q = 'query($c: String, $o: String, $a: String) { latestCollectorRelease(channel: $c, os: $o, arch: $a) { version filename } }';
      expect((await graphql(t.url, q, {})).data.latestCollectorRelease).toMatchObject({ version: '1.1.0' });
      expect((await graphql(t.url, q, { c: 'stable', o: 'darwin', a: 'arm64' })).data.latestCollectorRelease).toBeNull();
      const bad = await graphql(t.url, q, { o: 'windows', a: 'arm7' });
      expect(bad.errors?.[0].extensions).toMatchObject({ code: 'unsupported_platform' });
    });

    it('gives the download link with its release', async () => {
      const res = await graphql(t.url, '{ collectorDownload(os: "linux", arch: "arm7") { location expiresAt release { version } } }');
      expect(res.data.collectorDownload).toMatchObject({ location: expect.stringContaining('/rest/collector/assets/1.0/'), release: { version: '0.3.0' } });
    });

    it('finds the latest of many lines in one statement', async () => {
      const before = t.app.db.stats.queries;
      const latest = await t.app.services.collector.latestReleases();
      const sent = t.app.db.stats.recent.slice(-(t.app.db.stats.queries - before));
      expect(sent.filter((sql) => sql.includes('collector_releases'))).toHaveLength(1);
      expect(latest('stable', 'linux', 'amd64')).toMatchObject({ version: '1.1.0' });
      expect(latest('dev', 'linux', 'arm7')).toMatchObject({ version: '0.3.0' });
      expect(latest('pinned', 'linux', 'amd64')).toBeNull();
    });
  });
});
