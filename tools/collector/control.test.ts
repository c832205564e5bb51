import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type CollectorOptions, startCollector } from './collector.js';
import { CloseCode } from './control.js';
import { COLLECTOR_VERSION } from './version.js';
import { type FakeServiceOptions, closedUrl, eventually, startFakeService } from './testing/fake-service.js';

const ACCESS_KEY = 'client_ctl.s3cr3t-very-long-secret-value';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(serviceOptions: FakeServiceOptions = {}, options: Partial<CollectorOptions> = {}) {
  const service = await startFakeService(serviceOptions);
  cleanups.push(() => service.close());
  const stateDir = mkdtempSync(join(tmpdir(), 'collector-ctl-'));
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const collector = await startCollector({
    baseUrl: service.url,
    accessKey: ACCESS_KEY,
    machineId: 'machine-ctl-1',
    stateDir,
    flowsPerSecond: 0,
    log: null,
    reconnect: { initialMs: 20, maxMs: 200 },
    ...options,
  });
  cleanups.push(async () => void (await collector.stop()));
  return { service, collector, stateDir };
}

const unzip = (result: any) => gunzipSync(Buffer.from(result.data.profile_b64, 'base64'));

describe('control channel: hello, heartbeat, reconnect', () => {
  it('says hello with the host’s real facts and gets a node id', async () => {
    const { service, collector } = await setup();
    expect(collector.nodeId).toBe('node_fake');
    const hello = service.hellos[0];
    expect(hello).toMatchObject({
      type: 'hello',
      kind: 'managed',
      machine_id: 'machine-ctl-1',
      collector_version: COLLECTOR_VERSION,
      update_channel: 'stable',
      os: { linux: 'linux', darwin: 'darwin', win32: 'windows' }[process.platform as string] ?? process.platform,
      arch: { x64: 'amd64', arm64: 'arm64', arm: 'arm7' }[process.arch as string] ?? process.arch,
    });
    expect(hello.hostname).toBe((await import('node:os')).hostname());
    expect(typeof hello.local_ip === 'string' || hello.local_ip === null).toBe(true);
    expect(hello.hardware.cpu_count).toBeGreaterThan(0);
    expect(hello.hardware.memory_total_bytes).toBeGreaterThan(0);
    expect(hello.services.flowgen).toMatchObject({ enabled: false, flows_per_second: 0 });
  });

  it('sends heartbeats at the interval the welcome names, with ingest counters', async () => {
    const { service } = await setup({ heartbeatIntervalS: 0.2 });
    await eventually(() => service.heartbeats.length >= 2, 3_000, 'two heartbeats');
    expect(service.heartbeats[0]).toMatchObject({ type: 'heartbeat', ingest: { queued: 0, sent: 0, failed: 0 } });
    expect(Math.abs(service.heartbeats[0].ts - Date.now())).toBeLessThan(5_000);
  });

  it('reconnects with a new hello when the channel drops', async () => {
    const { service, collector } = await setup();
    service.current()!.terminate();
    await eventually(() => service.hellos.length === 2 && collector.stats().control.connected, 5_000, 'second hello');
    service.current()!.close(1011, 'server error');
    // The service records the hello before its welcome reaches the collector.
    await eventually(() => collector.stats().control.welcomes === 3, 5_000, 'third welcome');
    expect(service.hellos).toHaveLength(3);
    expect(collector.stats().control).toMatchObject({ connects: 3, welcomes: 3, disconnects: 2 });
  });

  it('takes a new token after close 4401', async () => {
    const { service } = await setup();
    expect(service.tokensIssued).toHaveLength(1);
    service.current()!.close(CloseCode.unauthenticated, 'token expired');
    await eventually(() => service.hellos.length === 2, 5_000, 'hello after 4401');
    expect(service.tokensIssued).toHaveLength(2);
  });

  it('keeps retrying while the service is away, and connects when it is back', async () => {
    let accept = false;
    const { service, collector } = await setup(
      { onHello: (_hello, ws) => (accept ? 'welcome' : (ws.close(1013, 'try again later'), 'ignore')) },
      { waitForWelcome: false },
    );
    await eventually(() => service.hellos.length >= 3, 5_000, 'retries');
    expect(collector.nodeId).toBeUndefined();
    accept = true;
    await eventually(() => collector.nodeId === 'node_fake', 5_000, 'welcome');
  });

  it('stops, refused, after close 4403 and says why', async () => {
    const service = await startFakeService({
      onHello: (_hello, ws) => {
        ws.send(JSON.stringify({ type: 'error', code: 'machine_mismatch', message: 'This credential was provisioned for another machine_id' }));
        ws.close(CloseCode.forbidden, 'machine_mismatch');
        return 'ignore';
      },
    });
    cleanups.push(() => service.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'collector-ctl-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    await expect(startCollector({ baseUrl: service.url, accessKey: ACCESS_KEY, machineId: 'm', stateDir, flowsPerSecond: 0, log: null })).rejects.toThrow(
      /4403 machine_mismatch: This credential was provisioned for another machine_id/,
    );
    expect(service.hellos).toHaveLength(1);
  });

  it('stops when the token endpoint refuses the key', async () => {
    const service = await startFakeService({ keys: ['other.key'] });
    cleanups.push(() => service.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'collector-ctl-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    await expect(startCollector({ baseUrl: service.url, accessKey: ACCESS_KEY, stateDir, flowsPerSecond: 0, log: null })).rejects.toThrow(
      /access key was refused/,
    );
  });
});

describe('commands', () => {
  it('diagnostics: runtime figures and the collector’s own recent log lines', async () => {
    const { service } = await setup();
    const result = await service.command('diagnostics', { log_lines: 50 });
    expect(result).toMatchObject({ type: 'result', ok: true });
    const { diagnostics, recent_logs } = result.data;
    expect(diagnostics).toMatchObject({ pid: process.pid, node_version: process.version, kind: 'managed' });
    expect(diagnostics.memory.rss_bytes).toBeGreaterThan(0);
    expect(diagnostics.event_loop_lag).toHaveProperty('p99_ms');
    expect(diagnostics.collector).toMatchObject({ node_id: 'node_fake', machine_id: 'machine-ctl-1', ingest: { sent: 0, queued: 0 } });
    expect(recent_logs.length).toBeGreaterThan(1);
    expect(recent_logs.length).toBeLessThanOrEqual(50);
    const events = recent_logs.map((line: string) => JSON.parse(line).event);
    expect(events).toContain('collector.starting');
    expect(events).toContain('control.welcome');
    expect(events.at(-1)).toBe('command.received'); // this very command

    const few = await service.command('diagnostics', { log_lines: 2 });
    expect(few.data.recent_logs).toHaveLength(2);
  });

  it('pprof cpu: a V8 CPU profile over the duration', async () => {
    const { service } = await setup();
    const started = Date.now();
    const result = await service.command('pprof', { type: 'cpu', duration_s: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(result.ok).toBe(true);
    expect(result.data).toMatchObject({ type: 'cpu', format: 'cpuprofile', duration_s: 1 });
    const profile = JSON.parse(unzip(result).toString());
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(profile.endTime).toBeGreaterThan(profile.startTime);
  });

  it('pprof heap: a heap snapshot with the access key redacted', async () => {
    const { service } = await setup();
    const result = await service.command('pprof', { type: 'HEAP' }, 60_000);
    expect(result.ok).toBe(true);
    const text = unzip(result).toString();
    const snapshot = JSON.parse(text);
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
    expect(text).not.toContain('s3cr3t-very-long-secret-value');
    expect(text).not.toContain(service.tokensIssued[0]);
  }, 60_000);

  it('pprof allocs, goroutine, block and mutex: the nearest Node captures', async () => {
    const { service } = await setup();
    const allocs = await service.command('pprof', { type: 'allocs', duration_s: 1 });
    expect(JSON.parse(unzip(allocs).toString()).head).toBeDefined();

    const goroutine = await service.command('pprof', { type: 'goroutine' });
    const report = JSON.parse(unzip(goroutine).toString());
    expect(report.header.processId).toBe(process.pid);
    expect(report.javascriptStack).toBeDefined();
    expect(report.environmentVariables).toBeUndefined();

    const block = await service.command('pprof', { type: 'block', duration_s: 1 });
    expect(JSON.parse(unzip(block).toString())).toMatchObject({ type: 'event_loop_delay', unit: 'ms', duration_s: 1 });

    const mutex = await service.command('pprof', { type: 'mutex', duration_s: 1 });
    expect(Array.isArray(JSON.parse(unzip(mutex).toString()).traceEvents)).toBe(true);

    const bad = await service.command('pprof', { type: 'threadcreate' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_type' } });
  }, 30_000);

  it('pprof refuses a second capture while one runs', async () => {
    const { service } = await setup();
    const first = service.command('pprof', { type: 'cpu', duration_s: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const second = await service.command('pprof', { type: 'cpu', duration_s: 1 });
    expect(second).toMatchObject({ ok: false, error: { code: 'busy' } });
    expect((await first).ok).toBe(true);
  });

  it('update: checks the download’s sha256, persists the version and says hello with it', async () => {
    const release = Buffer.from('a release tarball, honestly');
    const sha256 = createHash('sha256').update(release).digest('hex');
    const { service, collector, stateDir } = await setup({ files: { '/release.tar.gz': release } });
    const platform = `${service.hellos[0].os}_${service.hellos[0].arch}`;

    const wrong = await service.command('update', { version: '9.9.9', url: `${service.url}/release.tar.gz`, sha256: 'ab'.repeat(32), platform });
    expect(wrong).toMatchObject({ ok: false, error: { code: 'checksum_mismatch' } });
    expect(collector.stats().version).toBe(COLLECTOR_VERSION);

    const ok = await service.command('update', { version: '9.9.9', url: `${service.url}/release.tar.gz`, sha256, platform });
    expect(ok).toMatchObject({ ok: true, data: { version: '9.9.9', previous_version: COLLECTOR_VERSION, verified: true, sha256, bytes: release.length } });
    await eventually(() => service.hellos.length === 2, 5_000, 'hello after update');
    expect(service.hellos[1].collector_version).toBe('9.9.9');
    expect(JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')).collector_version).toBe('9.9.9');

    const again = await service.command('update', { version: '9.9.9' });
    expect(again.data.status).toBe('already_running');

    const missing = await service.command('update', { version: '9.9.8', url: `${service.url}/nope.tar.gz`, sha256 });
    expect(missing).toMatchObject({ ok: false, error: { code: 'download_failed' } });

    const unreachable = await service.command('update', { version: '10.0.0', url: `${await closedUrl()}/release.tar.gz`, sha256 });
    expect(unreachable).toMatchObject({ ok: true, data: { version: '10.0.0', verified: false } });
    expect(unreachable.data.download_error).toBe('ECONNREFUSED');
    await eventually(() => service.hellos.length === 3 && collector.stats().control.connected, 5_000, 'hello after the second update');
    expect(service.hellos[2].collector_version).toBe('10.0.0');

    const otherPlatform = await service.command('update', { version: '11.0.0', platform: 'plan9_mips' });
    expect(otherPlatform).toMatchObject({ ok: false, error: { code: 'wrong_platform' } });
  });

  it('update without a url: checks the sha256 against the service’s download of the channel’s build', async () => {
    const release = Buffer.from('the build behind the download endpoint');
    const sha256 = createHash('sha256').update(release).digest('hex');
    const { service } = await setup({ files: { '/rest/collector/download/1.0': release } });
    const result = await service.command('update', { version: '3.1.0', sha256, channel: 'stable' });
    expect(result).toMatchObject({ ok: true, data: { version: '3.1.0', source: 'download_endpoint', verified: true, sha256 } });
    await eventually(() => service.hellos.length === 2 && service.current(), 5_000, 'hello after update');
    const bad = await service.command('update', { version: '3.2.0', sha256: '00'.repeat(32), channel: 'stable' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'checksum_mismatch' } });
  });

  it('a restarted collector reports the version an update installed', async () => {
    const { service, stateDir } = await setup();
    await service.command('update', { version: '2.0.0' });
    const again = await startCollector({ baseUrl: service.url, accessKey: ACCESS_KEY, machineId: 'machine-ctl-1', stateDir, flowsPerSecond: 0, log: null });
    cleanups.push(async () => void (await again.stop()));
    expect(service.hellos.at(-1).collector_version).toBe('2.0.0');
  });

  it('manage: status, logs, pull, restart, upgrade, and unknown operations', async () => {
    const { service } = await setup();
    const status = await service.command('manage', { operation: 'status' });
    expect(status).toMatchObject({
      ok: true,
      data: { operation: 'status', state: 'running', node_id: 'node_fake', connected: true, version: COLLECTOR_VERSION },
    });

    const logs = await service.command('manage', { operation: 'logs', lines: 3 });
    expect(logs.data.lines).toHaveLength(3);

    const tokensBefore = service.tokensIssued.length;
    const pull = await service.command('manage', { operation: 'pull' });
    expect(pull).toMatchObject({ ok: true, data: { credential: 'valid', config: { update_channel: 'stable' } } });
    expect(service.tokensIssued.length).toBe(tokensBefore + 1);

    const restart = await service.command('manage', { operation: 'restart' });
    expect(restart).toMatchObject({ ok: true, data: { restarting: true } });
    await eventually(() => service.hellos.length === 2, 5_000, 'hello after restart');

    const upgrade = await service.command('manage', { operation: 'upgrade' });
    expect(upgrade.data).toMatchObject({ status: 'no_version_given', version: COLLECTOR_VERSION });

    const unknown = await service.command('manage', { operation: 'reboot' });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'unknown_operation' } });
  });

  it('answers an unknown command with an error', async () => {
    const { service } = await setup();
    expect(await service.command('selfdestruct', {})).toMatchObject({ ok: false, error: { code: 'unknown_command' } });
  });
});
