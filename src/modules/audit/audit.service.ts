import { type Action, actions } from '../../auth/actions.js';
import type { Session } from '../../auth/session.js';
import type { AuditEntry as AuditRow } from '../../generated/prisma/client.js';
import type { MutationCall } from '../../graphql/audited-mutations.js';
import type { Logger } from '../../infra/logger.js';
import { type AuditActor, type AuditEntry, type AuditFilter, type AuditTarget, auditPage, auditTarget, checkedFilter, namedTenant } from './audit-entry.js';
import type { AuditStore } from './audit.store.js';
import type { AuditWriter } from './audit-writer.js';
import { AnonymousAllowance } from './anonymous-allowance.js';

/** Where a request came from, as the envelope knows it. */
export interface AuditRequest {
  requestId: string;
  clientAddress: string | null;
  userAgent: string | null;
}

/** Each Mutation field's action, from the catalogue's `fields` (the same map the authorization tests hold the schema to). */
const mutationActions: ReadonlyMap<string, Action> = new Map(
  (Object.entries(actions) as [Action, (typeof actions)[Action]][]).flatMap(([action, rule]) =>
    (rule.fields as readonly string[]).filter((f) => f.startsWith('Mutation.')).map((f) => [f.slice('Mutation.'.length), action] as const),
  ),
);

/** What a mutation outside the catalogue (a public door) is filed under. */
export const PUBLIC_ACTION = 'public';

/**
 * Anonymous calls are recorded only where they say something about a tenant and cannot grow the
 * log without bound: a token request refused for bad credentials naming a client that exists,
 * filed under that client's tenant, at most ANONYMOUS_PER_CLIENT_PER_MINUTE per client (refusals
 * by the rate limit itself are not recorded: the limiter answers those without work).
 */
const ANONYMOUS_RECORDED: Readonly<Record<string, { result: string; clientArg: string }>> = {
  issueToken: { result: 'invalid_credentials', clientArg: 'clientId' },
};

const ANONYMOUS: AuditActor = { kind: 'anonymous', id: '' };

export interface AuditPageResult {
  entries: AuditRow[];
  hasNextPage: boolean;
}

/** The audit log (docs/audit.md): entries of the mutations that ran, their retention, and reading them. */
export class AuditService {
  /** Recordings still resolving their tenant, awaited by flush and stop. */
  private readonly recording = new Set<Promise<void>>();
  private readonly anonymous = new AnonymousAllowance();

  constructor(
    private readonly store: AuditStore,
    private readonly writer: AuditWriter,
    /** The tenant of an existing client, for an anonymous token request naming it. */
    private readonly tenantOfClient: (clientId: string) => Promise<string | undefined>,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Queues the entries of the mutation fields a request ran. The caller is the session the
   * operation itself resolved (`RequestAuth.known`), never authenticated again here. Called once
   * the result is settled, off the request path; never rejects.
   */
  recordMutations(calls: readonly MutationCall[], caller: Promise<Session | undefined>, request: AuditRequest): Promise<void> {
    if (calls.length === 0) return Promise.resolve();
    const recording = this.queueEntries(calls, caller, request).finally(() => this.recording.delete(recording));
    this.recording.add(recording);
    return recording;
  }

  start(): void {
    this.writer.start();
  }

  /** Entries waiting to be written (the audit_queue_entries gauge). */
  get pending(): number {
    return this.writer.pending;
  }

  /** Writes every entry recorded so far (tests; shutdown). */
  async flush(): Promise<void> {
    await Promise.all(this.recording);
    await this.writer.flush();
  }

  /** At shutdown, once no request is left: what is queued is written, and the timer stops. */
  async stop(): Promise<void> {
    await Promise.all(this.recording);
    await this.writer.stop();
  }

  private async queueEntries(calls: readonly MutationCall[], caller: Promise<Session | undefined>, request: AuditRequest): Promise<void> {
    try {
      const session = await caller;
      const at = new Date();
      const entries: AuditEntry[] = [];
      for (const call of calls) {
        const target = auditTarget(call.args);
        const action = mutationActions.get(call.field);
        const filed = session ? await this.filedForCaller(session, action, target) : await this.filedAnonymously(call, target);
        if (!filed) continue;
        entries.push({ ...filed, at, action: action ?? PUBLIC_ACTION, field: call.field, target, result: call.result, ...request });
      }
      this.writer.record(entries);
    } catch (error) {
      this.logger.error('audit.record_failed', { requestId: request.requestId, error });
    }
  }

  /**
   * A caller's entry goes to the tenant its action works on, by the catalogue's reach: for a `tree`
   * action, the tenant it named when that is in its tree; otherwise its own. An `own` action that
   * names a child (`deleteDeployment`) is the parent's doing, and stays in the parent's log after
   * the child and its entries are gone.
   */
  private async filedForCaller(session: Session, action: Action | undefined, target: AuditTarget) {
    const named = action && actions[action].tenant === 'tree' ? namedTenant(target) : undefined;
    const customerId = named !== undefined && (await session.canSee(named)) ? named : session.customerId;
    return { customerId, actor: session.actor };
  }

  private async filedAnonymously(call: MutationCall, target: AuditTarget) {
    const rule = ANONYMOUS_RECORDED[call.field];
    const clientId = rule && call.result === rule.result ? target[rule.clientArg] : undefined;
    if (typeof clientId !== 'string') return undefined;
    const customerId = await this.tenantOfClient(clientId);
    return customerId === undefined || !this.anonymous.take(clientId) ? undefined : { customerId, actor: ANONYMOUS };
  }

  /** A page of one tenant's log, newest first; the tenant must be in the caller's tree (404 otherwise). */
  async page(session: Session, customerId: string, filter: AuditFilter, args: Parameters<typeof auditPage>[0]): Promise<AuditPageResult> {
    const scope = await session.assertTenant('audit.read', customerId);
    const page = auditPage(args);
    const rows = await this.store.page(scope, customerId, checkedFilter(filter), page.after, page.size + 1);
    return { entries: rows.slice(0, page.size), hasNextPage: rows.length > page.size };
  }

  /** Retention: removes entries older than AUDIT_RETENTION_DAYS; returns how many. */
  purge(now = Date.now()): Promise<number> {
    return this.store.purgeOlderThan(new Date(now - this.retentionDays * 86_400_000));
  }
}
