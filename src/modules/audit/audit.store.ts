import type pg from 'pg';
import type { TenantScope } from '../../auth/session.js';
import type { AuditEntry as AuditRow, Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import type { AuditEntry, AuditFilter, AuditPosition } from './audit-entry.js';

/** Rows deleted per statement by the retention purge, so no statement holds its locks for long. */
const PURGE_BATCH = 5_000;

/** Newest first; the id breaks ties so that cursor pages never skip or repeat a row. */
const NEWEST_FIRST: PrismaTypes.AuditEntryOrderByWithRelationInput[] = [{ at: 'desc' }, { id: 'desc' }];

/** The tenant filter every read starts with: the caller's tree, then the one tenant it names. */
const inScope = (scope: TenantScope, customerId: string): PrismaTypes.AuditEntryWhereInput => ({
  AND: [{ customerId: { in: [...scope.tenantIds] } }, { customerId }],
});

/** The rows strictly after `at` in NEWEST_FIRST order. */
const olderThan = (at: AuditPosition): PrismaTypes.AuditEntryWhereInput => ({
  OR: [{ at: { lt: at.at } }, { at: at.at, id: { lt: at.id } }],
});

/** `ok`, any refusal (`error`), or one error code. */
const resultIs = (result: string): PrismaTypes.AuditEntryWhereInput['result'] => (result === 'error' ? { not: 'ok' } : result);

/** `audit_log`: written in batches by the audit writer, read within a caller's tenant scope. */
export class AuditStore {
  constructor(
    private readonly prisma: Prisma,
    private readonly pool: pg.Pool,
  ) {}

  /**
   * One statement for a whole batch, ids in queue order. Entries of a tenant that is gone by now (deleted between the
   * mutation and the write) are skipped rather than failing the batch on the foreign key.
   */
  async insert(entries: readonly AuditEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const column = <T>(pick: (e: AuditEntry) => T) => entries.map(pick);
    const { rowCount } = await this.pool.query(
      `/* audit.insert */
       INSERT INTO audit_log (customer_id, at, actor_kind, actor_id, action, field, target, result, request_id, client_address, user_agent)
       SELECT e.customer_id, e.at, e.actor_kind, e.actor_id, e.action, e.field, e.target, e.result, e.request_id, e.client_address, e.user_agent
       FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[], $9::text[], $10::text[], $11::text[])
         WITH ORDINALITY AS e (customer_id, at, actor_kind, actor_id, action, field, target, result, request_id, client_address, user_agent, n)
       JOIN tenants t ON t.id = e.customer_id
       ORDER BY e.n`,
      [
        column((e) => e.customerId),
        column((e) => e.at),
        column((e) => e.actor.kind),
        column((e) => e.actor.id),
        column((e) => e.action),
        column((e) => e.field),
        column((e) => JSON.stringify(e.target)),
        column((e) => e.result),
        column((e) => e.requestId),
        column((e) => e.clientAddress),
        column((e) => e.userAgent),
      ],
    );
    return rowCount ?? 0;
  }

  /** Up to `take` entries of one tenant of the scope, newest first, older than `after` when given. */
  page(scope: TenantScope, customerId: string, filter: AuditFilter, after: AuditPosition | null, take: number): Promise<AuditRow[]> {
    return this.prisma.auditEntry.findMany({
      where: {
        AND: [
          inScope(scope, customerId),
          {
            ...(filter.actorKind && { actorKind: filter.actorKind }),
            ...(filter.actorId && { actorId: filter.actorId }),
            ...(filter.action && { action: filter.action }),
            ...(filter.result && { result: resultIs(filter.result) }),
            ...((filter.from || filter.to) && { at: { ...(filter.from && { gte: filter.from }), ...(filter.to && { lt: filter.to }) } }),
          },
          ...(after ? [olderThan(after)] : []),
        ],
      },
      orderBy: NEWEST_FIRST,
      take,
    });
  }

  /**
   * Retention, across every tenant (the one statement here without a scope: it is the service's
   * own housekeeping, not a caller's question). Deletes in batches; returns how many went.
   */
  async purgeOlderThan(cutoff: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const { rowCount } = await this.pool.query(
        `/* audit.purge */
         DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 LIMIT ${PURGE_BATCH})`,
        [cutoff],
      );
      removed += rowCount ?? 0;
      if ((rowCount ?? 0) < PURGE_BATCH) return removed;
    }
  }
}
