import { hashSecret } from '../../auth/secrets.js';
import type { Session } from '../../auth/session.js';
import { DomainError, badRequest } from '../../errors.js';
import type { User } from '../../generated/prisma/client.js';
import { randomToken } from '../../infra/ids.js';
import type { RequestOrigin } from '../../infra/rate-limits.js';
import type { SecretsKey } from '../../infra/secrets-key.js';
import { passwordMatches } from './passwords.js';
import type { SignInGuard } from './sign-in-guard.js';
import { matchingStep, newTotpSecret, otpauthUri } from './totp.js';
import { requirePerson } from './users.service.js';
import type { UserStore } from './users.store.js';

export const RECOVERY_CODE_COUNT = 10;

/** What a TOTP secret is sealed under: its person, so a box copied to another row does not open. */
export const totpSecretContext = (userId: string) => `user-totp:${userId}`;

/** Recovery codes are compared without case or dashes: `abcde-fghij` as printed, or typed any way. */
const recoveryCodeHash = (code: string) => hashSecret(code.replace(/[\s-]/g, '').toLowerCase());

/** 50 random bits each, printed as two groups of five. */
const newRecoveryCode = () =>
  randomToken(7)
    .slice(0, 10)
    .replace(/^(.{5})/, '$1-');

export type SecondFactorUsed = 'totp' | 'recovery_code';

/**
 * A person's optional second factor: a TOTP secret (RFC 6238), enrolled in two steps so that a
 * secret never becomes required before the person's app has shown it produces good codes, with
 * ten one-time recovery codes for a lost device. The secret is sealed under the secrets key;
 * recovery codes are kept as SHA-256 (50 random bits each).
 */
export class SecondFactorService {
  constructor(
    private readonly store: UserStore,
    private readonly secretsKey: SecretsKey,
    private readonly guard: SignInGuard,
  ) {}

  /** Step one: a new secret, pending until confirmed; shown once, as text and as an otpauth URI. */
  async startEnrolment(session: Session): Promise<{ secret: string; otpauthUri: string }> {
    const user = await this.personOf(session);
    if (user.totpBox) throw badRequest('invalid_request', 'Two-factor sign-in is already on; turn it off first to enrol another device');
    const secret = newTotpSecret();
    await this.store.setPendingTotp(user.id, this.secretsKey.seal(totpSecretContext(user.id), secret));
    return { secret, otpauthUri: otpauthUri(secret, user.email) };
  }

  /** Step two: a code from the app turns the factor on; the recovery codes are shown once. */
  async confirmEnrolment(session: Session, code: string): Promise<string[]> {
    const user = await this.personOf(session);
    if (!user.totpPendingBox) throw badRequest('invalid_request', 'No two-factor enrolment is under way; start one first');
    const secret = this.secretsKey.open(totpSecretContext(user.id), user.totpPendingBox);
    const step = matchingStep(secret, code.trim(), Date.now());
    if (step === null) throw new DomainError(400, 'invalid_credentials', 'The code is wrong: enter the 6 digits your app shows now');
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    if (!(await this.store.confirmTotp(user.id, user.totpPendingBox, step, codes.map(recoveryCodeHash)))) {
      throw badRequest('invalid_request', 'Another enrolment started meanwhile; confirm with a code of that one');
    }
    return codes;
  }

  /** Turns the factor off; the password is asked again (counting towards the lock), as a stolen session must not be enough. */
  async disable(session: Session, password: string, origin: RequestOrigin): Promise<boolean> {
    const user = await this.personOf(session);
    await this.guard.assertOpen(user, origin);
    if (!(await passwordMatches(password, user.passwordHash))) {
      await this.guard.failed(user, origin, 'invalid_credentials', { during: 'disable_totp' });
      throw new DomainError(400, 'invalid_credentials', 'The password is wrong');
    }
    await this.store.disableTotp(user.id);
    return true;
  }

  /** At sign-in: which factor a code proves, or null. A TOTP code is good once; so is each recovery code. */
  async verify(user: User, input: { totpCode?: string | null; recoveryCode?: string | null }): Promise<SecondFactorUsed | null> {
    if (!user.totpBox) return null;
    if (input.totpCode) {
      const step = matchingStep(this.secretsKey.open(totpSecretContext(user.id), user.totpBox), input.totpCode.trim(), Date.now());
      return step !== null && (await this.store.useTotpStep(user.id, step)) ? 'totp' : null;
    }
    if (input.recoveryCode && input.recoveryCode.length <= 64) {
      return (await this.store.useRecoveryCode(user.id, recoveryCodeHash(input.recoveryCode))) ? 'recovery_code' : null;
    }
    return null;
  }

  private async personOf(session: Session): Promise<User> {
    const user = await this.store.findById(requirePerson(session).userId);
    if (!user) throw new DomainError(401, 'authentication_error', 'Your account is gone');
    return user;
  }
}
