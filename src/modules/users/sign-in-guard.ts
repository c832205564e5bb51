import type { SignInSettings } from '../../config.js';
import { DomainError } from '../../errors.js';
import type { User } from '../../generated/prisma/client.js';
import type { RequestOrigin } from '../../infra/rate-limits.js';
import type { EventRecorder } from '../events/events.service.js';
import type { UserStore } from './users.store.js';

/** 429 `too_many_attempts`, saying until when: an account locked, or an address over its limit. */
export const lockedOut = (until: Date, by: 'account' | 'address') => {
  const seconds = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000));
  const at = until.toISOString().slice(11, 16);
  const reason = by === 'account' ? 'Too many failed sign-ins for this account' : 'Too many sign-in attempts from this address';
  return new DomainError(429, 'too_many_attempts', `${reason}; try again after ${at} UTC (in ${Math.ceil(seconds / 60)} min)`, {
    headers: { 'retry-after': String(seconds) },
    details: { retry_after_seconds: seconds },
  });
};

type SignInEvent = 'signed_in' | 'sign_in_failed' | 'signed_out';

/**
 * The account lock and the `sign_ins` events, for every place a person proves who they are with a
 * secret: signing in, and typing their password again to change it or to turn the second factor
 * off (a stolen session must not be a way to guess the password without limit).
 */
export class SignInGuard {
  constructor(
    private readonly users: UserStore,
    private readonly events: EventRecorder,
    private readonly settings: Pick<SignInSettings, 'maxFailures' | 'lockoutSeconds'>,
  ) {}

  /** 429 while the account is locked; the attempt is recorded. */
  async assertOpen(user: User, origin: RequestOrigin): Promise<void> {
    if (!user.lockedUntil || user.lockedUntil.getTime() <= Date.now()) return;
    await this.failed(user, origin, 'locked');
    throw lockedOut(user.lockedUntil, 'account');
  }

  /** Records a refused attempt; a wrong secret counts towards the lock, and the one that locks throws 429. */
  async failed(user: User, origin: RequestOrigin, reason: string, data: Record<string, unknown> = {}): Promise<void> {
    // A locked or disabled account's attempt proves nothing new: only a wrong secret counts.
    const wrongSecret = reason === 'invalid_credentials' || reason === 'invalid_second_factor';
    const lockedUntil = wrongSecret ? await this.users.recordFailedSignIn(user.id, this.settings.maxFailures, this.settings.lockoutSeconds) : null;
    await this.record(user, 'sign_in_failed', { address: origin.address, reason, ...data });
    if (lockedUntil) throw lockedOut(lockedUntil, 'account');
  }

  async record(user: User, kind: SignInEvent, data: Record<string, unknown>): Promise<void> {
    await this.events.record({
      customerId: user.customerId,
      topic: 'sign_ins',
      kind,
      subject: user.id,
      data: { user_id: user.id, email: user.email, ...data },
    });
  }
}
