import type { TenantScope } from '../../auth/session.js';
import type { Prisma as PrismaTypes, Profile } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import type { ProfilePage, ProfilePosition } from './profile-page.js';

/** What Pothos plans for a profile selection: nested includes. */
export type ProfileSelection = Pick<PrismaTypes.ProfileFindManyArgs, 'include' | 'select'>;

export interface NewProfile {
  customerId: string;
  name: string;
  description: string | null;
  services: Record<string, Record<string, unknown>>;
  tags: string[];
  updateChannel: string;
  autoUpdate: boolean;
  fleetStaging: boolean;
}

/** Oldest first; the id breaks ties so that cursor pages never skip or repeat a row. */
const ORDER: PrismaTypes.ProfileOrderByWithRelationInput[] = [{ createdAt: 'asc' }, { id: 'asc' }];
const NEWEST_FIRST: PrismaTypes.ProfileOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

/** The tenant filter every statement starts with. */
const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/**
 * The rows on one side of `at` in ORDER: `after` it or `before` it, and with `inclusive` the row at
 * `at` too. Only the position is compared, so the row at `at` need not exist any more.
 */
function beside(at: ProfilePosition, side: 'after' | 'before', inclusive = false): PrismaTypes.ProfileWhereInput {
  const after = side === 'after';
  const tie = inclusive ? (after ? { gte: at.id } : { lte: at.id }) : after ? { gt: at.id } : { lt: at.id };
  return { OR: [{ createdAt: after ? { gt: at.createdAt } : { lt: at.createdAt } }, { createdAt: at.createdAt, id: tie }] };
}

/** The `profiles` table, always read and written within a caller's tenant scope. */
export class ProfileStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Up to `take` profiles of one page, read from past `page.from` in the page's direction: oldest
   * first going forward, newest first going backward.
   */
  page(scope: TenantScope, page: ProfilePage, take: number, query: ProfileSelection = {}): Promise<Profile[]> {
    const forward = page.direction === 'forward';
    return this.prisma.profile.findMany({
      ...query,
      where: { ...inScope(scope), ...(page.from && beside(page.from, forward ? 'after' : 'before')) },
      orderBy: forward ? ORDER : NEWEST_FIRST,
      take,
    });
  }

  /** Whether a profile sits at `at` or on the given side of it: the rows a page starting there passed. */
  async anyBeside(scope: TenantScope, at: ProfilePosition, side: 'after' | 'before'): Promise<boolean> {
    const row = await this.prisma.profile.findFirst({ where: { ...inScope(scope), ...beside(at, side, true) }, select: { id: true } });
    return row !== null;
  }

  count(scope: TenantScope): Promise<number> {
    return this.prisma.profile.count({ where: inScope(scope) });
  }

  find(scope: TenantScope, id: string, query: ProfileSelection = {}): Promise<Profile | null> {
    return this.prisma.profile.findFirst({ ...query, where: { ...inScope(scope), id } });
  }

  async create(scope: TenantScope, profile: NewProfile): Promise<Profile> {
    // The service has already checked this; a store never writes outside the scope it is given.
    if (!scope.tenantIds.has(profile.customerId)) throw new Error(`profile owner ${profile.customerId} is outside the scope`);
    return this.prisma.profile.create({
      data: { id: newId('prof'), ...profile, services: profile.services as PrismaTypes.InputJsonObject },
    });
  }

  /** True when a profile was deleted. Nodes and enrolment credentials using it keep working (FK SET NULL). */
  async delete(scope: TenantScope, id: string): Promise<boolean> {
    const { count } = await this.prisma.profile.deleteMany({ where: { ...inScope(scope), id } });
    return count > 0;
  }
}
