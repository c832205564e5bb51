import { Scopes } from '../../auth/scopes.js';
import type { Session } from '../../auth/session.js';
import { notFound, unauthorized } from '../../errors.js';
import type { Profile } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import { type CreateProfileInput, validateCreateProfile } from './profile-input.js';
import type { ProfileQuery, ProfileSelection, ProfileStore } from './profiles.store.js';

/**
 * Profiles: reusable collector capture configuration (api-spec.md Profiles, wire.md 12). Every
 * operation needs the node_api scope and sees only the caller's tree; a profile outside it
 * behaves as missing.
 */
export class ProfileService {
  constructor(private readonly store: ProfileStore) {}

  /** The caller's tree's profiles, oldest first. */
  async list(session: Session, query: ProfileQuery = {}): Promise<Profile[]> {
    session.requireScope(Scopes.nodeApi);
    return this.store.list(await session.tenantScope(), query);
  }

  async count(session: Session): Promise<number> {
    session.requireScope(Scopes.nodeApi);
    return this.store.count(await session.tenantScope());
  }

  /** A profile in the caller's tree, or null. */
  async find(session: Session, profileId: string, query: ProfileSelection = {}): Promise<Profile | null> {
    session.requireScope(Scopes.nodeApi);
    if (!plausibleId(profileId)) return null;
    return this.store.find(await session.tenantScope(), profileId, query);
  }

  /**
   * Creates a profile for the caller, or for `customerId` when it is in the caller's tree.
   * Services are stored exactly as submitted; defaults apply only at delivery.
   */
  async create(session: Session, input: CreateProfileInput): Promise<Profile> {
    session.requireScope(Scopes.nodeApi);
    const { customerId, ...profile } = validateCreateProfile(input);
    const owner = customerId ?? session.customerId;
    if (!(await session.canSee(owner))) throw unauthorized(`Cannot create profiles for customer ${owner}`);
    try {
      return await this.store.create(await session.tenantScope(), { ...profile, customerId: owner });
    } catch (error) {
      // The owner was deleted between the tree lookup and the insert.
      if ((error as { code?: string }).code === 'P2003') throw unauthorized(`Cannot create profiles for customer ${owner}`);
      throw error;
    }
  }

  /** Deletes a profile in the caller's tree; nodes using it fall back to the server defaults. */
  async delete(session: Session, profileId: string): Promise<{ profileId: string }> {
    session.requireScope(Scopes.nodeApi);
    const deleted = plausibleId(profileId) && (await this.store.delete(await session.tenantScope(), profileId));
    if (!deleted) throw notFound('not_found', `Profile ${profileId} was not found`);
    return { profileId };
  }
}
