import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startClickHouseHttpServer } from '../../../tools/clickhouse-http/server.js';
import { ChdbEngine } from '../chdb-engine.js';
import { datasetOrgSql } from '../egress.js';
import type { FlowEngine } from '../engine.js';
import { HttpEngine } from '../http-engine.js';
import { named } from '../sql.js';
import { fakePackage } from '../testkit/ip-org-package.js';
import { compareVersions } from '../../infra/versions.js';
import { IpOrgDataset, locatePackage } from './dataset.js';
import { ipv4Prefixes, ipv6Prefixes, parseRangeLine } from './prefixes.js';

describe('ranges to prefixes', () => {
  it('covers an inclusive IPv4 range with the fewest aligned blocks', () => {
    expect([...ipv4Prefixes(16_777_216, 16_777_471)]).toEqual(['1.0.0.0/24']);
    expect([...ipv4Prefixes(16_777_217, 16_777_222)]).toEqual(['1.0.0.1/32', '1.0.0.2/31', '1.0.0.4/31', '1.0.0.6/32']);
    expect([...ipv4Prefixes(0, 2 ** 32 - 1)]).toEqual(['0.0.0.0/0']);
    expect([...ipv4Prefixes(2 ** 32 - 2, 2 ** 32 - 1)]).toEqual(['255.255.255.254/31']);
  });

  it('covers an IPv6 range the same way', () => {
    const lo = 0x20010db8n << 96n;
    expect([...ipv6Prefixes(lo, lo + (1n << 96n) - 1n)]).toEqual(['2001:db8:0:0:0:0:0:0/32']);
    expect([...ipv6Prefixes(lo + 1n, lo + 2n)]).toEqual(['2001:db8:0:0:0:0:0:1/128', '2001:db8:0:0:0:0:0:2/128']);
  });

  it('reads the CSV lines, quoted organizations included', () => {
    expect(parseRangeLine('16777216,16777471,13335,"Cloudflare, Inc."')).toEqual({ start: '16777216', end: '16777471', asn: 13335, org: 'Cloudflare, Inc.' });
    expect(parseRangeLine('1,2,3,"Say ""hi"""')?.org).toBe('Say "hi"');
    expect(parseRangeLine('1,2,3,Plain Org')?.org).toBe('Plain Org');
    expect(parseRangeLine('')).toBeUndefined();
  });

  it('orders versions numerically', () => {
    expect(compareVersions('2.3.2026061719', '2.3.2026070100')).toBe(-1);
    expect(compareVersions('2.10.0', '2.9.9')).toBe(1);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
  });

  it('finds the installed package', () => {
    expect(locatePackage()).toMatchObject({ name: '@ip-location-db/asn', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });
});

async function lookup(engine: FlowEngine, ip: string): Promise<string | null> {
  const rows = await engine.query<{ org: string | null }>(named('flowstore:test.ip_org', `SELECT ${datasetOrgSql('toIPv6OrNull({ip:String})')} AS org`), {
    ip,
  });
  return rows[0]!.org;
}

describe('the ip_org dataset at server stop', () => {
  it('reports a load the closing engine cut short only when the server is not stopping', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iporg-stop-'));
    const engine = new ChdbEngine(dir);
    await engine.close();
    try {
      const logged = (dataset: IpOrgDataset, events: string[]) => dataset.ensure().then(() => events);
      const running: string[] = [];
      expect(await logged(new IpOrgDataset(engine, { log: (event) => running.push(event) }), running)).toEqual(['ip_org.failed']);
      const stopping: string[] = [];
      const stopped = new IpOrgDataset(engine, { log: (event) => stopping.push(event) });
      stopped.stop();
      expect(await logged(stopped, stopping)).toEqual([]);
      expect(stopped.status().state).toBe('failed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const engines: [string, () => Promise<{ engine: FlowEngine; source?: { user: string; password?: string }; close(): Promise<void> }>][] = [
  [
    'chDB',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'iporg-chdb-'));
      const engine = new ChdbEngine(dir);
      return { engine, close: async () => (await engine.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  ],
  [
    'HTTP',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'iporg-http-'));
      const server = await startClickHouseHttpServer({ dataDir: dir, password: 'secret' });
      const engine = new HttpEngine({ url: server.url, username: 'default', password: 'secret' });
      return {
        engine,
        // The dictionary reads as a user of the ClickHouse behind the endpoint (chDB's default user has no password).
        source: { user: 'default', password: '' },
        close: async () => {
          await engine.close();
          await server.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

describe.each(engines)('the ip_org dictionary on %s', (_name, open) => {
  const root = mkdtempSync(join(tmpdir(), 'iporg-pkg-'));
  let opened: Awaited<ReturnType<typeof open>> | undefined;
  afterAll(async () => {
    await opened?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('loads a version, upgrades to a newer one, never downgrades', async () => {
    opened = await open();
    const { engine, source } = opened;
    const v1 = new IpOrgDataset(engine, { packageDir: fakePackage(root, '1.0.0', 'Google LLC'), ...(source ? { source } : {}) });
    expect(v1.status().state).toBe('idle');
    const loading = v1.ensure();
    expect(v1.status().state).toBe('loading');
    await loading;
    expect(v1.status()).toMatchObject({ state: 'ready', packageVersion: '1.0.0', loadedVersion: '1.0.0', prefixes: 7, error: null });
    expect(await lookup(engine, '8.8.8.8')).toBe('Google LLC');
    expect(await lookup(engine, '1.0.0.3')).toBe('Cloudflare, Inc.');
    expect(await lookup(engine, '1.0.0.7')).toBeNull();
    expect(await lookup(engine, '9.9.9.9')).toBe('AS19281');
    expect(await lookup(engine, '2001:4860::8888')).toBe('Google LLC');
    expect(await lookup(engine, 'not an ip')).toBeNull();

    const v2 = new IpOrgDataset(engine, { packageDir: fakePackage(root, '1.1.0', 'Google v2'), ...(source ? { source } : {}) });
    await v2.ensure();
    expect(v2.status()).toMatchObject({ state: 'ready', loadedVersion: '1.1.0' });
    expect(await lookup(engine, '8.8.8.8')).toBe('Google v2');
    const versions = await engine.query<{ version: string }>(named('flowstore:test.ip_org_versions', 'SELECT DISTINCT version FROM ip_org_prefixes'), {});
    expect(versions).toEqual([{ version: '1.1.0' }]);

    // An older process (or package) starting later serves the newer dataset instead of loading its own.
    const old = new IpOrgDataset(engine, { packageDir: fakePackage(root, '0.9.0', 'Google old'), ...(source ? { source } : {}) });
    await old.ensure();
    expect(old.status()).toMatchObject({ state: 'ready', packageVersion: '0.9.0', loadedVersion: '1.1.0' });
    expect(await lookup(engine, '8.8.8.8')).toBe('Google v2');
  }, 120_000);

  it('reports a failure and stays unusable, without throwing', async () => {
    const broken = new IpOrgDataset(opened!.engine, { packageDir: join(root, 'missing') });
    await broken.ensure();
    expect(broken.status()).toMatchObject({ state: 'failed', error: expect.stringContaining('package.json') });
    expect(broken.ready).toBe(false);
    const off = new IpOrgDataset(opened!.engine, { mode: 'off' });
    off.start();
    await off.ensure();
    expect(off.status().state).toBe('off');
  });
});
