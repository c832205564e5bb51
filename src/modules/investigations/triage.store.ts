import type { Actor, TenantScope } from '../../auth/session.js';
import type { Investigation, InvestigationActivity, InvestigationComment, Prisma as PrismaTypes, Suppression } from '../../generated/prisma/client.js';
import type { NamedPerson } from '../users/actor-names.store.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import type { ActivityKind } from './triage.model.js';

type Tx = PrismaTypes.TransactionClient;

/** One entry of an investigation's history, as the service words it. */
export interface ActivityEntry {
  kind: ActivityKind;
  data: Record<string, unknown>;
}

/** A suppression to create with a triage change (an AUTHORIZED answer). */
export interface NewSuppression {
  id: string;
  detector: string;
  source: string;
  destination: string;
  reason: string | null;
  expiresAt: Date;
}

/** What a triage change writes, decided on the locked row. */
export interface TriageChange {
  write: TriageWrite;
  actor: Actor;
  entries: ActivityEntry[];
  suppression: NewSuppression | null;
}

/** The triage columns of `investigations` a change writes. */
export type TriageWrite = Pick<
  PrismaTypes.InvestigationUpdateManyMutationInput,
  | 'triageStatus'
  | 'resolution'
  | 'resolvedAt'
  | 'answer'
  | 'answerNote'
  | 'answeredByKind'
  | 'answeredById'
  | 'answeredAt'
  | 'severity'
  | 'severityRaise'
  | 'assigneeId'
>;

export interface SuppressionFilter {
  /** Only those in force at `at` (not revoked, not expired), or only those that are not. */
  active?: { value: boolean; at: Date };
  investigationId?: string;
}

export interface Page {
  limit: number;
  offset: number;
}

const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/** What triage reads of a person: never more than what names them. */
const PERSON = { id: true, email: true, name: true } as const;
const json = (value: Record<string, unknown>) => value as PrismaTypes.InputJsonObject;
/** The order of a thread and of a history: oldest first, the id breaking ties. */
const OLDEST_FIRST = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

function suppressionWhere(scope: TenantScope, customerId: string, f: SuppressionFilter): PrismaTypes.SuppressionWhereInput {
  const inForce = (at: Date) => ({ revokedAt: null, expiresAt: { gt: at } });
  return {
    ...inScope(scope),
    customerId,
    ...(f.investigationId ? { investigationId: f.investigationId } : {}),
    ...(f.active ? (f.active.value ? inForce(f.active.at) : { NOT: inForce(f.active.at) }) : {}),
  };
}

/**
 * Triage's tables: the triage columns of `investigations`, `investigation_comments`,
 * `investigation_activity` and `suppressions`. Reads take the caller's tenant scope; writes take the
 * investigation's own tenant, which the service found within that scope. The tenant comes first in
 * every statement.
 */
export class TriageStore {
  constructor(private readonly prisma: Prisma) {}

  /** The active people of these tenants with one of these roles, by email. */
  activePeopleWithRole(customerIds: readonly string[], roles: readonly string[]): Promise<NamedPerson[]> {
    return this.prisma.user.findMany({
      where: { customerId: { in: [...customerIds] }, status: 'active', role: { in: [...roles] } },
      select: PERSON,
      orderBy: [{ email: 'asc' }, { id: 'asc' }],
    });
  }

  /**
   * Makes a triage change on the investigation as it is now: `decide` is handed the row under its
   * lock (so concurrent answers, status moves and detection's re-analysis wait for each other, and
   * none decides from a stale row) and returns what to write, the history entries and, for an
   * AUTHORIZED answer, a suppression; all commit together. A `decide` that throws writes nothing.
   * Null when the investigation is gone (its tenant deleted since the caller found it).
   */
  change(
    customerId: string,
    id: string,
    decide: (current: Investigation) => TriageChange,
  ): Promise<{ before: Investigation; after: Investigation; suppression: Suppression | null } | null> {
    return this.prisma.$transaction(async (tx) => {
      await lockInvestigation(tx, customerId, id);
      const before = await tx.investigation.findFirst({ where: { customerId, id } });
      if (!before) return null;
      const { write, actor, entries, suppression } = decide(before);
      const after = await tx.investigation.update({ where: { customerId, id }, data: write });
      const created = suppression
        ? await tx.suppression.create({ data: { ...suppression, customerId, investigationId: id, actorKind: actor.kind, actorId: actor.id } })
        : null;
      await this.addActivity(tx, customerId, id, actor, entries);
      return { before, after, suppression: created };
    });
  }

  /** Adds a comment and its history entry, unless the thread already holds `limit` comments (null). */
  addComment(customerId: string, investigationId: string, actor: Actor, text: string, limit: number): Promise<InvestigationComment | null> {
    return this.prisma.$transaction(async (tx) => {
      // Serializes commenters of one investigation, so the limit holds under concurrency.
      await lockInvestigation(tx, customerId, investigationId);
      if ((await tx.investigationComment.count({ where: { customerId, investigationId } })) >= limit) return null;
      const comment = await tx.investigationComment.create({
        data: { id: newId('cmt'), customerId, investigationId, actorKind: actor.kind, actorId: actor.id, text },
      });
      await this.addActivity(tx, customerId, investigationId, actor, [{ kind: 'commented', data: { comment_id: comment.id } }]);
      return comment;
    });
  }

  comments(scope: TenantScope, investigationId: string, page: Page): Promise<InvestigationComment[]> {
    return this.prisma.investigationComment.findMany({
      where: { ...inScope(scope), investigationId },
      orderBy: OLDEST_FIRST,
      skip: page.offset,
      take: page.limit,
    });
  }

  commentCount(scope: TenantScope, investigationId: string): Promise<number> {
    return this.prisma.investigationComment.count({ where: { ...inScope(scope), investigationId } });
  }

  activity(scope: TenantScope, investigationId: string, page: Page): Promise<InvestigationActivity[]> {
    return this.prisma.investigationActivity.findMany({
      where: { ...inScope(scope), investigationId },
      orderBy: OLDEST_FIRST,
      skip: page.offset,
      take: page.limit,
    });
  }

  activityCount(scope: TenantScope, investigationId: string): Promise<number> {
    return this.prisma.investigationActivity.count({ where: { ...inScope(scope), investigationId } });
  }

  /** A tenant's suppressions, newest first. */
  suppressions(scope: TenantScope, customerId: string, filter: SuppressionFilter, page: Page): Promise<Suppression[]> {
    return this.prisma.suppression.findMany({
      where: suppressionWhere(scope, customerId, filter),
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: page.offset,
      take: page.limit,
    });
  }

  suppressionCount(scope: TenantScope, customerId: string, filter: SuppressionFilter): Promise<number> {
    return this.prisma.suppression.count({ where: suppressionWhere(scope, customerId, filter) });
  }

  findSuppression(scope: TenantScope, id: string): Promise<Suppression | null> {
    return this.prisma.suppression.findFirst({ where: { ...inScope(scope), id } });
  }

  /** Revokes a suppression not yet revoked, noting it in its investigation's history; null when it already was. */
  revokeSuppression(customerId: string, suppression: Pick<Suppression, 'id' | 'investigationId'>, actor: Actor, at: Date): Promise<Suppression | null> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.suppression.updateMany({
        where: { customerId, id: suppression.id, revokedAt: null },
        data: { revokedAt: at, revokedByKind: actor.kind, revokedById: actor.id },
      });
      if (count === 0) return null;
      if (suppression.investigationId) {
        await this.addActivity(tx, customerId, suppression.investigationId, actor, [{ kind: 'suppression_revoked', data: { suppression_id: suppression.id } }]);
      }
      return tx.suppression.findFirst({ where: { customerId, id: suppression.id } });
    });
  }

  /** The subjects of a tenant detection leaves alone at `at`: `detector|source|destination` keys (subjectKey). */
  async suppressedSubjects(customerId: string, at: Date): Promise<Set<string>> {
    const rows = await this.prisma.suppression.findMany({
      where: { customerId, revokedAt: null, expiresAt: { gt: at } },
      select: { detector: true, source: true, destination: true },
    });
    return new Set(rows.map(subjectKey));
  }

  private async addActivity(tx: Tx, customerId: string, investigationId: string, actor: Actor, entries: ActivityEntry[]): Promise<void> {
    const now = Date.now();
    // Entries of one change, a millisecond apart, so that the history reads in the order they were made.
    await tx.investigationActivity.createMany({
      data: entries.map((e, i) => ({
        id: newId('act'),
        customerId,
        investigationId,
        kind: e.kind,
        actorKind: actor.kind,
        actorId: actor.id,
        data: json(e.data),
        createdAt: new Date(now + i),
      })),
    });
  }
}

/** Takes the investigation's row lock for the rest of the transaction. */
async function lockInvestigation(tx: Tx, customerId: string, id: string): Promise<void> {
  await tx.$executeRaw`SELECT 1 FROM investigations WHERE customer_id = ${customerId} AND id = ${id} FOR UPDATE`;
}

/** A suppression's subject as detection matches it. */
export const subjectKey = (s: { detector: string; source: string; destination: string }) => `${s.detector}\u0000${s.source}\u0000${s.destination}`;
