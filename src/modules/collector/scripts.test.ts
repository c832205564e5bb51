import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { shellQuote } from './scripts.js';

const hasShellcheck = spawnSync('shellcheck', ['--version']).status === 0;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a script with bash as `curl … | sudo bash -s -- KEY` would, with the given environment. */
const bash = (script: string, args: string[], env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile('bash', [script, ...args], { env: { PATH: process.env.PATH!, ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('collector install and uninstall scripts', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'bd-install-'));
  const install = join(dir, 'install.sh');
  const uninstall = join(dir, 'uninstall.sh');
  const binary = Buffer.from('#!/bin/sh\necho "prophet collector 1.4.0"\n');
  const accessKey = 'cl_abc234.S3cr3t-_secret';

  /** A temporary root, unit directory and a fake init system that logs its calls. */
  const sandbox = (name: string) => {
    const root = join(dir, name);
    mkdirSync(join(root, 'bin'), { recursive: true });
    const log = join(root, 'init.log');
    for (const tool of ['systemctl', 'launchctl']) {
      writeFileSync(join(root, 'bin', tool), `#!/bin/sh\necho "$*" >> ${shellQuote(log)}\n`);
      chmodSync(join(root, 'bin', tool), 0o755);
    }
    return {
      installRoot: join(root, 'apps/prophet'),
      unitDir: join(root, 'systemd'),
      launchdDir: join(root, 'LaunchDaemons'),
      calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
      env: {
        PROPHET_INSTALL_ROOT: join(root, 'apps/prophet'),
        PROPHET_SYSTEMD_DIR: join(root, 'systemd'),
        PROPHET_SYSTEMCTL: join(root, 'bin/systemctl'),
        PROPHET_LAUNCHD_DIR: join(root, 'LaunchDaemons'),
        PROPHET_LAUNCHCTL: join(root, 'bin/launchctl'),
      },
    };
  };

  beforeAll(async () => {
    t = await startTestApp();
    for (const [os, arch] of [
      ['linux', 'amd64'],
      ['darwin', 'arm64'],
    ]) {
      await t.app.services.collector.publish({ file: binary, version: '1.4.0', channel: 'stable', os, arch });
    }
    for (const [file, path] of [
      [install, '/rest/collector/install/1.0'],
      [uninstall, '/rest/collector/uninstall/1.0'],
    ]) {
      const res = await call(t.url, 'GET', path);
      writeFileSync(file, res.body);
    }
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['install', 'uninstall'])('serves %s.sh as inline UTF-8 text with {base_url} baked in', async (name) => {
    const res = await call(t.url, 'GET', `/rest/collector/${name}/1.0`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('inline');
    expect(res.body).toMatch(/^#!\/usr\/bin\/env bash\n/);
    expect(res.body).toContain('set -euo pipefail');
    expect(res.body).toContain(`BASE_URL='${t.url}'`);
    expect(res.body).not.toMatch(/__PROPHET_[A-Z_]+__/);
  });

  it('passes shellcheck', () => {
    expect(hasShellcheck, 'shellcheck is missing: test/kit/ensure-test-tools.sh installs it').toBe(true);
    const result = spawnSync('shellcheck', ['--shell=bash', '--severity=style', install, uninstall], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('prints its usage without an access key', async () => {
    const box = sandbox('usage');
    const run = await bash(install, [], box.env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: install.sh <access_key>');
    const malformed = await bash(install, ['no-dot-here'], box.env);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('<client_id>.<client_secret>');
  });

  it.each([
    ['linux', 'aarch64', 'there is no collector build for linux/arm64'],
    ['darwin', 'x86_64', 'there is no collector build for darwin/amd64'],
    ['FreeBSD', 'amd64', 'unsupported operating system: FreeBSD'],
    ['Linux', 'riscv64', 'unsupported CPU architecture: riscv64'],
  ])('refuses %s/%s clearly', async (os, arch, message) => {
    const box = sandbox(`refuse-${os}-${arch}`);
    const run = await bash(install, [accessKey], { ...box.env, PROPHET_OS: os, PROPHET_ARCH: arch });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(existsSync(box.installRoot)).toBe(false);
  });

  it("stops with the server's message when the channel has no release", async () => {
    const box = sandbox('no-release');
    const run = await bash(install, [accessKey], { ...box.env, PROPHET_OS: 'Linux', PROPHET_ARCH: 'x86_64', PROPHET_CHANNEL: 'dev' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('download failed with HTTP 404');
    expect(run.stderr).toContain('No dev collector release for linux/amd64');
  });

  it('installs under systemd against this server, upgrades in place, and uninstalls everything', async () => {
    const box = sandbox('linux');
    const env = { ...box.env, PROPHET_OS: 'Linux', PROPHET_ARCH: 'x86_64' };
    const run = await bash(install, [accessKey], env);
    expect(run.stderr).toContain('installed the collector');
    expect(run.code).toBe(0);

    const installed = join(box.installRoot, 'bin/prophet');
    expect(readFileSync(installed)).toEqual(binary);
    expect(statSync(installed).mode & 0o777).toBe(0o755);
    const yaml = join(box.installRoot, 'state/prophet_collector.yaml');
    expect(statSync(yaml).mode & 0o777).toBe(0o600);
    expect(statSync(join(box.installRoot, 'state')).mode & 0o777).toBe(0o700);
    expect(readFileSync(yaml, 'utf8')).toContain(`access_key: "${accessKey}"`);
    expect(readFileSync(yaml, 'utf8')).toContain(`base_url: "${t.url}"`);
    expect(readFileSync(yaml, 'utf8')).toContain(`spool_dir: "${box.installRoot}/spool"`);
    const unit = readFileSync(join(box.unitDir, 'prophet-node.service'), 'utf8');
    expect(unit).toContain(`ExecStart=${box.installRoot}/bin/prophet --prophet-dir ${box.installRoot}/state\n`);
    for (const line of ['Restart=always', 'RestartSec=5', 'After=network-online.target', 'WantedBy=multi-user.target']) {
      expect(unit).toContain(`${line}\n`);
    }
    expect(unit).not.toContain('Environment=');
    expect(box.calls()).toEqual(['daemon-reload', 'enable --now prophet-node']);

    const again = await bash(install, [accessKey], env);
    expect(again.code).toBe(0);
    expect(box.calls().slice(2)).toEqual(['daemon-reload', 'enable --now prophet-node', 'restart prophet-node']);

    const removed = await bash(uninstall, [], env);
    expect(removed.code).toBe(0);
    expect(box.calls().slice(5)).toEqual(['disable --now prophet-node', 'daemon-reload', 'reset-failed prophet-node']);
    expect(existsSync(box.installRoot)).toBe(false);
    expect(readdirSync(box.unitDir)).toEqual([]);
  });

  it('installs under launchd on macOS and uninstalls it', async () => {
    const box = sandbox('darwin');
    const env = { ...box.env, PROPHET_OS: 'Darwin', PROPHET_ARCH: 'arm64' };
    const run = await bash(install, [accessKey], env);
    expect(run.stderr).toContain('installed the collector');
    expect(run.code).toBe(0);
    expect(readFileSync(join(box.installRoot, 'bin/prophet'))).toEqual(binary);
    const plist = readFileSync(join(box.launchdDir, 'io.prophet.node.plist'), 'utf8');
    expect(plist).toContain(
      `<string>${box.installRoot}/bin/prophet</string>\n    <string>--prophet-dir</string>\n    <string>${box.installRoot}/state</string>`,
    );
    expect(plist).toContain('<key>KeepAlive</key>\n  <true/>');
    expect(box.calls()).toEqual([
      'bootout system/io.prophet.node',
      'enable system/io.prophet.node',
      `bootstrap system ${join(box.launchdDir, 'io.prophet.node.plist')}`,
    ]);

    expect((await bash(uninstall, [], env)).code).toBe(0);
    expect(box.calls().slice(3)).toEqual(['bootout system/io.prophet.node', 'disable system/io.prophet.node']);
    expect(existsSync(box.installRoot)).toBe(false);
    expect(readdirSync(box.launchdDir)).toEqual([]);
  });

  it('leaves files it did not create in the install root', async () => {
    const box = sandbox('foreign');
    const env = { ...box.env, PROPHET_OS: 'linux', PROPHET_ARCH: 'amd64' };
    expect((await bash(install, [accessKey], env)).code).toBe(0);
    writeFileSync(join(box.installRoot, 'notes.txt'), 'mine');
    expect((await bash(uninstall, [], env)).code).toBe(0);
    expect(readdirSync(box.installRoot)).toEqual(['notes.txt']);
  });
});
