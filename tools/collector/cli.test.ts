import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Io, main, parseCli, resolveRun, USAGE, UsageError } from './cli.js';
import { StateDir } from './state.js';

function capture(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env, onSignal: () => () => undefined };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'collector-cli-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('parseCli', () => {
  it('reads run flags with their defaults', () => {
    expect(parseCli(['run', '--base-url', 'http://h:1', '--access-key', 'a.b'])).toEqual({
      command: 'run',
      baseUrl: 'http://h:1',
      accessKey: 'a.b',
      stateDir: undefined,
      machineId: undefined,
      hostname: undefined,
      logLevel: 'info',
      flowsPerSecond: 50,
      seconds: undefined,
      backfillHours: 0,
      scenarios: [],
      seed: undefined,
      diurnal: false,
      batchFlows: undefined,
      batchFormat: 'native',
      maxQueuedFlows: undefined,
      pcapFiles: [],
      captureInterfaces: [],
    });
  });

  it.each([
    ['0.0.0.0:4739', { host: '0.0.0.0', port: 4739 }],
    ['[::]:2055', { host: '::', port: 2055 }],
    ['[::ffff:127.0.0.1]:0', { host: '::ffff:127.0.0.1', port: 0 }],
    ['localhost:9995', { host: 'localhost', port: 9995 }],
  ])('reads --ipfix-listen %s', (value, exportListen) => {
    const parsed = parseCli(['run', '--base-url', 'http://h:1', '--ipfix-listen', value, '--seconds', '5']);
    expect(parsed).toMatchObject({ exportListen, seconds: 5, pcapFiles: [], captureInterfaces: [] });
    expect(resolveRun(parsed as Extract<typeof parsed, { command: 'run' }>, { PROPHET_STATE_DIR: tempDir(), PROPHET_ACCESS_KEY: 'k.s' })).toMatchObject({
      exportListen,
    });
  });

  it('reads live interfaces (repeated, each once) with the meter timeouts', () => {
    const parsed = parseCli([
      'run',
      '--base-url',
      'http://h:1',
      '--capture',
      'eth0',
      '--capture',
      'veth-a.10',
      '--capture',
      'eth0',
      '--idle-timeout',
      '5',
      '--seconds',
      '10',
    ]);
    expect(parsed).toMatchObject({ captureInterfaces: ['eth0', 'veth-a.10'], pcapFiles: [], idleTimeoutSeconds: 5, seconds: 10 });
    expect(resolveRun(parsed as Extract<typeof parsed, { command: 'run' }>, { PROPHET_STATE_DIR: tempDir(), PROPHET_ACCESS_KEY: 'k.s' })).toMatchObject({
      captureInterfaces: ['eth0', 'veth-a.10'],
      idleTimeoutSecs: 5,
    });
  });

  it('reads capture files in order, with the meter timeouts', () => {
    const parsed = parseCli([
      'run',
      '--base-url',
      'http://h:1',
      '--pcap',
      'a.pcap',
      '--pcap',
      'b.pcapng',
      '--idle-timeout',
      '5',
      '--active-timeout',
      '60',
      '--seconds',
      '10',
    ]);
    expect(parsed).toMatchObject({ pcapFiles: ['a.pcap', 'b.pcapng'], idleTimeoutSeconds: 5, activeTimeoutSeconds: 60, seconds: 10 });
    expect(resolveRun(parsed as Extract<typeof parsed, { command: 'run' }>, { PROPHET_STATE_DIR: tempDir(), PROPHET_ACCESS_KEY: 'k.s' })).toMatchObject({
      pcapFiles: ['a.pcap', 'b.pcapng'],
      idleTimeoutSecs: 5,
      activeTimeoutSecs: 60,
    });
  });

  it('reads numbers, scenarios (repeated, comma-separated, all) and seeds', () => {
    const parsed = parseCli([
      'run',
      '--flows-per-second',
      '12.5',
      '--seconds',
      '0',
      '--backfill-hours',
      '2',
      '--scenario',
      'beacon,scan',
      '--scenario',
      'beacon',
      '--seed',
      '42',
    ]);
    expect(parsed).toMatchObject({ flowsPerSecond: 12.5, seconds: 0, backfillHours: 2, scenarios: ['beacon', 'scan'], seed: 42 });
    expect(parseCli(['run', '--scenario', 'all'])).toMatchObject({ scenarios: ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'] });
    expect(parseCli(['run', '--seed', 'lab-7'])).toMatchObject({ seed: 'lab-7' });
  });

  it('reads --batch-format json and hands it to the collector', () => {
    const parsed = parseCli(['run', '--base-url', 'http://h:1', '--batch-format', 'json']);
    expect(parsed).toMatchObject({ batchFormat: 'json' });
    expect(resolveRun(parsed as Extract<typeof parsed, { command: 'run' }>, { PROPHET_STATE_DIR: tempDir(), PROPHET_ACCESS_KEY: 'k.s' })).toMatchObject({
      batchFormat: 'json',
    });
  });

  it('reads enroll flags', () => {
    expect(parseCli(['enroll', '--base-url', 'https://x.example', '--hostname', 'edge-1', '--machine-id', 'm-1', '--state-dir', '/s'])).toMatchObject({
      command: 'enroll',
      baseUrl: 'https://x.example',
      hostname: 'edge-1',
      machineId: 'm-1',
      stateDir: '/s',
    });
  });

  it.each([
    [['frobnicate'], /unknown command/],
    [['run', '--flows-per-second', 'fast'], /--flows-per-second must be a number/],
    [['run', '--seconds=-1'], /--seconds must be/],
    [['run', '--batch-flows', '20000'], /--batch-flows must be an integer from 1 to 10000/],
    [['run', '--batch-format', 'parquet'], /--batch-format must be json or native, not "parquet"/],
    [['run', '--batch-format', ''], /--batch-format must not be empty/],
    [['run', '--scenario', 'ransomware'], /--scenario "ransomware" is not one of/],
    [['run', '--base-url', 'ftp://x'], /must be http/],
    [['run', '--base-url', 'not a url'], /is not a URL/],
    [['run', '--bogus'], /Unknown option '--bogus'/],
    [['run', 'extra'], /positional/i],
    [['enroll', '--access-key', 'a.b'], /Unknown option '--access-key'/],
    [['run', '--log-level', 'loud'], /--log-level must be one of/],
    [['run', '--hostname', ''], /must not be empty/],
    [['enroll', '--machine-id', 'x'.repeat(257)], /--machine-id must be at most 256 characters/],
    [['run', '--pcap', 'a.pcap', '--flows-per-second', '10'], /--flows-per-second sets up generated flows; it cannot be combined with --pcap/],
    [['run', '--pcap', 'a.pcap', '--backfill-hours', '1'], /--backfill-hours .* --pcap/],
    [['run', '--scenario', 'scan', '--pcap', 'a.pcap'], /--scenario .* --pcap/],
    [['run', '--pcap', 'a.pcap', '--diurnal'], /--diurnal .* --pcap/],
    [['run', '--pcap', 'a.pcap', '--seed', '1'], /--seed .* --pcap/],
    [['run', '--pcap', ''], /--pcap must not be empty/],
    [['run', '--pcap', 'a.pcap', '--seconds', '0'], /--seconds 0 would meter nothing/],
    [['run', '--idle-timeout', '5'], /--idle-timeout applies to metered captures; give --pcap FILE or --capture IFACE/],
    [['run', '--capture', 'eth0', '--flows-per-second', '10'], /--flows-per-second sets up generated flows; it cannot be combined with --capture/],
    [['run', '--capture', 'eth0', '--scenario', 'scan'], /--scenario .* --capture/],
    [['run', '--capture', 'eth0', '--seed', '1'], /--seed .* --capture/],
    [['run', '--capture', 'eth0', '--seconds', '0'], /--seconds 0 would meter nothing; with --capture/],
    [['run', '--capture', 'eth0', '--pcap', 'a.pcap'], /--pcap and --capture cannot be combined: one source of flows per run/],
    [['run', '--capture', ''], /--capture "" is not an interface name/],
    [['run', '--capture', 'a-very-long-interface'], /is not an interface name \(1-15 characters/],
    [['run', '--capture', 'eth0/1'], /--capture "eth0\/1" is not an interface name/],
    [['run', '--capture', 'eth 0'], /is not an interface name/],
    [['run', '--ipfix-listen', '4739'], /--ipfix-listen "4739" is not HOST:PORT/],
    [['run', '--ipfix-listen', ':::4739'], /is not HOST:PORT/],
    [['run', '--ipfix-listen', '0.0.0.0:65536'], /is not HOST:PORT \(e.g. 0.0.0.0:4739, \[::\]:4739; port 0 to 65535\)/],
    [['run', '--ipfix-listen', '0.0.0.0:'], /is not HOST:PORT/],
    [['run', '--ipfix-listen', '0.0.0.0:4739', '--pcap', 'a.pcap'], /--pcap and --ipfix-listen cannot be combined: one source of flows per run/],
    [['run', '--ipfix-listen', '0.0.0.0:4739', '--capture', 'eth0'], /--capture and --ipfix-listen cannot be combined/],
    [
      ['run', '--ipfix-listen', '0.0.0.0:4739', '--flows-per-second', '5'],
      /--flows-per-second sets up generated flows; it cannot be combined with --ipfix-listen/,
    ],
    [['run', '--ipfix-listen', '0.0.0.0:4739', '--backfill-hours', '1'], /--backfill-hours .* --ipfix-listen/],
    [['run', '--ipfix-listen', '0.0.0.0:4739', '--seconds', '0'], /--seconds 0 would receive nothing; with --ipfix-listen/],
    [['run', '--ipfix-listen', '0.0.0.0:4739', '--idle-timeout', '5'], /--idle-timeout applies to metered captures/],
    [['run', '--capture', '..'], /is not an interface name/],
    [['run', '--pcap', 'a.pcap', '--active-timeout', '0'], /--active-timeout must be a number from 1/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
    expect(() => parseCli(argv)).toThrow(message);
  });

  it('help and version', () => {
    expect(parseCli([])).toEqual({ command: 'help' });
    expect(parseCli(['--help'])).toEqual({ command: 'help' });
    expect(parseCli(['run', '-h'])).toEqual({ command: 'help' });
    expect(parseCli(['version'])).toEqual({ command: 'version' });
  });
});

describe('resolveRun', () => {
  it('takes the base URL, key and machine id from the state dir when not given', () => {
    const dir = tempDir();
    const state = new StateDir(dir);
    state.writeAccessKey('cid.secret');
    state.update({ base_url: 'http://stored:9', machine_id: 'm-stored' });
    const parsed = parseCli(['run', '--state-dir', dir]) as Extract<ReturnType<typeof parseCli>, { command: 'run' }>;
    expect(resolveRun(parsed, {})).toMatchObject({ baseUrl: 'http://stored:9', accessKey: 'cid.secret', stateDir: dir, machineId: undefined });
    expect(resolveRun(parsed, { PROPHET_ACCESS_KEY: 'env.key' })).toMatchObject({ accessKey: 'env.key' });
  });

  it('defaults the state dir to $PROPHET_STATE_DIR', () => {
    const dir = tempDir();
    new StateDir(dir).writeAccessKey('k.s');
    const parsed = parseCli(['run', '--base-url', 'http://h']) as Extract<ReturnType<typeof parseCli>, { command: 'run' }>;
    expect(resolveRun(parsed, { PROPHET_STATE_DIR: dir })).toMatchObject({ stateDir: dir, accessKey: 'k.s' });
  });

  it('is a usage error without a key or a base URL', () => {
    const dir = tempDir();
    const noUrl = parseCli(['run', '--state-dir', dir, '--access-key', 'a.b']) as Extract<ReturnType<typeof parseCli>, { command: 'run' }>;
    expect(() => resolveRun(noUrl, {})).toThrow(/no --base-url/);
    const noKey = parseCli(['run', '--state-dir', dir, '--base-url', 'http://h']) as Extract<ReturnType<typeof parseCli>, { command: 'run' }>;
    expect(() => resolveRun(noKey, {})).toThrow(/no access key/);
    const badKey = parseCli(['run', '--state-dir', dir, '--base-url', 'http://h', '--access-key', 'nodot']) as Extract<
      ReturnType<typeof parseCli>,
      { command: 'run' }
    >;
    expect(() => resolveRun(badKey, {})).toThrow(/<client_id>.<client_secret>/);
  });
});

describe('main', () => {
  it('prints the usage for help, exit 0', async () => {
    const c = capture();
    expect(await main(['help'], c.io)).toBe(0);
    expect(c.out()).toBe(USAGE);
    expect(USAGE).toMatch(/--flows-per-second/);
    expect(USAGE).toMatch(/--capture IFACE .*\n(.*\n)*.*--ipfix-listen HOST:PORT/);
  });

  it('answers a usage error with exit 2 and a hint on stderr', async () => {
    const c = capture();
    expect(await main(['run', '--seconds', 'soon'], c.io)).toBe(2);
    expect(c.err()).toMatch(/--seconds must be a number.*\n.*collector help/);
    expect(c.out()).toBe('');
  });

  it('refuses a --pcap file that is missing or no capture, naming it, exit 1, before contacting the service', async () => {
    const dir = tempDir();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not packets');
    for (const [file, message] of [
      [join(dir, 'missing.pcap'), `cannot read capture file ${join(dir, 'missing.pcap')}: no such file`],
      [text, `${text} is not a pcap or pcapng capture`],
    ]) {
      const c = capture({ PROPHET_STATE_DIR: dir, PROPHET_ACCESS_KEY: 'k.s' });
      // Port 1 refuses connections: a contacted service would show in the message.
      expect(await main(['run', '--base-url', 'http://127.0.0.1:1', '--pcap', file], c.io)).toBe(1);
      expect(c.err()).toContain(`collector: ${message}`);
      expect(c.out()).toBe('');
    }
  });

  it('refuses an --ipfix-listen address it cannot bind, exit 1, before contacting the service', async () => {
    const taken = createSocket('udp4');
    await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', resolve));
    const port = taken.address().port;
    try {
      for (const [address, message] of [
        [`127.0.0.1:${port}`, `cannot listen for flow exports on 127.0.0.1:${port}: the port is in use`],
        // TEST-NET-1: an address no interface here has.
        ['192.0.2.1:4739', 'cannot listen for flow exports on 192.0.2.1:4739: no local interface has that address'],
      ]) {
        const c = capture({ PROPHET_STATE_DIR: tempDir(), PROPHET_ACCESS_KEY: 'k.s' });
        expect(await main(['run', '--base-url', 'http://127.0.0.1:1', '--ipfix-listen', address], c.io)).toBe(1);
        expect(c.err()).toBe(`collector: ${message}\n`);
        expect(c.out()).toBe('');
      }
    } finally {
      taken.close();
    }
  });

  it('run without a key is a usage error', async () => {
    const c = capture({ PROPHET_STATE_DIR: tempDir() });
    expect(await main(['run', '--base-url', 'http://127.0.0.1:1'], c.io)).toBe(2);
    expect(c.err()).toMatch(/no access key/);
  });

  it('enroll without a base URL is a usage error', async () => {
    const c = capture();
    expect(await main(['enroll', '--hostname', 'h'], c.io)).toBe(2);
    expect(c.err()).toMatch(/enroll needs --base-url/);
  });

  it('prints the machine id', async () => {
    const c = capture();
    expect(await main(['machine-id', '--machine-id', 'given'], c.io)).toBe(0);
    expect(c.out()).toBe('given\n');
    const d = capture();
    await main(['machine-id'], d.io);
    expect(d.out()).toMatch(/^[0-9a-f-]{36}\n$/);
  });
});

describe('state dir', () => {
  it('keeps the key and state private (0600 files in a 0700 dir)', async () => {
    const { statSync } = await import('node:fs');
    const dir = join(tempDir(), 'nested', 'state');
    const state = new StateDir(dir);
    state.writeAccessKey('cid.secret');
    state.update({ machine_id: 'm' });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(state.accessKeyPath).mode & 0o777).toBe(0o600);
    expect(statSync(state.statePath).mode & 0o777).toBe(0o600);
    expect(state.readAccessKey()).toBe('cid.secret');
    expect(state.update({ node_id: 'n' })).toEqual({ machine_id: 'm', node_id: 'n' });
    writeFileSync(state.statePath, 'not json');
    expect(state.read()).toEqual({});
  });
});
