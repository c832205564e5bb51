import { createHash } from 'node:crypto';
import type { Config } from '../../config.js';
import { DomainError, badRequest, conflict } from '../../errors.js';
import type { CollectorRelease } from '../../generated/prisma/client.js';
import { newId } from '../../infra/ids.js';
import type { PublicLinks } from '../../infra/links.js';
import type { Logger } from '../../infra/logger.js';
import { ASSET_LINK_LIFETIME_SECONDS, type LinkKey, type SigningSecret, checkLink, currentLinkKey, deriveLinkKey, signLink } from './asset-links.js';
import type { CollectorStore } from './collector.store.js';
import {
  ARCHES,
  CHANNELS,
  type Channel,
  OSES,
  type Platform,
  SUPPORTED_PLATFORMS,
  collectorError,
  parseChannel,
  parsePlatform,
  parseVersion,
  releaseFilename,
} from './platforms.js';
import { installScript, uninstallScript } from './scripts.js';
import { MAX_TARBALL_BYTES, TarballError, findMember, isGzip, packSingleFile, readTarGz } from './tarball.js';

/** The member the SDK and install.sh extract from a release tarball (wire.md 13). */
export const BINARY_NAME = 'prophet';

export interface PublishInput {
  /** The file as given: a gzip tar holding `prophet`, or the raw binary to be packaged. */
  file: Buffer;
  version: string;
  channel: string;
  os: string;
  arch: string;
}

export interface DownloadLink {
  location: string;
  expiresAt: Date;
  release: CollectorRelease;
}

export interface AssetRequest {
  releaseId: string;
  filename: string;
  expires: string | null;
  signature: string | null;
}

/** `GET /rest/collector/assets/1.0/<release_id>/<filename>`: what the signed link points at. */
export const assetPath = (release: Pick<CollectorRelease, 'id' | 'filename'>) =>
  `/rest/collector/assets/1.0/${encodeURIComponent(release.id)}/${encodeURIComponent(release.filename)}`;

/** The admin CLI's and the API's view of a release (snake_case like every REST body). */
export const releaseView = (r: CollectorRelease) => ({
  id: r.id,
  version: r.version,
  channel: r.channel,
  os: r.os,
  arch: r.arch,
  sha256: r.sha256,
  size: r.size,
  filename: r.filename,
  created_at: r.createdAt.toISOString(),
});

/**
 * Collector releases (api-spec.md section 4, Collector): publishing builds, picking the latest
 * for a channel and platform, handing out short-lived signed links to the tarballs, serving
 * them, and the install/uninstall scripts. Everything here is public: releases are not secret.
 */
export class CollectorService {
  constructor(
    private readonly store: CollectorStore,
    private readonly links: PublicLinks,
    private readonly config: Pick<Config, 'deploymentEnv'>,
    private readonly logger: Logger,
    /** The token signing keys' private scalars (KeyRing.signingSecrets), which link keys derive from. */
    private readonly signingSecrets: () => SigningSecret[],
  ) {}

  /** `stable`, or `dev` in a development deployment (api-spec.md: the download's default). */
  get defaultChannel(): Channel {
    return this.config.deploymentEnv === 'development' ? 'dev' : 'stable';
  }

  async publish(input: PublishInput): Promise<CollectorRelease> {
    const platform = this.publishPlatform(input.os, input.arch);
    const channel = input.channel.trim().toLowerCase();
    if (!(CHANNELS as readonly string[]).includes(channel)) {
      throw badRequest('invalid_channel', `--channel must be one of ${CHANNELS.join(', ')}, got "${input.channel}"`);
    }
    const version = parseVersion(input.version);
    const content = this.tarballOf(input.file);
    const sha256 = createHash('sha256').update(content).digest('hex');
    const filename = releaseFilename(version, platform);
    const siblings = await this.store.sameBuild(version, platform.os, platform.arch);
    if (siblings.some((r) => r.channel === channel)) {
      throw conflict('release_exists', `${version} for ${platform.os}/${platform.arch} is already published on ${channel}`);
    }
    // The filename names the bytes (the SDK caches by it): promoting one build from dev to stable
    // is fine, a different build under the same version is not.
    const other = siblings.find((r) => r.sha256 !== sha256);
    if (other) {
      throw conflict(
        'release_exists',
        `${version} for ${platform.os}/${platform.arch} is published on ${other.channel} with different content; publish a new version`,
      );
    }
    try {
      return await this.store.create({ id: newId('rel'), version, channel, ...platform, sha256, filename, content });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') {
        throw conflict('release_exists', `${version} for ${platform.os}/${platform.arch} is already published on ${channel}`);
      }
      throw error;
    }
  }

  /** Releases newest first, optionally of one channel, os and arch (each validated). */
  async releases(filter: { channel?: string | null; os?: string | null; arch?: string | null }): Promise<CollectorRelease[]> {
    const pick = (name: 'channel' | 'os' | 'arch', value: string | null | undefined, allowed: readonly string[]) => {
      const v = value?.trim().toLowerCase();
      if (!v) return undefined;
      if (!allowed.includes(v)) throw badRequest(`invalid_${name}`, `${name} must be one of ${allowed.join(', ')}`);
      return v;
    };
    return this.lookup(() =>
      this.store.releases({
        channel: pick('channel', filter.channel, CHANNELS),
        os: pick('os', filter.os, OSES),
        arch: pick('arch', filter.arch, ARCHES),
      }),
    );
  }

  /**
   * The newest release of a channel and platform, or null. Lenient on purpose, for the nodes
   * module: any value without a release (a `pinned` channel, an unknown arch) is simply null.
   * "Newest" is the last one published.
   */
  async latestRelease(channel: string, os: string, arch: string): Promise<CollectorRelease | null> {
    return this.store.latest(channel, os, arch);
  }

  /**
   * The newest release of every channel/os/arch line in one statement, for lists of nodes:
   * `(await latestReleases())(channel, os, arch)`.
   */
  async latestReleases(): Promise<(channel: string, os: string, arch: string) => CollectorRelease | null> {
    const rows = await this.store.latestOfEveryLine();
    const byLine = new Map(rows.map((r) => [`${r.channel}/${r.os}/${r.arch}`, r]));
    return (channel, os, arch) => byLine.get(`${channel}/${os}/${arch}`) ?? null;
  }

  /** `latestCollectorRelease`: like the download, with defaults and 400 for invalid values. */
  async latest(args: { channel?: string | null; os?: string | null; arch?: string | null }): Promise<CollectorRelease | null> {
    const platform = parsePlatform(args.os, args.arch);
    const channel = parseChannel(args.channel, this.defaultChannel);
    return this.lookup(() => this.store.latest(channel, platform.os, platform.arch));
  }

  /** GET /rest/collector/download/1.0: a signed link to the latest tarball (302 Location). */
  async download(args: { os?: string | null; arch?: string | null; channel?: string | null }): Promise<DownloadLink> {
    const platform = parsePlatform(args.os, args.arch);
    const channel = parseChannel(args.channel, this.defaultChannel);
    const { release, keys } = await this.lookup(async () => ({
      release: await this.store.latest(channel, platform.os, platform.arch),
      keys: await this.linkKeys(),
    }));
    if (!release) {
      throw collectorError(404, 'release_not_found', `No ${channel} collector release for ${platform.os}/${platform.arch}`);
    }
    return this.linkTo(release, keys);
  }

  /** A signed link to a release's tarball, valid for ASSET_LINK_LIFETIME_SECONDS. */
  async linkTo(release: CollectorRelease, keys?: LinkKey[]): Promise<DownloadLink> {
    const expires = Math.floor(Date.now() / 1000) + ASSET_LINK_LIFETIME_SECONDS;
    return { location: this.signedAssetUrl(release, expires, keys ?? (await this.linkKeys())), expiresAt: new Date(expires * 1000), release };
  }

  /** An absolute link to a release's tarball that is valid until `expires` (unix seconds). */
  signedAssetUrl(release: CollectorRelease, expires: number, keys: LinkKey[]): string {
    const key = currentLinkKey(keys);
    if (!key) throw new Error('no signing key to sign collector download links with');
    const path = assetPath(release);
    return `${this.links.base()}${path}?expires=${expires}&signature=${signLink(key, path, expires)}`;
  }

  /** The key material links are signed and checked with; see asset-links.ts. */
  async linkKeys(): Promise<LinkKey[]> {
    return this.signingSecrets().map(deriveLinkKey);
  }

  /** The tarball behind a signed link: 403 for a tampered or expired link, 404 for a gone release. */
  async openAsset(request: AssetRequest): Promise<{ release: CollectorRelease; content: Buffer }> {
    const path = assetPath({ id: request.releaseId, filename: request.filename });
    const keys = await this.lookup(() => this.linkKeys());
    const check = checkLink(keys, path, request.expires, request.signature, Math.floor(Date.now() / 1000));
    if (check === 'expired') {
      throw collectorError(403, 'link_expired', 'This download link has expired; request a new one from /rest/collector/download/1.0');
    }
    if (check === 'invalid') throw collectorError(403, 'invalid_signature', 'This download link is not valid');
    const found = await this.lookup(async () => {
      const release = await this.store.find(request.releaseId);
      return release && { release, content: await this.store.assetContent(release.id) };
    });
    if (!found || found.release.filename !== request.filename || !found.content) {
      throw collectorError(404, 'release_not_found', 'This collector release is no longer available');
    }
    return { release: found.release, content: found.content };
  }

  installScript(): string {
    return installScript({ baseUrl: this.links.base(), defaultChannel: this.defaultChannel });
  }

  uninstallScript(): string {
    return uninstallScript({ baseUrl: this.links.base() });
  }

  /** Validation for publishing, with the CLI's wording. */
  private publishPlatform(os: string, arch: string): Platform {
    const o = os.trim().toLowerCase();
    const a = arch.trim().toLowerCase();
    if (!(OSES as readonly string[]).includes(o)) throw badRequest('invalid_os', `--os must be one of ${OSES.join(', ')}, got "${os}"`);
    if (!(ARCHES as readonly string[]).includes(a)) throw badRequest('invalid_arch', `--arch must be one of ${ARCHES.join(', ')}, got "${arch}"`);
    if (!(SUPPORTED_PLATFORMS as readonly string[]).includes(`${o}/${a}`)) {
      throw badRequest('unsupported_platform', `There is no ${o}/${a} build; supported pairs: ${SUPPORTED_PLATFORMS.join(', ')}`);
    }
    return parsePlatform(o, a);
  }

  /** A ready gzip tar is checked and kept as it is; anything else is the binary, packaged here. */
  private tarballOf(file: Buffer): Buffer {
    if (file.length === 0) throw badRequest('invalid_release_file', 'The release file is empty');
    if (file.length > MAX_TARBALL_BYTES) throw badRequest('invalid_release_file', `The release file is larger than ${MAX_TARBALL_BYTES} bytes`);
    if (!isGzip(file)) return packSingleFile(BINARY_NAME, file, { mode: 0o755, mtime: new Date() });
    let member;
    try {
      member = findMember(readTarGz(file), BINARY_NAME);
    } catch (error) {
      if (error instanceof TarballError) throw badRequest('invalid_release_file', `The file is gzip but not a readable tar: ${error.message}`);
      throw error;
    }
    if (!member) throw badRequest('invalid_release_file', `The tarball has no regular file named "${BINARY_NAME}" (at any depth)`);
    if (member.content.length === 0) throw badRequest('invalid_release_file', `"${member.name}" in the tarball is empty`);
    return file;
  }

  /** Storage failures while looking releases up are the spec's 500 `error`, not a masked bug. */
  private async lookup<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.logger.error('collector.release_lookup_failed', { error });
      throw collectorError(500, 'release_lookup_failed', 'Collector release lookup failed');
    }
  }
}
