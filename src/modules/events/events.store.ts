import type { TenantScope } from '../../auth/session.js';
import type { Event, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

export type Tx = PrismaTypes.TransactionClient;

export interface NewEventRow {
  id: string;
  customerId: string;
  topic: string;
  kind: string;
  subject: string | null;
  data: PrismaTypes.InputJsonObject;
}

/** A position in a newest-first listing: the last event of the previous page. */
export interface EventPosition {
  createdAt: Date;
  id: string;
}

export interface EventFilter {
  topic: string;
  kind?: string;
}

/** Newest first; the id breaks ties within a millisecond, so pages never skip or repeat. */
const ORDER: PrismaTypes.EventOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

/** The tenant every statement starts with; the service has checked it is in the caller's tree. */
function inScope(scope: TenantScope, customerId: string) {
  if (!scope.tenantIds.has(customerId)) throw new Error(`customer ${customerId} is outside the scope`);
  return { customerId };
}

const where = (scope: TenantScope, customerId: string, filter: EventFilter) => ({
  ...inScope(scope, customerId),
  topic: filter.topic,
  ...(filter.kind ? { kind: filter.kind } : {}),
});

/** Strictly after a position in newest-first order (older, or as old with a smaller id). */
const beyond = (at: EventPosition): PrismaTypes.EventWhereInput => ({
  OR: [{ createdAt: { lt: at.createdAt } }, { createdAt: at.createdAt, id: { lt: at.id } }],
});

/** The `events` table. */
export class EventStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Inserts the event and runs `alongside` (automation enqueues its runs) in the same transaction:
   * what it writes commits with the event, or neither does.
   */
  insert(row: NewEventRow, alongside: (tx: Tx, event: Event) => Promise<void>): Promise<Event> {
    return this.prisma.$transaction(async (tx) => {
      const created = await tx.event.create({ data: row });
      await alongside(tx, created);
      return created;
    });
  }

  async topicStats(scope: TenantScope, customerId: string): Promise<Map<string, { count: number; latestAt: Date | null }>> {
    const groups = await this.prisma.event.groupBy({
      by: ['topic'],
      where: inScope(scope, customerId),
      _count: { _all: true },
      _max: { createdAt: true },
    });
    return new Map(groups.map((g) => [g.topic, { count: g._count._all, latestAt: g._max.createdAt }]));
  }

  page(scope: TenantScope, customerId: string, filter: EventFilter, page: { limit: number; offset: number; after?: EventPosition }): Promise<Event[]> {
    return this.prisma.event.findMany({
      where: { ...where(scope, customerId, filter), ...(page.after ? beyond(page.after) : {}) },
      orderBy: ORDER,
      skip: page.offset,
      take: page.limit,
    });
  }

  /** All events of the filter, or only those listed after `olderThan` (older than it). */
  count(scope: TenantScope, customerId: string, filter: EventFilter, olderThan?: EventPosition): Promise<number> {
    return this.prisma.event.count({ where: { ...where(scope, customerId, filter), ...(olderThan ? beyond(olderThan) : {}) } });
  }

  find(scope: TenantScope, customerId: string, id: string): Promise<Event | null> {
    return this.prisma.event.findFirst({ where: { ...inScope(scope, customerId), id } });
  }

  /** Deletes up to `batch` events older than `before` (and, by cascade, their automation runs). */
  async prune(before: Date, batch = 5000): Promise<number> {
    return this.prisma.$executeRaw`/* events.prune */
      DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ${before} LIMIT ${batch})`;
  }
}
