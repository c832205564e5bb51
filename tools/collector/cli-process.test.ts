// The CLI as an operator runs it: a real process, JSON logs on stderr, SIGTERM flushes and exits 0.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startFakeService } from './testing/fake-service.js';

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('collector run (process)', () => {
  it('runs until SIGTERM, then flushes every generated flow and exits 0', async () => {
    let slow = true;
    const service = await startFakeService({
      // The service is slow at first, so flows are queued when the signal comes.
      ingest: async () => (slow ? (await new Promise((r) => setTimeout(r, 300)), undefined) : undefined),
    });
    cleanups.push(() => service.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'collector-proc-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'run', '--base-url', service.url, '--flows-per-second', '500', '--state-dir', stateDir, '--machine-id', 'proc-1'], {
      env: { ...process.env, PROPHET_ACCESS_KEY: 'cid.secret' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    await eventually(() => service.ingestCalls.length >= 2, 20_000, 'flows arriving');
    child.kill('SIGTERM');
    slow = false;
    expect(await exited).toBe(0);

    const summary = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(summary).toMatchObject({ machine_id: 'proc-1', node_id: 'node_fake', queued: 0, failed: 0 });
    expect(summary.sent).toBe(summary.flows_generated);
    expect(service.storedFlows()).toBe(summary.sent);
    const events = stderr.trim().split('\n').map((line) => JSON.parse(line).event);
    expect(events).toContain('collector.signal');
    expect(events.at(-1)).toBe('collector.stopped');
    expect(stderr).not.toContain('cid.secret');
  }, 40_000);

  it('exits 1 with the reason when the key is refused', async () => {
    const service = await startFakeService({ keys: ['some.other'] });
    cleanups.push(() => service.close());
    const stateDir = mkdtempSync(join(tmpdir(), 'collector-proc-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'run', '--base-url', service.url, '--access-key', 'bad.key', '--state-dir', stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
    expect(stderr).toMatch(/\ncollector: the access key was refused \(invalid_credentials\)\n$/);
  }, 40_000);
});
