import type { TenantScope } from '../../auth/session.js';
import { type Investigation, type Node, Prisma as PrismaTypes, type TriageAnswer, type TriageStatus } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import type { Analysis, Disposition } from './investigation.model.js';

/** What Pothos plans for an investigation selection. */
export type InvestigationSelection = Pick<PrismaTypes.InvestigationFindManyArgs, 'select'>;

export interface InvestigationFilter {
  disposition?: Disposition;
  minConfidence?: number;
  since?: Date;
  until?: Date;
  triageStatus?: TriageStatus;
  /** true: not yet resolved (any triage status but `resolved`); false: resolved. */
  open?: boolean;
  answer?: TriageAnswer;
  assigneeId?: string;
  sort: 'severity' | 'recent' | 'triage_status' | 'answer' | 'assignee';
}

/** What a detection run writes about one episode. */
export interface InvestigationWrite {
  detector: string;
  subject: string;
  source: string;
  destination: string;
  severity: number;
  disposition: Disposition | null;
  confidence: number | null;
  headline: string | null;
  tags: string[];
  relatedAlertsCount: number;
  nodeIds: string[];
  /** The detector's episode, kept so that later runs can merge into it and re-analyse. */
  evidence: object;
  firstActivityAt: Date;
  lastActivityAt: Date;
}

type Order = PrismaTypes.InvestigationOrderByWithRelationInput[];
// Most severe first; among equals the latest detection, then the id so pages never overlap.
const BY_SEVERITY: Order = [{ severity: 'desc' }, { detectedAt: 'desc' }, { id: 'desc' }];
const ORDER: Record<InvestigationFilter['sort'], Order> = {
  severity: BY_SEVERITY,
  recent: [{ createdAt: 'desc' }, { id: 'desc' }],
  // The enums' declaration order: NEW first; UNAUTHORIZED first and unanswered last.
  triage_status: [{ triageStatus: 'asc' }, ...BY_SEVERITY],
  answer: [{ answer: { sort: 'asc', nulls: 'last' } }, ...BY_SEVERITY],
  assignee: [{ assigneeId: { sort: 'asc', nulls: 'last' } }, ...BY_SEVERITY],
};

const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

function where(scope: TenantScope, f: InvestigationFilter): PrismaTypes.InvestigationWhereInput {
  return {
    ...inScope(scope),
    ...(f.disposition ? { disposition: f.disposition } : {}),
    ...(f.minConfidence !== undefined ? { confidence: { gte: f.minConfidence } } : {}),
    ...(f.triageStatus ? { triageStatus: f.triageStatus } : {}),
    // Under AND: beside an exact triageStatus, both hold.
    ...(f.open !== undefined ? { AND: [{ triageStatus: f.open ? { not: 'resolved' } : { equals: 'resolved' } }] } : {}),
    ...(f.answer ? { answer: f.answer } : {}),
    ...(f.assigneeId ? { assigneeId: f.assigneeId } : {}),
    ...(f.since || f.until ? { createdAt: { ...(f.since ? { gte: f.since } : {}), ...(f.until ? { lte: f.until } : {}) } } : {}),
  };
}

const json = (value: unknown) => value as PrismaTypes.InputJsonValue;

/** A collector of one tenant: at an address (`localIp`), or by its id. */
export type NodeKey = [customerId: string, localIpOrId: string];

/**
 * The `investigations` table, and the collectors an investigation names. Reads take the caller's
 * tenant scope; the detection runner's writes take the one tenant they run for. Either way the
 * tenant is the first condition of every statement.
 */
export class InvestigationStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * One page, in two statements: the page's ids first (the sort indexes hold every column that
   * query reads, so it is an index-only scan however wide the rows are), then those rows.
   */
  async list(
    scope: TenantScope,
    filter: InvestigationFilter,
    page: { limit: number; offset: number },
    query: InvestigationSelection = {},
  ): Promise<Investigation[]> {
    const ids = await this.prisma.investigation.findMany({
      where: where(scope, filter),
      orderBy: ORDER[filter.sort],
      skip: page.offset,
      take: page.limit,
      select: { id: true },
    });
    if (ids.length === 0) return [];
    const rows = await this.prisma.investigation.findMany({
      ...(query.select ? { select: { ...query.select, id: true } } : {}),
      where: { ...inScope(scope), id: { in: ids.map((r) => r.id) } },
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((r) => byId.get(r.id)).filter((r): r is Investigation => r !== undefined);
  }

  count(scope: TenantScope, filter: InvestigationFilter): Promise<number> {
    return this.prisma.investigation.count({ where: where(scope, filter) });
  }

  /** One investigation of the scope whose analysis is finished (completed or failed). */
  findFinished(scope: TenantScope, id: string, query: InvestigationSelection = {}): Promise<Investigation | null> {
    return this.prisma.investigation.findFirst({ ...query, where: { ...inScope(scope), id, status: { not: 'running' } } });
  }

  /**
   * The investigation of this subject whose activity overlaps [fromMs, toMs] (the episode padded
   * by its quiet period), if any: a later run over the same activity updates it.
   */
  findOverlapping(customerId: string, detector: string, subject: string, fromMs: number, toMs: number): Promise<Investigation | null> {
    return this.prisma.investigation.findFirst({
      where: { customerId, detector, subject, lastActivityAt: { gte: new Date(fromMs) }, firstActivityAt: { lte: new Date(toMs) } },
      orderBy: { lastActivityAt: 'desc' },
    });
  }

  /**
   * Opens an investigation in status `running`. Null when one with the same fingerprint exists
   * (another run got there first): the unique (customer_id, fingerprint) index decides.
   */
  async open(customerId: string, fingerprint: string, write: InvestigationWrite, detectedAt: Date): Promise<Investigation | null> {
    try {
      return await this.prisma.investigation.create({
        data: {
          id: newId('inv'),
          customerId,
          fingerprint,
          status: 'running',
          detectedAt,
          ...write,
          disposition: null,
          confidence: null,
          evidence: json(write.evidence),
        },
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') return null;
      throw error;
    }
  }

  byFingerprint(customerId: string, fingerprint: string): Promise<Investigation | null> {
    return this.prisma.investigation.findFirst({ where: { customerId, fingerprint } });
  }

  /**
   * Stores a finished analysis (and the list fields it decides). The severity written is
   * `write.severity` plus what `raise` makes of the triage answer, read under the row's lock so that
   * an answer given while the analysis ran is counted (triage.model.ts). Resolves to that raise.
   */
  complete(
    customerId: string,
    id: string,
    write: InvestigationWrite,
    raise: (answer: TriageAnswer | null) => number,
    analysis: Analysis,
    closedAt: Date | null,
    completedAt: Date,
  ): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ answer: TriageAnswer | null }[]>`
        SELECT answer FROM investigations WHERE customer_id = ${customerId} AND id = ${id} FOR UPDATE`;
      const severityRaise = raise(row?.answer ?? null);
      await tx.investigation.updateMany({
        where: { customerId, id },
        data: {
          ...write,
          severity: write.severity + severityRaise,
          severityRaise,
          evidence: json(write.evidence),
          analysis: json(analysis),
          status: 'completed',
          closedAt,
          completedAt,
        },
      });
      return severityRaise;
    });
  }

  /** Analysis could not be produced: the investigation stays, without a verdict. */
  fail(customerId: string, id: string, completedAt: Date): Promise<number> {
    return this.prisma.investigation
      .updateMany({ where: { customerId, id }, data: { status: 'failed', disposition: null, confidence: null, analysis: PrismaTypes.DbNull, completedAt } })
      .then((r) => r.count);
  }

  /** Investigations of the tenant whose activity has not been closed. */
  active(customerId: string): Promise<Investigation[]> {
    return this.prisma.investigation.findMany({ where: { customerId, closedAt: null, status: { not: 'running' } }, orderBy: { id: 'asc' } });
  }

  close(customerId: string, id: string, closedAt: Date, analysis: Analysis | null): Promise<number> {
    return this.prisma.investigation
      .updateMany({ where: { customerId, id, closedAt: null }, data: { closedAt, ...(analysis ? { analysis: json(analysis) } : {}) } })
      .then((r) => r.count);
  }

  /** The collectors running at these addresses of their tenants, oldest first: one statement for a page. */
  nodesAt(scope: TenantScope, keys: readonly NodeKey[]): Promise<Node[]> {
    return this.prisma.node.findMany({
      where: { ...inScope(scope), OR: keys.map(([customerId, localIp]) => ({ customerId, localIp })) },
      orderBy: { createdAt: 'asc' },
    });
  }

  /** The collectors with these ids in their tenants: one statement for a page. */
  nodesById(scope: TenantScope, keys: readonly NodeKey[]): Promise<Node[]> {
    return this.prisma.node.findMany({ where: { ...inScope(scope), OR: keys.map(([customerId, id]) => ({ customerId, id })) } });
  }

  /** Tenants with investigations still active (a scheduled run closes them even without new flows). */
  async tenantsWithActive(customerIds: string[]): Promise<string[]> {
    const rows = await this.prisma.investigation.findMany({
      where: { customerId: { in: customerIds }, closedAt: null },
      distinct: ['customerId'],
      select: { customerId: true },
    });
    return rows.map((r) => r.customerId);
  }
}
