import type { CollectorRelease } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

export interface ReleaseFilter {
  channel?: string;
  os?: string;
  arch?: string;
}

export interface NewRelease {
  id: string;
  version: string;
  channel: string;
  os: string;
  arch: string;
  sha256: string;
  filename: string;
  content: Buffer;
}

/**
 * Collector releases and their tarballs. Releases are global, not tenant data (every tenant runs
 * the same builds), so these functions take no tenant scope. Tarball bytes live in their own table
 * and are read only by `assetContent`; every other read leaves them on disk.
 */
export class CollectorStore {
  constructor(private readonly prisma: Prisma) {}

  /** Releases newest first; only those whose tarball is stored (nothing else can be served). */
  releases(filter: ReleaseFilter): Promise<CollectorRelease[]> {
    return this.prisma.collectorRelease.findMany({
      where: { ...filter, asset: { isNot: null } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  }

  /** The newest release of one line: the last one published, as the nodes module also reads it. */
  latest(channel: string, os: string, arch: string): Promise<CollectorRelease | null> {
    return this.prisma.collectorRelease.findFirst({
      where: { channel, os, arch, asset: { isNot: null } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  }

  /** The newest release of every line, in one statement (for lists of nodes). */
  latestOfEveryLine(): Promise<CollectorRelease[]> {
    return this.prisma.collectorRelease.findMany({
      where: { asset: { isNot: null } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      distinct: ['channel', 'os', 'arch'],
    });
  }

  find(id: string): Promise<CollectorRelease | null> {
    return this.prisma.collectorRelease.findUnique({ where: { id } });
  }

  /** Releases of one version and platform on any channel (the same filename names them all). */
  sameBuild(version: string, os: string, arch: string): Promise<CollectorRelease[]> {
    return this.prisma.collectorRelease.findMany({ where: { version, os, arch } });
  }

  async assetContent(releaseId: string): Promise<Buffer | undefined> {
    const asset = await this.prisma.collectorReleaseAsset.findUnique({ where: { releaseId } });
    return asset ? Buffer.from(asset.content) : undefined;
  }

  /** Release row and tarball in one statement, so a release is never visible without its bytes. */
  create(release: NewRelease): Promise<CollectorRelease> {
    const { content, ...row } = release;
    return this.prisma.collectorRelease.create({
      data: { ...row, size: content.length, asset: { create: { content: new Uint8Array(content) } } },
    });
  }
}
