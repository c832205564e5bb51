import type { TenantScope } from '../../auth/session.js';
import type { Prisma as PrismaTypes, Profile } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';

/** What Pothos plans for a profile selection: nested includes, and paging for a connection. */
export type ProfileQuery = Omit<PrismaTypes.ProfileFindManyArgs, 'where' | 'orderBy'>;
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

/** The tenant filter every statement starts with. */
const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/** The `profiles` table, always read and written within a caller's tenant scope. */
export class ProfileStore {
  constructor(private readonly prisma: Prisma) {}

  list(scope: TenantScope, query: ProfileQuery = {}): Promise<Profile[]> {
    return this.prisma.profile.findMany({ ...query, where: inScope(scope), orderBy: ORDER });
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
