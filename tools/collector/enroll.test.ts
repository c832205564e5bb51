import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Io, main } from './cli.js';
import { enroll, EnrollError } from './enroll.js';
import { createLogger } from './logring.js';
import { type Reply, startFakeService } from './testing/fake-service.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Script {
  /** Answers to successive polls; the last one repeats. */
  polls: Reply[];
  pollInterval?: number;
  expiresIn?: number;
}

async function deviceService(script: Script) {
  const starts: any[] = [];
  const polls: Array<{ at: number; body: any }> = [];
  const service = await startFakeService({
    device: (path, body) => {
      if (path === '/rest/oauth2/device/1.0') {
        if (!body?.hostname || !body?.machine_id) return { status: 400, body: { error: 'machine_id (or node_id) and hostname are required' } };
        starts.push(body);
        return {
          status: 200,
          body: {
            device_code: 'dc-123',
            auth_url: 'http://console.example/device?code=dc-123',
            poll_interval: script.pollInterval ?? 0,
            expires_in: script.expiresIn ?? 600,
          },
        };
      }
      if (path === '/rest/oauth2/device/poll/1.0') {
        polls.push({ at: Date.now(), body });
        return script.polls[Math.min(polls.length - 1, script.polls.length - 1)];
      }
      return { status: 404 };
    },
  });
  cleanups.push(() => service.close());
  return { service, starts, polls };
}

function capture(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env, onSignal: () => () => undefined };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'collector-enroll-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'state');
}

const pending: Reply = { status: 200, body: { status: 'pending' } };
const logger = createLogger({ write: null });

describe('enroll (device flow)', () => {
  it('pending → approved: prints the URL, stores the key 0600, prints the outcome', async () => {
    const { service, starts, polls } = await deviceService({
      polls: [pending, pending, { status: 200, body: { status: 'approved', access_key: 'dev_client.dev_secret', node_id: 'node_9' } }],
    });
    const dir = stateDir();
    const c = capture();
    const code = await main(['enroll', '--base-url', service.url, '--hostname', 'edge-7', '--machine-id', 'm-7', '--state-dir', dir], c.io);
    expect(code).toBe(0);
    expect(starts).toEqual([{ hostname: 'edge-7', machine_id: 'm-7' }]);
    expect(polls.map((p) => p.body)).toEqual(Array(3).fill({ device_code: 'dc-123' }));
    const lines = c.out().trim().split('\n');
    expect(lines).toEqual([
      'http://console.example/device?code=dc-123',
      JSON.stringify({ status: 'approved', node_id: 'node_9', hostname: 'edge-7', machine_id: 'm-7' }),
    ]);
    expect(c.err()).toContain('Approved: this device is enrolled as edge-7 (machine m-7).');
    expect(c.err()).toMatch(/approves it/);
    expect(readFileSync(join(dir, 'access_key'), 'utf8').trim()).toBe('dev_client.dev_secret');
    expect(statSync(join(dir, 'access_key')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toMatchObject({
      base_url: service.url,
      machine_id: 'm-7',
      hostname: 'edge-7',
      node_id: 'node_9',
    });
  });

  it('denied: exit 1 with a clear message, no key stored', async () => {
    const { service } = await deviceService({ polls: [pending, { status: 200, body: { status: 'denied' } }] });
    const dir = stateDir();
    const c = capture();
    expect(await main(['enroll', '--base-url', service.url, '--hostname', 'h', '--machine-id', 'm', '--state-dir', dir], c.io)).toBe(1);
    expect(c.out().trim().split('\n').at(-1)).toBe('{"status":"denied"}');
    expect(c.err()).toMatch(/enrolment failed: an operator denied this device/);
    expect(() => statSync(join(dir, 'access_key'))).toThrow();
  });

  it('expired: exit 1', async () => {
    const { service } = await deviceService({ polls: [{ status: 200, body: { status: 'expired' } }] });
    const c = capture();
    expect(await main(['enroll', '--base-url', service.url, '--hostname', 'h', '--machine-id', 'm', '--state-dir', stateDir()], c.io)).toBe(1);
    expect(c.out()).toContain('{"status":"expired"}');
    expect(c.err()).toMatch(/expired before an operator approved it/);
  });

  it('approved without a key (another poll took it) fails instead of waiting forever', async () => {
    const { service } = await deviceService({ polls: [{ status: 200, body: { status: 'approved' } }] });
    await expect(enroll({ baseUrl: service.url, hostname: 'h', machineId: 'm', logger })).rejects.toMatchObject({ status: 'key_taken' });
  });

  it('honours poll_interval, slow_down and Retry-After, and rides out a 503', async () => {
    const { service, polls } = await deviceService({
      pollInterval: 0.3,
      polls: [
        { status: 200, body: { status: 'pending', slow_down: true }, headers: { 'retry-after': '1' } },
        { status: 503, headers: { 'retry-after': '0' } },
        { status: 200, body: { status: 'approved', access_key: 'a.b' } },
      ],
    });
    const started = Date.now();
    const result = await enroll({ baseUrl: service.url, hostname: 'h', machineId: 'm', logger, slowDownStepMs: 200 });
    expect(result).toEqual({ status: 'approved', accessKey: 'a.b' });
    expect(polls[0].at - started).toBeGreaterThanOrEqual(300); // the first poll waits poll_interval
    expect(polls[1].at - polls[0].at).toBeGreaterThanOrEqual(1_000); // Retry-After after slow_down
    expect(polls[2].at - polls[1].at).toBeGreaterThanOrEqual(500); // interval grew by the slow_down step
  });

  it('a refused start is an EnrollError with the service’s message', async () => {
    const { service } = await deviceService({ polls: [pending] });
    await expect(enroll({ baseUrl: service.url, hostname: '', machineId: 'm', logger })).rejects.toThrow(EnrollError);
    await expect(enroll({ baseUrl: service.url, hostname: '', machineId: 'm', logger })).rejects.toThrow(/hostname are required/);
  });
});
