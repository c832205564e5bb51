import type { TenantScope } from '../../auth/session.js';
import type { User, UserSession } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';

interface NewUserSession {
  tokenHash: Buffer;
  userId: string;
  customerId: string;
  address: string | null;
  userAgent: string | null;
  expiresAt: Date;
}

/** A session still in force at `now`: not revoked, before its absolute end, used within the idle period. */
const live = (idleSeconds: number, now = new Date()) => ({
  revokedAt: null,
  expiresAt: { gt: now },
  lastSeenAt: { gt: new Date(now.getTime() - idleSeconds * 1000) },
});

/** How often a session's last use is written at most (every request would be a write per request): a minute, or a quarter of a short idle period. */
const touchEveryMs = (idleSeconds: number) => Math.min(60_000, (idleSeconds * 1000) / 4);

/**
 * `user_sessions`. A request presents its cookie before any scope exists, so the lookup by
 * credential takes the credential; a person's own sessions are named by the person; an admin's
 * reads and revocations run within the admin's tenant scope.
 */
export class UserSessionStore {
  constructor(private readonly prisma: Prisma) {}

  create(session: NewUserSession): Promise<UserSession> {
    return this.prisma.userSession.create({ data: { id: newId('ses'), ...session, tokenHash: new Uint8Array(session.tokenHash) } });
  }

  findByToken(tokenHash: Buffer): Promise<(UserSession & { user: User }) | null> {
    return this.prisma.userSession.findUnique({ where: { tokenHash: new Uint8Array(tokenHash) }, include: { user: true } });
  }

  /** Records a use, at most once a minute per session (more often for idle periods under 4 minutes). */
  async touch(id: string, lastSeenAt: Date, idleSeconds: number): Promise<void> {
    if (Date.now() - lastSeenAt.getTime() < touchEveryMs(idleSeconds)) return;
    await this.prisma.userSession.updateMany({ where: { id, revokedAt: null }, data: { lastSeenAt: new Date() } });
  }

  /** A person's sessions in force, newest first. */
  listOf(userId: string, idleSeconds: number): Promise<UserSession[]> {
    return this.prisma.userSession.findMany({ where: { userId, ...live(idleSeconds) }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] });
  }

  listInScope(scope: TenantScope, userId: string, idleSeconds: number): Promise<UserSession[]> {
    return this.prisma.userSession.findMany({
      where: { customerId: { in: [...scope.tenantIds] }, userId, ...live(idleSeconds) },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    });
  }

  findInScope(scope: TenantScope, id: string): Promise<UserSession | null> {
    return this.prisma.userSession.findFirst({ where: { customerId: { in: [...scope.tenantIds] }, id } });
  }

  /** Revokes one session of a person; false when it is not theirs or already ended by revocation. */
  async revoke(userId: string, id: string): Promise<boolean> {
    const { count } = await this.prisma.userSession.updateMany({ where: { userId, id, revokedAt: null }, data: { revokedAt: new Date() } });
    return count > 0;
  }

  async revokeByToken(tokenHash: Buffer): Promise<UserSession | null> {
    const session = await this.prisma.userSession.findUnique({ where: { tokenHash: new Uint8Array(tokenHash) } });
    if (!session || session.revokedAt) return null;
    await this.revoke(session.userId, session.id);
    return session;
  }

  /** Revokes every session of a person, but `keep`. */
  async revokeAllOf(userId: string, keep?: string): Promise<number> {
    const { count } = await this.prisma.userSession.updateMany({
      where: { userId, revokedAt: null, ...(keep && { id: { not: keep } }) },
      data: { revokedAt: new Date() },
    });
    return count;
  }

  /** Deletes sessions that ended (revoked, expired, or idle) over a day ago: the scheduled purge. */
  async purgeEnded(idleSeconds: number): Promise<number> {
    const dayAgo = new Date(Date.now() - 86_400_000);
    const { count } = await this.prisma.userSession.deleteMany({
      where: { OR: [{ revokedAt: { lt: dayAgo } }, { expiresAt: { lt: dayAgo } }, { lastSeenAt: { lt: new Date(dayAgo.getTime() - idleSeconds * 1000) } }] },
    });
    return count;
  }
}
