/**
 * What a tenant owns outside PostgreSQL's foreign keys (flows in ClickHouse, ...) is removed by
 * steps that each domain registers here once; the deletion worker (deletion-worker.ts) runs them
 * all before the tenant's rows go. Callers never keep their own list.
 *
 * A step may take longer than any request (a ClickHouse mutation over hundreds of parts), so it
 * is resumable: the worker calls it with what it returned last time (undefined the first time),
 * records what it returns in PostgreSQL, and calls it again, also after a crash or a restart,
 * until it reports `done`. A step therefore starts its work at most once, however often it is
 * called: what it started is in the progress it returned.
 */
export type StepProgress = { done: boolean } & { [key: string]: string | number | boolean | null };

export type TenantDeletionStep = (customerId: string, last: StepProgress | undefined) => Promise<StepProgress>;

export class TenantDeletionHooks {
  private readonly steps = new Map<string, TenantDeletionStep>();

  register(name: string, step: TenantDeletionStep): void {
    if (this.steps.has(name)) throw new Error(`tenant deletion step ${name} registered twice`);
    this.steps.set(name, step);
  }

  entries(): IterableIterator<[string, TenantDeletionStep]> {
    return this.steps.entries();
  }
}
