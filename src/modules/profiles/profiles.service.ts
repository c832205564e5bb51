import type { Session } from '../../auth/session.js';
import { notFound, unauthorized } from '../../errors.js';
import type { Profile } from '../../generated/prisma/client.js';
import { plausibleId } from '../../infra/ids.js';
import { type CreateProfileInput, validateCreateProfile } from './profile-input.js';
import { type ProfilePageArgs, profilePage } from './profile-page.js';
import type { ProfileSelection, ProfileStore } from './profiles.store.js';

/** One page of the list, oldest first, and whether rows lie beyond it on either side. */
export interface ProfilesPage {
  profiles: Profile[];
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

/**
 * Profiles: reusable collector capture configuration (api-spec.md Profiles, wire.md 12). Every
 * operation needs the node_api scope and sees only the caller's tree; a profile outside it
 * behaves as missing.
 */
export class ProfileService {
  constructor(private readonly store: ProfileStore) {}

  /**
   * A page of the caller's tree's profiles (or of the one tenant of it `customerId` names: 404
   * `not_found` outside the tree), oldest first, by keyset (profile-page.ts): a cursor
   * whose profile was deleted since still marks where the page starts. 400 `invalid_request` for a
   * cursor this list did not hand out.
   */
  async page(session: Session, args: ProfilePageArgs & { customerId?: string | null }, query: ProfileSelection = {}): Promise<ProfilesPage> {
    const scope = await session.listScope('profiles.read', args.customerId);
    const page = profilePage(args);
    const forward = page.direction === 'forward';
    // One row more than the page tells whether another page follows; the rows the cursor passed
    // (at or behind it, as they are now) tell whether one precedes.
    const [rows, passed] = await Promise.all([
      this.store.page(scope, page, page.size + 1, query),
      page.from ? this.store.anyBeside(scope, page.from, forward ? 'before' : 'after') : false,
    ]);
    const more = rows.length > page.size;
    const profiles = rows.slice(0, page.size);
    if (!forward) profiles.reverse();
    return forward ? { profiles, hasPreviousPage: passed, hasNextPage: more } : { profiles, hasPreviousPage: more, hasNextPage: passed };
  }

  /** How many profiles the caller's tree holds, or the one tenant of it `customerId` names. */
  async count(session: Session, customerId?: string | null): Promise<number> {
    return this.store.count(await session.listScope('profiles.read', customerId));
  }

  /** A profile in the caller's tree, or null. */
  async find(session: Session, profileId: string, query: ProfileSelection = {}): Promise<Profile | null> {
    session.assert('profiles.read');
    if (!plausibleId(profileId)) return null;
    return this.store.find(await session.tenantScope(), profileId, query);
  }

  /**
   * Creates a profile for the caller, or for `customerId` when it is in the caller's tree.
   * Services are stored exactly as submitted; defaults apply only at delivery.
   */
  async create(session: Session, input: CreateProfileInput): Promise<Profile> {
    session.assert('profiles.create');
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
    session.assert('profiles.delete');
    const deleted = plausibleId(profileId) && (await this.store.delete(await session.tenantScope(), profileId));
    if (!deleted) throw notFound('not_found', `Profile ${profileId} was not found`);
    return { profileId };
  }
}
