import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

const PATH = '/collector/ingest/1.0/flows';
const BATCHES = 30;
const FLOWS_PER_BATCH = 20;

describe('ingest under a flood', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Room for two batches: the rest of a burst must wait its turn.
    t = await startTestApp({ env: { INGEST_QUEUE_FLOWS: String(2 * FLOWS_PER_BATCH) } });
  });
  afterAll(() => t?.stop());

  it('answers 503 with Retry-After beyond the queue, and stores every batch sent again exactly once', async () => {
    const tree = await seedTree(t.app);
    const { token, nodeId } = await enrolledCollector(t, tree, 'ingest-flood');
    const body = (b: number) => ({ batch_id: `flood-${b}`, flows: Array.from({ length: FLOWS_PER_BATCH }, (_, i) => flow(b * FLOWS_PER_BATCH + i)) });
    const send = (b: number) => call(t.url, 'POST', PATH, { token, body: body(b) });

    const first = await Promise.all(Array.from({ length: BATCHES }, (_, b) => send(b)));
    const busy = first.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const res of busy) {
      expect(res.body).toMatchObject({ code: 'ingest_busy', retry_after: expect.any(Number) });
      expect(Number(res.headers.get('retry-after'))).toBe(res.body.retry_after);
      expect(res.body.retry_after).toBeGreaterThanOrEqual(1);
    }
    expect(first.every((r) => r.status === 200 || r.status === 503)).toBe(true);

    // Every batch again, the stored ones too, one at a time as a collector's queue would.
    for (let b = 0; b < BATCHES; b++) {
      let res = await send(b);
      for (let attempt = 0; res.status === 503 && attempt < 50; attempt++) res = await send(b);
      expect(res.status).toBe(200);
      expect(res.body.accepted).toBe(FLOWS_PER_BATCH);
    }
    const [stored] = await t.app.flows.query<{ n: string; ids: string }>(
      '/* test:flood_count */ SELECT count() AS n, uniqExact(id) AS ids FROM flows WHERE node_id = {n:String}',
      { n: nodeId },
    );
    expect({ rows: Number(stored!.n), ids: Number(stored!.ids) }).toEqual({ rows: BATCHES * FLOWS_PER_BATCH, ids: BATCHES * FLOWS_PER_BATCH });
  });
});
