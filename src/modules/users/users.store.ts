import type { TenantScope } from '../../auth/session.js';
import type { User } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';

interface NewUser {
  customerId: string;
  /** Lowercased by the service. */
  email: string;
  role: string;
  name?: string | null;
}

/** The tenant filter every scoped statement starts with. */
const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/**
 * `users`, their one-time set-password links and their recovery codes. What an admin does is read
 * and written within the admin's tenant scope. Signing in, following a set-password link and a
 * signed-in person's own account name the person by what they present (an email, a link, a
 * session), before any scope exists: those functions take the person's id or credential instead.
 */
export class UserStore {
  constructor(private readonly prisma: Prisma) {}

  /** Oldest first. */
  list(scope: TenantScope, customerId: string): Promise<User[]> {
    return this.prisma.user.findMany({ where: { ...inScope(scope), customerId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  find(scope: TenantScope, id: string): Promise<User | null> {
    return this.prisma.user.findFirst({ where: { ...inScope(scope), id } });
  }

  create(scope: TenantScope, user: NewUser): Promise<User> {
    // The service has already checked this; a store never writes outside the scope it is given.
    if (!scope.tenantIds.has(user.customerId)) throw new Error(`user tenant ${user.customerId} is outside the scope`);
    return this.prisma.user.create({ data: { id: newId('usr'), ...user } });
  }

  async update(scope: TenantScope, id: string, change: { role?: string; status?: string; name?: string | null }): Promise<User | null> {
    const { count } = await this.prisma.user.updateMany({ where: { ...inScope(scope), id }, data: { ...change, updatedAt: new Date() } });
    return count > 0 ? this.find(scope, id) : null;
  }

  /** The person an email names (emails are stored lowercased). */
  findByEmail(email: string): Promise<User | null> {
    return this.prisma.user.findFirst({ where: { email } });
  }

  /** The person a session or a link names. */
  findById(id: string): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { id } });
  }

  /** One more failed sign-in; the `maxFailures`-th locks the account for `lockSeconds`. Returns the lock's end, if any. */
  async recordFailedSignIn(id: string, maxFailures: number, lockSeconds: number): Promise<Date | null> {
    const rows = await this.prisma.$queryRaw<{ locked_until: Date | null }[]>`/* users.failed_sign_in */
      UPDATE users SET failed_sign_ins = CASE WHEN failed_sign_ins + 1 >= ${maxFailures}::int THEN 0 ELSE failed_sign_ins + 1 END,
                       locked_until = CASE WHEN failed_sign_ins + 1 >= ${maxFailures}::int
                                           THEN now() + make_interval(secs => ${lockSeconds}::int) ELSE locked_until END
       WHERE id = ${id} RETURNING locked_until`;
    const until = rows[0]?.locked_until ?? null;
    return until && until.getTime() > Date.now() ? until : null;
  }

  async recordSignIn(id: string): Promise<void> {
    await this.prisma.user.update({ where: { id }, data: { failedSignIns: 0, lockedUntil: null } });
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.prisma.user.update({ where: { id }, data: { passwordHash, failedSignIns: 0, lockedUntil: null, updatedAt: new Date() } });
  }

  /** A new link for the person; its earlier unused links stop working. */
  async createPasswordToken(userId: string, tokenHash: Buffer, expiresAt: Date): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.userPasswordToken.deleteMany({ where: { userId, usedAt: null } }),
      this.prisma.userPasswordToken.create({ data: { userId, tokenHash: new Uint8Array(tokenHash), expiresAt } }),
    ]);
  }

  /** Marks a link used, once: the person it names, or null for a link unknown, used or expired. */
  async usePasswordToken(tokenHash: Buffer): Promise<string | null> {
    const rows = await this.prisma.$queryRaw<{ user_id: string }[]>`/* users.use_password_token */
      UPDATE user_password_tokens SET used_at = now()
       WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now() RETURNING user_id`;
    return rows[0]?.user_id ?? null;
  }

  async setPendingTotp(id: string, box: Buffer): Promise<void> {
    await this.prisma.user.update({ where: { id }, data: { totpPendingBox: new Uint8Array(box) } });
  }

  /** The pending secret becomes the one in use, with new recovery codes, if it is still the one `box` read. */
  async confirmTotp(id: string, pending: Uint8Array, step: bigint, recoveryCodeHashes: Buffer[]): Promise<boolean> {
    const box = new Uint8Array(pending);
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.user.updateMany({
        where: { id, totpPendingBox: box },
        data: { totpBox: box, totpPendingBox: null, totpLastStep: step, updatedAt: new Date() },
      });
      if (count === 0) return false;
      await tx.userRecoveryCode.deleteMany({ where: { userId: id } });
      await tx.userRecoveryCode.createMany({ data: recoveryCodeHashes.map((hash) => ({ userId: id, codeHash: new Uint8Array(hash) })) });
      return true;
    });
  }

  async disableTotp(id: string): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.user.update({ where: { id }, data: { totpBox: null, totpPendingBox: null, totpLastStep: null, updatedAt: new Date() } }),
      this.prisma.userRecoveryCode.deleteMany({ where: { userId: id } }),
    ]);
  }

  /** Records that a code of `step` was used; false when that step or a later one already was (a replay). */
  async useTotpStep(id: string, step: bigint): Promise<boolean> {
    const { count } = await this.prisma.user.updateMany({
      where: { id, OR: [{ totpLastStep: null }, { totpLastStep: { lt: step } }] },
      data: { totpLastStep: step },
    });
    return count > 0;
  }

  /** Marks a recovery code used, once. */
  async useRecoveryCode(userId: string, codeHash: Buffer): Promise<boolean> {
    const { count } = await this.prisma.userRecoveryCode.updateMany({
      where: { userId, codeHash: new Uint8Array(codeHash), usedAt: null },
      data: { usedAt: new Date() },
    });
    return count > 0;
  }
}
