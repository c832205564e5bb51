import { afterEach, describe, expect, it } from 'vitest';
import type { CollectorOptions } from './collector.js';
import { collectorOnFakeService } from './testing/collector-on-fake.js';
import { type FakeServiceOptions, eventually } from './testing/fake-service.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const setup = (serviceOptions: FakeServiceOptions, options: Partial<CollectorOptions>) => collectorOnFakeService(cleanups, serviceOptions, { ...options });

const signature = (f: any) => `${f.src.ip}>${f.dst.ip}:${f.dst.port ?? ''}/${f.transport?.proto}`;

describe('startCollector: flows', () => {
  it('backfills history then runs live for --seconds, through an ingest outage, losing and duplicating nothing', async () => {
    const { service, collector } = await setup(
      { ingest: (call) => (call.n < 4 ? { status: 503, headers: { 'retry-after': '0' } } : undefined) },
      { flowsPerSecond: 100, backfillHours: 0.05, seconds: 2, scenarios: ['scan', 'beacon'], batchFlows: 500 },
    );
    const startedAt = Date.now();
    await collector.done;
    const stats = collector.stats();
    expect(stats.flows.backfill_done).toBe(true);
    expect(stats.flows.backfill_generated).toBeGreaterThan(0.05 * 3600 * 100 * 0.8);
    expect(stats.flows.live_generated).toBeGreaterThan(50);
    expect(stats.ingest).toMatchObject({ queued: 0, failed: 0, sent: stats.flows.generated });
    expect(stats.ingest.retries).toBeGreaterThanOrEqual(4);
    expect(service.storedFlows()).toBe(stats.flows.generated);

    const ids = [...service.stored.keys()];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^machine-run-1-[0-9a-z]+-\d+$/);
    // Same batch id, same flows, however often it was sent.
    for (const call of service.ingestCalls) expect(call.flows).toEqual(service.stored.get(call.batch_id));

    const all = [...service.stored.values()].flat() as any[];
    const times = all.map((f) => f['@timestamp']);
    expect(Math.min(...times)).toBeLessThan(startedAt - 0.04 * 3_600_000); // history reaches back
    expect(Math.max(...times)).toBeLessThanOrEqual(Date.now());
    expect(all.every((f) => f.meta.customer_id === 'cust_fake' && f.path[0].sensor.id === 'machine-run-1')).toBe(true);
    expect(new Set(all.map((f) => f.key)).size).toBe(all.length);
    expect(
      collector
        .groundTruth()
        .map((i) => i.kind)
        .sort(),
    ).toEqual(['beacon', 'scan']);
  });

  it('sends the flows as Native batches with batchFormat native, each read back whole', async () => {
    const { service, collector } = await setup(
      {},
      { flowsPerSecond: 100, backfillHours: 0.02, seconds: 0, scenarios: ['dns-tunnel'], batchFlows: 1000, batchFormat: 'native' },
    );
    await collector.done;
    const stats = collector.stats();
    expect(stats.ingest).toMatchObject({ queued: 0, failed: 0, sent: stats.flows.generated });
    expect(new Set(service.ingestCalls.map((c) => c.contentType))).toEqual(new Set(['application/x-clickhouse-native']));
    expect(service.hellos[0].services.ingest).toMatchObject({ batch_flows: 1000, batch_format: 'native' });
    expect(service.storedFlows()).toBe(stats.flows.generated);
    const all = [...service.stored.values()].flat() as any[];
    expect(all.every((f) => f.meta.customer_id === 'cust_fake' && f.path[0].sensor.id === 'machine-run-1' && f.src.ip && f.dst.port >= 0)).toBe(true);
  });

  it('the same seed gives the same flows', async () => {
    const run = async () => {
      const { service, collector } = await setup({}, { flowsPerSecond: 50, backfillHours: 0.02, seconds: 0, seed: 99 });
      await collector.done;
      return ([...service.stored.values()].flat() as any[])
        .sort((a, b) => a['@timestamp'] - b['@timestamp'])
        .slice(0, 300)
        .map(signature);
    };
    const first = await run();
    expect(first.length).toBe(300);
    expect(await run()).toEqual(first);
  });

  it('blocks generation while ingest is down instead of dropping, and flushes on stop', async () => {
    let down = true;
    const { service, collector } = await setup(
      { ingest: () => (down ? { status: 503 } : undefined) },
      { flowsPerSecond: 2_000, batchFlows: 100, maxQueuedFlows: 300, ingestConcurrency: 1, flushIntervalMs: 100 },
    );
    await eventually(() => collector.stats().ingest.queued >= 200, 5_000, 'a full queue');
    await new Promise((r) => setTimeout(r, 300));
    const held = collector.stats();
    expect(held.ingest.queued).toBeLessThanOrEqual(300);
    expect(held.ingest.sent).toBe(0);
    down = false;
    await eventually(() => collector.stats().ingest.sent > 1_000, 10_000, 'catching up');
    const { unsent } = await collector.stop();
    expect(unsent).toBe(0);
    const stats = collector.stats();
    expect(service.storedFlows()).toBe(stats.flows.generated);
    expect(stats.ingest.sent).toBe(stats.flows.generated);
  });

  it('stop() with the service gone reports the flows it could not send', async () => {
    const { service, collector } = await setup({ ingest: () => ({ status: 503 }) }, { flowsPerSecond: 200, flushIntervalMs: 100, flushTimeoutMs: 300 });
    await eventually(() => collector.stats().ingest.queued > 0, 5_000, 'queued flows');
    const { unsent } = await collector.stop();
    expect(unsent).toBeGreaterThan(0);
    expect(service.storedFlows()).toBe(0);
  });

  it('stop() does not hang while generation waits on a full queue and the service is down', async () => {
    const { service, collector } = await setup(
      { ingest: () => ({ status: 503 }) },
      { flowsPerSecond: 5_000, batchFlows: 100, maxQueuedFlows: 200, ingestConcurrency: 1, flushIntervalMs: 50, flushTimeoutMs: 200 },
    );
    await eventually(() => collector.stats().ingest.queued >= 200, 5_000, 'a full queue');
    const started = Date.now();
    const { unsent } = await collector.stop();
    expect(Date.now() - started).toBeLessThan(3_000);
    const stats = collector.stats();
    // Every generated flow is accounted for: none sent, all reported unsent.
    expect(unsent).toBe(stats.flows.generated);
    expect(service.storedFlows()).toBe(0);
  });
});
