// startCollector with capture files (a real tcpdump capture of the test's loopback traffic) against
// the fake service: it stops on its own once every metered flow is stored, says so in hello, waits
// for a full ingest queue, and --seconds bounds a run that ingest holds back (meter.interrupted).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CollectorOptions } from './collector.js';
import { collectorOnFakeService } from './testing/collector-on-fake.js';
import { listenOnLoopback, startTcpdump } from './meter/testing/tcpdump.js';
import { withoutAbsent } from './testing/absent.js';
import type { FakeServiceOptions } from './testing/fake-service.js';

let dir: string;
let capture: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'collector-pcap-'));
  const peers = await listenOnLoopback('127.0.0.1');
  const tcpdump = await startTcpdump({ iface: 'lo', filter: `port ${peers.tcpPort} or port ${peers.udpPort}` });
  await peers.exchangeTcp('hello', 'world');
  await peers.sendUdp([10, 20]);
  const { bytes } = await tcpdump.stop();
  await peers.close();
  capture = join(dir, 'capture.pcap');
  writeFileSync(capture, bytes);
}, 20_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const setup = (serviceOptions: FakeServiceOptions, options: Partial<CollectorOptions>) =>
  collectorOnFakeService(cleanups, serviceOptions, { machineId: 'pcap-1', ...options });

describe('startCollector with capture files', () => {
  it('meters the files, stores every flow, then stops on its own; hello names the meter', async () => {
    const { service, collector } = await setup({}, { pcapFiles: [capture], idleTimeoutSecs: 5, activeTimeoutSecs: 60 });
    await collector.done;
    const stats = collector.stats();
    expect(stats.meter).toMatchObject({ files: 1, flows_emitted: 2, active_flows: 0 });
    expect(stats.meter!.packets_decoded).toBe(stats.meter!.packets_read);
    expect(stats.flows.generated).toBe(0);
    expect(stats.ingest).toMatchObject({ queued: 0, failed: 0, sent: 2 });
    expect(service.storedFlows()).toBe(2);
    expect(collector.logger.ring.last(1000).map((line) => JSON.parse(line).event)).toContain('meter.done');
    const all = [...service.stored.values()].flat() as any[];
    expect(all.map((f) => f.transport.proto).sort()).toEqual(['TCP', 'UDP']);
    expect(all.every((f) => f.meta.customer_id === 'cust_fake' && f.path[0].sensor.id === 'pcap-1')).toBe(true);
    expect(service.hellos[0].services).toMatchObject({
      flowgen: { enabled: false },
      meter: { source: 'pcap', files: 1, idle_timeout_secs: 5, active_timeout_secs: 60 },
    });
  });

  it('sends metered flows as Native batches with batchFormat native: the same flows as JSON', async () => {
    const run = async (batchFormat: CollectorOptions['batchFormat']) => {
      const { service, collector } = await setup({}, { pcapFiles: [capture], batchFormat });
      await collector.done;
      expect(service.ingestCalls.map((c) => c.contentType)).toEqual([batchFormat === 'native' ? 'application/x-clickhouse-native' : 'application/json']);
      return ([...service.stored.values()].flat() as any[]).map(({ meta: { '@ingest_time': _, ...meta }, ...flow }) => ({ ...flow, meta }));
    };
    const json = await run('json');
    expect(json).toHaveLength(2);
    expect(await run('native')).toEqual(json.map(withoutAbsent));
  });

  it('waits while ingest holds the queue full, and --seconds ends the run with what was metered stored', async () => {
    // Every repeat of the file starts a new TCP connection on the ended one's ports: one more record each.
    const files = Array<string>(40).fill(capture);
    const { service, collector } = await setup(
      { ingest: async () => void (await new Promise((resolve) => setTimeout(resolve, 100))) },
      { pcapFiles: files, seconds: 1, batchFlows: 1, maxQueuedFlows: 1, ingestConcurrency: 1 },
    );
    const started = Date.now();
    await collector.done;
    expect(Date.now() - started).toBeLessThan(5_000);
    const stats = collector.stats();
    expect(stats.meter!.files).toBeLessThan(files.length);
    expect(stats.meter!.active_flows).toBe(0);
    expect(stats.ingest).toMatchObject({ queued: 0, failed: 0, sent: stats.meter!.flows_emitted });
    expect(service.storedFlows()).toBe(stats.meter!.flows_emitted);
    // Cut off before the last file: said so, not `done`.
    const events = collector.logger.ring.last(1000).map((line) => JSON.parse(line).event);
    expect(events).toContain('meter.interrupted');
    expect(events).not.toContain('meter.done');
  });
});
