// A collector started against the fake service, in a state directory of its own, with fast retry
// delays; both are stopped and removed by `cleanups`, which the test file drains after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CollectorOptions, startCollector } from '../collector.js';
import { type FakeServiceOptions, startFakeService } from './fake-service.js';

export async function collectorOnFakeService(cleanups: Array<() => unknown>, serviceOptions: FakeServiceOptions, options: Partial<CollectorOptions>) {
  const service = await startFakeService(serviceOptions);
  cleanups.push(() => service.close());
  const stateDir = mkdtempSync(join(tmpdir(), 'collector-run-'));
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const collector = await startCollector({
    baseUrl: service.url,
    accessKey: 'cid.secret',
    machineId: 'machine-run-1',
    stateDir,
    log: null,
    ingestBackoff: { initialMs: 20, maxMs: 100 },
    reconnect: { initialMs: 20, maxMs: 100 },
    ...options,
  });
  cleanups.push(async () => void (await collector.stop()));
  return { service, collector };
}
