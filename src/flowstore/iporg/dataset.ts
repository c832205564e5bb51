/**
 * IP → organization enrichment inside ClickHouse, from the ASN dataset the npm package
 * `@ip-location-db/asn` ships (RouteViews + RIR + DB-IP data, CC BY 4.0; docs/explore.md).
 *
 * The package's inclusive address ranges become CIDR prefixes in `ip_org_prefixes` (one copy per
 * package version), and an `ip_trie` dictionary `ip_org` over the current version answers
 * `dictGet('ip_org', 'org', <IPv6>)` in any query, on chDB and on a server alike. The loaded
 * version is recorded in `ip_org_datasets`; upgrading the package loads the new version at the
 * next start (never an older one over a newer one), switches the dictionary to it and drops the
 * old rows. Loading runs in the background: `status()` says where it is, and queries use the
 * dictionary only once it is `ready` (egress.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { compareVersions } from '../../infra/versions.js';
import type { FlowEngine } from '../engine.js';
import { named } from '../sql.js';
import { ipv4Prefixes, ipv6Prefixes, parseRangeLine } from './prefixes.js';

export const IP_ORG_DICTIONARY = 'ip_org';
export const IP_ORG_PREFIXES_TABLE = 'ip_org_prefixes';
export const IP_ORG_DATASETS_TABLE = 'ip_org_datasets';
export const IP_ORG_PACKAGE = '@ip-location-db/asn';
export const IP_ORG_ATTRIBUTION =
  'IP to ASN data: RouteViews (routeviews.org), NRO (nro.net) and DB-IP (IP Geolocation by DB-IP, https://db-ip.com), CC BY 4.0, via the ip-location-db project';

const RETRY_AFTER_MS = 60_000;
/** Rows per insert: each insert carries its own deduplication token, so a retried load adds nothing twice. */
const CHUNK_ROWS = 100_000;

export interface IpOrgPackage {
  name: string;
  version: string;
  license: string;
  dir: string;
}

/** The installed dataset package (or a directory laid out like it, for tests). */
export function locatePackage(dir?: string): IpOrgPackage {
  const root = dir ?? dirname(createRequire(import.meta.url).resolve(`${IP_ORG_PACKAGE}/package.json`));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: string; version?: string; license?: string };
  if (!pkg.version || !/^[0-9A-Za-z.+-]+$/.test(pkg.version)) throw new Error(`${root}: package.json has no usable version`);
  return { name: pkg.name ?? IP_ORG_PACKAGE, version: pkg.version, license: pkg.license ?? 'unknown', dir: root };
}

/** Prefix rows of the package: IPv4 then IPv6; ranges whose organization is blank are named `AS<n>`. */
export function* prefixRows(pkg: IpOrgPackage): Generator<{ prefix: string; asn: number; org: string }> {
  for (const [file, family] of [
    ['asn-ipv4-num.csv', 4],
    ['asn-ipv6-num.csv', 6],
  ] as const) {
    const text = readFileSync(join(pkg.dir, file), 'utf8');
    for (const line of text.split('\n')) {
      const r = parseRangeLine(line);
      if (!r) continue;
      const org = r.org.trim() || `AS${r.asn}`;
      const prefixes = family === 4 ? ipv4Prefixes(Number(r.start), Number(r.end)) : ipv6Prefixes(BigInt(r.start), BigInt(r.end));
      for (const prefix of prefixes) yield { prefix, asn: r.asn, org };
    }
  }
}

export type IpOrgState = 'idle' | 'loading' | 'ready' | 'failed' | 'off';

export interface IpOrgStatus {
  dataset: string;
  /** The installed package's version. */
  packageVersion: string | null;
  /** The version the dictionary serves (null until one is loaded). */
  loadedVersion: string | null;
  state: IpOrgState;
  prefixes: number | null;
  loadedAt: string | null;
  /** How long the last load took in this process (reading, inserting, building the dictionary). */
  loadMs: number | null;
  license: string;
  attribution: string;
  error: string | null;
}

/** Credentials the dictionary's ClickHouse source uses to read `ip_org_prefixes` on a server. */
export interface DictionarySource {
  database?: string;
  user?: string;
  password?: string;
}

export interface IpOrgOptions {
  /** A directory laid out like the package (tests); default the installed package. */
  packageDir?: string;
  source?: DictionarySource;
  /** `preload`: load at start in the background; `lazy`: on first use; `off`: never. */
  mode?: 'preload' | 'lazy' | 'off';
  log?: (event: string, fields: Record<string, unknown>) => void;
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

type LoadResult = { version: string; prefixes: number; loadedAt: string; loadMs: number | null };
/** Loads per engine and package (in flight or done): test apps of one file share a chDB, and must not load twice. */
const loads = new WeakMap<FlowEngine, Map<string, Promise<LoadResult>>>();

export class IpOrgDataset {
  private current: IpOrgStatus;
  private pkg: IpOrgPackage | undefined;
  private settled: Promise<void> | undefined;
  private failedAt = 0;
  private stopped = false;

  constructor(
    private readonly engine: FlowEngine,
    private readonly options: IpOrgOptions = {},
  ) {
    this.current = {
      dataset: IP_ORG_PACKAGE,
      packageVersion: null,
      loadedVersion: null,
      state: options.mode === 'off' ? 'off' : 'idle',
      prefixes: null,
      loadedAt: null,
      loadMs: null,
      license: 'CC BY 4.0 (RouteViews, NRO, DB-IP)',
      attribution: IP_ORG_ATTRIBUTION,
      error: null,
    };
  }

  /** True when queries may call the dictionary. */
  get ready(): boolean {
    return this.current.state === 'ready';
  }

  status(): IpOrgStatus {
    return { ...this.current };
  }

  /** At server start: begins loading in the background unless the mode is lazy or off. */
  start(): void {
    if (this.options.mode === undefined || this.options.mode === 'preload') void this.ensure();
  }

  /**
   * At server stop, before the engine closes: a load the closing cuts short is not a failure to
   * report (its version is recorded last, so the next start loads it again).
   */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Starts the load if nothing has started it yet (or the last one failed) and returns a promise
   * that settles when it ends; it never rejects (the failure is in `status()`).
   */
  ensure(): Promise<void> {
    if (this.current.state === 'off') return Promise.resolve();
    if (this.current.state === 'ready' || (this.settled && this.current.state === 'loading')) return this.settled ?? Promise.resolve();
    // After a failure, try again at most once a minute (explore asks on every request).
    if (this.current.state === 'failed' && Date.now() - this.failedAt < RETRY_AFTER_MS) return Promise.resolve();
    this.current = { ...this.current, state: 'loading', error: null };
    this.settled = this.run();
    return this.settled;
  }

  private async run(): Promise<void> {
    try {
      let perEngine = loads.get(this.engine);
      if (!perEngine) loads.set(this.engine, (perEngine = new Map()));
      const key = this.options.packageDir ?? IP_ORG_PACKAGE;
      let job = perEngine.get(key);
      if (!job) {
        job = this.load();
        perEngine.set(key, job);
        job.catch(() => perEngine.delete(key));
      }
      const done = await job;
      this.current = { ...this.current, state: 'ready', loadedVersion: done.version, prefixes: done.prefixes, loadedAt: done.loadedAt, loadMs: done.loadMs };
      this.options.log?.('ip_org.ready', { version: done.version, prefixes: done.prefixes, loadMs: done.loadMs });
    } catch (error) {
      this.failedAt = Date.now();
      this.current = { ...this.current, state: 'failed', error: error instanceof Error ? error.message : String(error) };
      if (!this.stopped) this.options.log?.('ip_org.failed', { error });
    }
  }

  private async load(): Promise<LoadResult> {
    const started = performance.now();
    this.pkg ??= locatePackage(this.options.packageDir);
    this.current = { ...this.current, packageVersion: this.pkg.version, license: this.pkg.license };
    await this.createTables();
    const loaded = await this.loadedVersion();
    // Never replace a newer dataset (loaded by an upgraded process) with the older one installed here.
    const keep = loaded && compareVersions(loaded.version, this.pkg.version) >= 0 && (await this.rowsOf(loaded.version)) > 0 ? loaded : undefined;
    const version = keep?.version ?? this.pkg.version;
    const prefixes = keep ? keep.prefixes : await this.insertPrefixes(this.pkg);
    await this.createDictionary(version);
    // Builds the trie now, so that the first query does not pay for it.
    await this.engine.command(named('flowstore:ip_org.reload', `SYSTEM RELOAD DICTIONARY ${IP_ORG_DICTIONARY}`), {}, { timeoutMs: 300_000 });
    const loadMs = Math.round(performance.now() - started);
    if (keep) return { version, prefixes, loadedAt: keep.loadedAt, loadMs };
    await this.engine.command(
      named(
        'flowstore:ip_org.record_version',
        `INSERT INTO ${IP_ORG_DATASETS_TABLE} (dataset, version, prefixes, load_ms) SELECT {dataset:String}, {version:String}, {prefixes:UInt64}, {loadMs:UInt64}`,
      ),
      { dataset: IP_ORG_PACKAGE, version, prefixes, loadMs },
    );
    await this.engine.command(named('flowstore:ip_org.drop_old', `DELETE FROM ${IP_ORG_PREFIXES_TABLE} WHERE version != {version:String}`), { version });
    return { version, prefixes, loadedAt: new Date().toISOString(), loadMs };
  }

  private async createTables(): Promise<void> {
    await this.engine.command(
      named(
        'flowstore:ip_org.create_prefixes',
        `CREATE TABLE IF NOT EXISTS ${IP_ORG_PREFIXES_TABLE} (version LowCardinality(String), prefix String, asn UInt32, org LowCardinality(String)) ` +
          'ENGINE = MergeTree ORDER BY (version, prefix) SETTINGS non_replicated_deduplication_window = 1000',
      ),
    );
    await this.engine.command(
      named(
        'flowstore:ip_org.create_datasets',
        `CREATE TABLE IF NOT EXISTS ${IP_ORG_DATASETS_TABLE} (dataset String, version String, prefixes UInt64, load_ms UInt64, ` +
          "loaded_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = MergeTree ORDER BY (dataset, loaded_at)",
      ),
    );
  }

  private async loadedVersion(): Promise<{ version: string; prefixes: number; loadedAt: string } | undefined> {
    const rows = await this.engine.query<{ version: string; prefixes: number; loaded_at: string }>(
      named(
        'flowstore:ip_org.loaded_version',
        `SELECT version, prefixes, toString(loaded_at) AS loaded_at FROM ${IP_ORG_DATASETS_TABLE} WHERE dataset = {dataset:String} ORDER BY loaded_at DESC LIMIT 1`,
      ),
      { dataset: IP_ORG_PACKAGE },
    );
    const r = rows[0];
    return r ? { version: r.version, prefixes: Number(r.prefixes), loadedAt: new Date(`${r.loaded_at.replace(' ', 'T')}Z`).toISOString() } : undefined;
  }

  private async rowsOf(version: string): Promise<number> {
    const rows = await this.engine.query<{ n: number }>(
      named('flowstore:ip_org.count', `SELECT count() AS n FROM ${IP_ORG_PREFIXES_TABLE} WHERE version = {version:String}`),
      { version },
    );
    return Number(rows[0]?.n ?? 0);
  }

  private async insertPrefixes(pkg: IpOrgPackage): Promise<number> {
    let lines: string[] = [];
    let chunk = 0;
    let total = 0;
    const flush = async () => {
      if (!lines.length) return;
      await this.engine.insertJsonEachRow(IP_ORG_PREFIXES_TABLE, lines.join('\n'), { dedupToken: `ip_org:${pkg.version}:${chunk++}`, timeoutMs: 300_000 });
      lines = [];
    };
    const version = JSON.stringify(pkg.version);
    for (const row of prefixRows(pkg)) {
      lines.push(`{"version":${version},"prefix":"${row.prefix}","asn":${row.asn},"org":${JSON.stringify(row.org)}}`);
      total++;
      if (lines.length >= CHUNK_ROWS) await flush();
    }
    await flush();
    return total;
  }

  private async createDictionary(version: string): Promise<void> {
    const s = this.options.source ?? {};
    const source = [
      ...(s.database ? [`DB ${quote(s.database)}`] : []),
      `TABLE ${quote(IP_ORG_PREFIXES_TABLE)}`,
      `WHERE ${quote(`version = '${version}'`)}`,
      ...(s.user ? [`USER ${quote(s.user)}`] : []),
      ...(s.password ? [`PASSWORD ${quote(s.password)}`] : []),
    ].join(' ');
    await this.engine.command(
      named(
        'flowstore:ip_org.create_dictionary',
        `CREATE OR REPLACE DICTIONARY ${IP_ORG_DICTIONARY} (prefix String, asn UInt32, org String) PRIMARY KEY prefix ` +
          `SOURCE(CLICKHOUSE(${source})) LAYOUT(IP_TRIE) LIFETIME(0)`,
      ),
    );
  }
}
