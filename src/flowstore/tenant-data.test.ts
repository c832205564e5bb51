import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { insertFlowBatch } from './ingest.js';
import { migrateFlowStore } from './schema.js';
import { type FlowsRemovalProgress, advanceFlowsRemoval, tenantFlowCount } from './tenant-data.js';

const flow = (i: number) => ({ '@timestamp': Date.now() - i * 1000, src: { ip: '10.0.0.1', port: 1000 + i }, dst: { ip: '9.9.9.9', port: 53 } });

describe("removing a tenant's flows", () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenant-data-'));
  const engine = new ChdbEngine(dir);
  beforeAll(() => migrateFlowStore(engine));
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const removalsOf = async (customerId: string) =>
    engine.query<{ mutation_id: string }>(
      "/* test_mutations */ SELECT mutation_id FROM system.mutations WHERE table = 'flows' AND position(command, {c:String}) > 0 ORDER BY mutation_id",
      {
        c: `'${customerId}'`,
      },
    );
  /** Advances from `last` until done, as the deletion worker would, and returns the final progress. */
  const finish = async (customerId: string, last: FlowsRemovalProgress) => {
    for (let progress = last; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
      progress = await advanceFlowsRemoval(engine, customerId, progress);
      if (progress.done) return progress;
    }
  };

  it('starts one mutation, found again when its start was never recorded, and spares other tenants', async () => {
    await insertFlowBatch(engine, { customerId: 'cus_gone', nodeId: 'n', batchId: 'a', flows: [flow(1), flow(2)] });
    await insertFlowBatch(engine, { customerId: 'cus_stays', nodeId: 'n', batchId: 'a', flows: [flow(1)] });
    const started = await advanceFlowsRemoval(engine, 'cus_gone', undefined);
    expect(started).toMatchObject({ done: false, mutation_id: expect.stringMatching(/^mutation_/) });
    // As after a crash between starting the removal and recording it: the same mutation comes back.
    expect((await advanceFlowsRemoval(engine, 'cus_gone', undefined)).mutation_id).toBe(started.mutation_id);
    const done = await finish('cus_gone', started);
    expect(done).toEqual({ done: true, mutation_id: started.mutation_id, parts_to_do: 0, failure: null });
    expect(await removalsOf('cus_gone')).toEqual([{ mutation_id: started.mutation_id }]);
    expect(await tenantFlowCount(engine, 'cus_gone')).toBe(0);
    expect(await tenantFlowCount(engine, 'cus_stays')).toBe(1);
  });

  it('removes flows that arrived after its mutation started with one more', async () => {
    await insertFlowBatch(engine, { customerId: 'cus_late', nodeId: 'n', batchId: 'a', flows: [flow(1)] });
    const first = await finish('cus_late', await advanceFlowsRemoval(engine, 'cus_late', undefined));
    // An ingest that was past its token check when the tenant was deleted lands afterwards.
    await insertFlowBatch(engine, { customerId: 'cus_late', nodeId: 'n', batchId: 'b', flows: [flow(2)] });
    const again = await advanceFlowsRemoval(engine, 'cus_late', { ...first, done: false });
    expect(again.mutation_id).not.toBe(first.mutation_id);
    await finish('cus_late', again);
    expect(await tenantFlowCount(engine, 'cus_late')).toBe(0);
    expect(await removalsOf('cus_late')).toHaveLength(2);
  });
});
