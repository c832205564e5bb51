// The CLI as an operator runs it: a real process, JSON logs on stderr, SIGTERM flushes and exits 0.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type Io, main } from './cli.js';
import { StateDir } from './state.js';
import { eventually, startFakeService } from './testing/fake-service.js';

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `collector <args>` in a process of its own, killed after the test; its output as it comes. */
function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (output.stdout += d));
  child.stderr.on('data', (d) => (output.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

function tempStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'collector-proc-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('collector run (process)', () => {
  it('runs until SIGTERM, then flushes every generated flow and exits 0', async () => {
    let slow = true;
    const service = await startFakeService({
      // The service is slow at first, so flows are queued when the signal comes.
      ingest: async () => (slow ? (await new Promise((r) => setTimeout(r, 300)), undefined) : undefined),
    });
    cleanups.push(() => service.close());
    const args = ['run', '--base-url', service.url, '--flows-per-second', '500', '--state-dir', tempStateDir(), '--machine-id', 'proc-1'];
    const { child, output, exited } = spawnCli(args, { PROPHET_ACCESS_KEY: 'cid.secret' });

    await eventually(() => service.ingestCalls.length >= 2, 20_000, 'flows arriving');
    child.kill('SIGTERM');
    slow = false;
    expect(await exited).toBe(0);

    const summary = JSON.parse(output.stdout.trim().split('\n').at(-1)!);
    expect(summary).toMatchObject({ machine_id: 'proc-1', node_id: 'node_fake', queued: 0, failed: 0 });
    expect(summary.sent).toBe(summary.flows_generated);
    expect(service.storedFlows()).toBe(summary.sent);
    const events = output.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).event);
    expect(events).toContain('collector.signal');
    expect(events.at(-1)).toBe('collector.stopped');
    expect(output.stderr).not.toContain('cid.secret');
  }, 40_000);

  it("reports a backfill's progress as JSON lines off a terminal, says interrupted when stopped, and runs under the enrolled hostname", async () => {
    // Slow ingest: the backfill (1.8 M flows) lasts far longer than the 5 s between progress lines.
    let slow = true;
    const service = await startFakeService({ ingest: async () => (slow ? (await new Promise((r) => setTimeout(r, 200)), undefined) : undefined) });
    cleanups.push(() => service.close());
    const stateDir = tempStateDir();
    new StateDir(stateDir).update({ hostname: 'edge-7', machine_id: 'proc-2' });
    const args = ['run', '--base-url', service.url, '--flows-per-second', '500', '--backfill-hours', '1', '--seconds', '0', '--state-dir', stateDir];
    const { child, output, exited } = spawnCli(args, { PROPHET_ACCESS_KEY: 'cid.secret' });
    const events = () =>
      output.stderr
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));

    await eventually(() => events().some((e) => e.event === 'flows.backfill_progress'), 20_000, 'a progress line');
    child.kill('SIGINT');
    slow = false;
    expect(await exited).toBe(0);

    const progress = events().find((e) => e.event === 'flows.backfill_progress');
    expect(progress).toEqual({
      time: expect.any(String),
      level: 'info',
      event: 'flows.backfill_progress',
      percent: expect.any(Number),
      sent: expect.any(Number),
      flows_per_second: expect.any(Number),
      eta_s: expect.any(Number),
    });
    expect(progress.percent).toBeGreaterThan(0);
    expect(progress.percent).toBeLessThan(100);
    const names = events().map((e) => e.event);
    expect(names).toContain('flows.backfill_interrupted');
    expect(names).not.toContain('flows.backfill_done');
    expect(output.stderr).not.toContain('\r'); // no bar off a terminal
    expect(events().find((e) => e.event === 'collector.starting')).toMatchObject({ hostname: 'edge-7', machine_id: 'proc-2' });
    expect(service.hellos[0]).toMatchObject({ hostname: 'edge-7' });
    const summary = JSON.parse(output.stdout.trim().split('\n').at(-1)!);
    expect(summary).toMatchObject({ hostname: 'edge-7', machine_id: 'proc-2', interrupted: true, queued: 0, failed: 0 });
  }, 60_000);

  it("draws the backfill's progress as a bar when stderr is a terminal, ending at 100% and done", async () => {
    const service = await startFakeService({ ingest: async () => void (await new Promise((r) => setTimeout(r, 10))) });
    cleanups.push(() => service.close());
    const stateDir = tempStateDir();
    let stderr = '';
    const io: Io = {
      stdout: () => undefined,
      stderr: (text) => void (stderr += text),
      env: { PROPHET_ACCESS_KEY: 'cid.secret' },
      onSignal: () => () => undefined,
      stderrIsTTY: true,
    };
    const args = [
      'run',
      '--base-url',
      service.url,
      '--flows-per-second',
      '10',
      '--backfill-hours',
      '1',
      '--seconds',
      '0',
      '--state-dir',
      stateDir,
      '--machine-id',
      'tty-1',
    ];
    expect(await main(args, io)).toBe(0);
    const bars = [...stderr.matchAll(/\rbackfill \[[#.]{24}\] +([\d.]+)% +[\d,]+ flows sent +[\d,]+ flows\/s +ETA [\d:-]+\x1b\[K/g)];
    expect(bars.length).toBeGreaterThan(1);
    expect(bars.at(-1)![1]).toBe('100.0');
    // Log lines are written on a cleared line, never glued to a bar.
    for (const line of stderr.split(/\r\x1b\[K|\n/).filter((l) => l.startsWith('{'))) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr).toContain('"event":"flows.backfill_done"');
  }, 60_000);

  it('exits 1 with the reason when the key is refused', async () => {
    const service = await startFakeService({ keys: ['some.other'] });
    cleanups.push(() => service.close());
    const { output, exited } = spawnCli(['run', '--base-url', service.url, '--access-key', 'bad.key', '--state-dir', tempStateDir()]);
    expect(await exited).toBe(1);
    expect(output.stderr).toMatch(/\ncollector: the access key was refused \(invalid_credentials\)\n$/);
  }, 40_000);
});
