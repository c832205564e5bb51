import DataLoader from 'dataloader';
import type { CollectorRelease, Profile, Tenant } from '../generated/prisma/client.js';
import type { Prisma } from '../infra/database.js';
import { liveTenant } from '../tenancy/tenant-deletions.store.js';

/** `channel/os/arch`: one platform's release line. */
export const releaseKey = (channel: string, os: string, arch: string) => `${channel}/${os}/${arch}`;

/**
 * Per-request batch loaders: a list of N nodes asks for their profiles and latest releases in one
 * statement each. Created lazily, so requests that need none pay nothing.
 */
export class Loaders {
  private profiles?: DataLoader<string, Profile | null>;
  private releases?: DataLoader<string, CollectorRelease | null>;
  private tenants?: DataLoader<string, Tenant | null>;

  constructor(private readonly prisma: Prisma) {}

  get profile(): DataLoader<string, Profile | null> {
    this.profiles ??= byId((ids) => this.prisma.profile.findMany({ where: { id: { in: ids } } }));
    return this.profiles;
  }

  get tenant(): DataLoader<string, Tenant | null> {
    this.tenants ??= byId((ids) => this.prisma.tenant.findMany({ where: { id: { in: ids }, ...liveTenant } }));
    return this.tenants;
  }

  /** The newest release of each requested `channel/os/arch` line. */
  get latestRelease(): DataLoader<string, CollectorRelease | null> {
    this.releases ??= new DataLoader(async (keys) => {
      const wanted = keys.map((k) => k.split('/'));
      const rows = await this.prisma.collectorRelease.findMany({
        // Only releases whose tarball is stored can be installed (as the collector module rules).
        where: { asset: { isNot: null }, OR: wanted.map(([channel, os, arch]) => ({ channel, os, arch })) },
        orderBy: { createdAt: 'desc' },
        distinct: ['channel', 'os', 'arch'],
      });
      const byKey = new Map(rows.map((r) => [releaseKey(r.channel, r.os, r.arch), r]));
      return keys.map((k) => byKey.get(k) ?? null);
    });
    return this.releases;
  }
}

/** A loader of rows by primary key: one `IN` query per batch, null for ids that do not exist. */
function byId<T extends { id: string }>(load: (ids: string[]) => Promise<T[]>): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const byKey = new Map((await load([...ids])).map((row) => [row.id, row]));
    return ids.map((id) => byKey.get(id) ?? null);
  });
}
