/**
 * The flow-store test suite, run once per engine (chdb-engine.test.ts, and
 * tools/clickhouse-http/http-engine.test.ts for @clickhouse/client over HTTP). Every test seeds
 * its own customers, so the order of tests does not matter except for the schema test, which runs
 * first and changes only a column no other test reads.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS, type ColumnDef } from '../columns.js';
import type { FlowEngine } from '../engine.js';
import { FlowQueryAbortedError, FlowQueryError, FlowQueryTimeoutError, PqlSyntaxError } from '../errors.js';
import { insertFlowBatch } from '../ingest.js';
import { flowRowSlot, flowToRow, insertFlowRows, recordId } from '../ingest-rows.js';
import { checkPql, evaluatePql, parsePql, printPql } from '../pql/index.js';
import { QUIET_DAY_MERGE_SECONDS, createFlowsTableSql } from '../ddl.js';
import { MIGRATIONS, currentRetentionDays, migrateFlowStore } from '../schema.js';
import { CACHED_PAGE_MAX_RECORDS, aggregateTerms, searchRecords, type SearchRequest } from '../search.js';
import { named } from '../sql.js';
import { typedExprArb } from './pql-arbitraries.js';
import { sampleFlows } from './sample-flows.js';

/** Adds `extra`'s keys to `target` where it has none (objects recursively). */
function deepMerge(target: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(extra)) {
    const cur = target[k];
    if (cur && v && typeof cur === 'object' && typeof v === 'object' && !Array.isArray(cur) && !Array.isArray(v)) {
      deepMerge(cur as Record<string, unknown>, v as Record<string, unknown>);
    } else if (cur === undefined) {
      target[k] = v;
    }
  }
  return target;
}

export interface OpenedEngine {
  engine: FlowEngine;
  close(): Promise<void>;
}

const LAST_2H = { start: { relative: { value: 2, unit: 'hours' } }, end: { now: true } } as const;

/** What a stored flow looks like when read back: empty arrays dropped, tenant and ingest time added. */
function expectedRecord(flow: Record<string, unknown>, customerId: string, ingestMs: number): Record<string, unknown> {
  // Objects left empty once their empty arrays are gone disappear too.
  const dropEmpty = (o: unknown): unknown => {
    if (Array.isArray(o)) return o.map(dropEmpty);
    if (o && typeof o === 'object') {
      const entries = Object.entries(o)
        .map(([k, v]) => [k, dropEmpty(v)] as const)
        .filter(([, v]) => !(Array.isArray(v) && v.length === 0) && v !== undefined);
      return entries.length ? Object.fromEntries(entries) : undefined;
    }
    return o;
  };
  const copy = structuredClone(flow);
  const meta = (copy.meta ??= {}) as Record<string, unknown>;
  meta.customer_id = customerId;
  meta['@ingest_time'] ??= ingestMs;
  return dropEmpty(copy) as Record<string, unknown>;
}

/** A record with every registry leaf set to a value of its kind. */
function everyLeafFlow(ts: number): Record<string, unknown> {
  const flow: Record<string, unknown> = {};
  const sample = (c: ColumnDef, i: number): unknown => {
    switch (c.kind) {
      case 'string':
        return `s${i} ü '\\`;
      case 'ip':
        return i % 2 ? `10.0.${i % 256}.1` : `2001:DB8::${i.toString(16)}`;
      case 'int':
        return c.intRange![1] > 1000 ? 1000 + i : i % 200;
      case 'float':
        return i + 0.125;
      case 'bool':
        return i % 2 === 0;
      case 'timestamp':
        return ts;
      case 'string[]':
        return [`t${i}`, 'x y'];
      case 'float[]':
        return [0.5, i];
      case 'json':
        return [{ sensor: { hostname: 'h1', id: 's1' }, src_vlan: 1, extra_key: { nested: true } }];
    }
  };
  COLUMNS.forEach((c, i) => {
    if (c.role !== 'leaf' || c.path === 'meta.customer_id') return;
    const keys = c.path.split('.');
    let o = flow;
    for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
    o[keys[keys.length - 1]!] = sample(c, i);
  });
  return flow;
}

export function defineFlowStoreSuite(label: string, open: () => Promise<OpenedEngine>): void {
  describe(`flow store on ${label}`, () => {
    let engine: FlowEngine;
    let closeEngine: () => Promise<void>;
    const tag = randomUUID().slice(0, 8);
    const customer = (name: string) => `${name}-${tag}`;
    const nowMs = Date.now();

    beforeAll(async () => {
      ({ engine, close: closeEngine } = await open());
      await migrateFlowStore(engine);
    });
    afterAll(async () => {
      await closeEngine?.();
    });

    async function seed(customerId: string, flows: Record<string, unknown>[], batchId = 'b1', ingestTimeMs = nowMs) {
      await insertFlowBatch(engine, { customerId, nodeId: 'n1', batchId, flows, ingestTimeMs });
    }
    async function countRows(customerId: string): Promise<number> {
      const rows = await engine.query<{ n: number }>(named('flowstore:test.count', 'SELECT count() AS n FROM flows WHERE customer_id = {c:String}'), {
        c: customerId,
      });
      return Number(rows[0]!.n);
    }
    const search = (req: Omit<SearchRequest, 'start' | 'end'> & Partial<SearchRequest>) => searchRecords(engine, { ...LAST_2H, ...req }, { nowMs: Date.now() });

    it('migrates idempotently, reconciles columns and retention', async () => {
      const again = await migrateFlowStore(engine);
      expect(again).toMatchObject({ applied: [], addedColumns: [], addedIndexes: [], droppedIndexes: [], retentionChanged: false });
      expect(await currentRetentionDays(engine)).toBe(30);
      expect((await migrateFlowStore(engine, { retentionDays: 7 })).retentionChanged).toBe(true);
      expect(await currentRetentionDays(engine)).toBe(7);
      await migrateFlowStore(engine, { retentionDays: 30 });
      expect(await currentRetentionDays(engine)).toBe(30);
      await engine.command(named('flowstore:test.drop_column', 'ALTER TABLE flows DROP COLUMN encap_proto_map'));
      expect((await migrateFlowStore(engine)).addedColumns).toEqual(['encap_proto_map']);
      // Skip indexes follow the registry: one it no longer declares (as transport.proto's was) is
      // dropped, a dropped one comes back, an operator's own (not `idx_`) stays.
      await engine.command(named('flowstore:test.add_index', 'ALTER TABLE flows ADD INDEX idx_transport_proto transport_proto TYPE set(100) GRANULARITY 1'));
      await engine.command(named('flowstore:test.add_index', 'ALTER TABLE flows ADD INDEX ops_doc_type doc_type TYPE set(10) GRANULARITY 1'));
      await engine.command(named('flowstore:test.drop_index', 'ALTER TABLE flows DROP INDEX idx_dst_port'));
      expect(await migrateFlowStore(engine)).toMatchObject({ addedIndexes: ['idx_dst_port'], droppedIndexes: ['idx_transport_proto'] });
      const indexes = await engine.query<{ name: string }>(
        named('flowstore:test.indexes', "SELECT name FROM system.data_skipping_indices WHERE table = 'flows'"),
        {},
      );
      expect(indexes.map((i) => i.name)).toEqual(expect.arrayContaining(['ops_doc_type', 'idx_dst_port']));
      expect(indexes.map((i) => i.name)).not.toContain('idx_transport_proto');
      await engine.command(named('flowstore:test.drop_index', 'ALTER TABLE flows DROP INDEX ops_doc_type'));
      const versions = await engine.query<{ version: number }>(
        named('flowstore:test.migrations', 'SELECT version FROM schema_migrations ORDER BY version'),
        {},
      );
      expect(versions.map((v) => Number(v.version))).toEqual(MIGRATIONS.map((m) => m.version));
    });

    it('merges a day that has gone quiet into one part (migration 5)', async () => {
      const [declared] = await engine.query<{ engine_full: string }>(
        named('flowstore:test.table', "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'flows'"),
        {},
      );
      expect(declared!.engine_full).toContain(`min_age_to_force_merge_seconds = ${QUIET_DAY_MERGE_SECONDS}`);
      expect(declared!.engine_full).toContain('min_age_to_force_merge_on_partition_only = 1');
      // The same table with the hour shortened to a second (and merges looked for often): two
      // batches of a past day become one part without anyone asking.
      const table = 'flows_quiet';
      await engine.command(named('flowstore:test.drop', `DROP TABLE IF EXISTS ${table} SYNC`));
      await engine.command(createFlowsTableSql(30, table));
      try {
        await engine.command(
          named(
            'flowstore:test.quiet_soon',
            `ALTER TABLE ${table} MODIFY SETTING min_age_to_force_merge_seconds = 1, merge_selecting_sleep_ms = 100, max_merge_selecting_sleep_ms = 500`,
          ),
        );
        // Noon three days ago: the 20 seconds of flows stay inside one day partition.
        const threeDaysAgo = Math.floor(nowMs / 86_400_000) * 86_400_000 - 3 * 86_400_000 + 43_200_000;
        for (const batchId of ['b1', 'b2']) {
          const rows = sampleFlows(20, batchId === 'b1' ? 31 : 32, threeDaysAgo).map((f, i) =>
            flowToRow({ customerId: customer('quiet'), nodeId: 'n1', batchId, ingestTimeMs: nowMs }, f, i),
          );
          await insertFlowRows(engine, rows, { table });
        }
        const parts = async () => {
          const [row] = await engine.query<{ parts: number; rows: number }>(
            named(
              'flowstore:test.parts',
              'SELECT count() AS parts, sum(rows) AS rows FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active',
            ),
            { t: table },
          );
          return { parts: Number(row!.parts), rows: Number(row!.rows) };
        };
        expect((await parts()).parts).toBe(2);
        const until = Date.now() + 30_000;
        while ((await parts()).parts > 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
        expect(await parts()).toEqual({ parts: 1, rows: 40 });
      } finally {
        await engine.command(named('flowstore:test.drop', `DROP TABLE IF EXISTS ${table} SYNC`));
      }
    });

    it('gives rows stored before `source` existed their whole record (migration 2)', async () => {
      const c = customer('backfill');
      const flows = [everyLeafFlow(nowMs - 300), ...sampleFlows(5, 21, nowMs - 400)];
      (flows[0] as Record<string, unknown>).custom = { a: [1, { b: null }] };
      const rows = flows.map((f, i) => flowToRow({ customerId: c, nodeId: 'n1', batchId: 'b1', ingestTimeMs: nowMs }, f, i));
      const source = flowRowSlot('source');
      await insertFlowRows(
        engine,
        rows.map((r) => r.map((v, i) => (i === source ? '' : v))),
      );
      const backfill = MIGRATIONS.find((m) => m.version === 2)!;
      for (const sql of backfill.statements({ retentionDays: 30 })) await engine.command(sql);
      await backfill.settle!(engine);
      const stored = await engine.query<{ source: string }>(
        named('flowstore:test.sources', 'SELECT source FROM flows WHERE customer_id = {c:String} ORDER BY timestamp DESC'),
        { c },
      );
      expect(stored.map((r) => JSON.parse(r.source))).toEqual(rows.map((r) => JSON.parse(r[source] as string)));
    });

    it('returns flows exactly as sent (every leaf, IP text, extras)', async () => {
      const c = customer('roundtrip');
      const full = everyLeafFlow(nowMs - 500);
      full.custom = { a: 1, b: ['x'] };
      (full.src as Record<string, unknown>).geo = { ...((full.src as Record<string, unknown>).geo as object), region: 'IDF' };
      const flows = [full, ...sampleFlows(20, 11, nowMs - 1000)];
      await seed(c, flows);
      const res = await search({ customerIds: [c], size: 100 });
      const page = res[c]!;
      expect(page.found).toBe(21);
      expect(page.flows).toEqual(flows.map((f) => expectedRecord(f, c, nowMs)));
      expect(page.flows[0]).not.toHaveProperty('id');
      expect(typeof page.flows[0]!['@timestamp']).toBe('number');
    });

    it('stores a re-sent batch once (dedup token), and collapses late duplicates on merge', async () => {
      const c = customer('dedup');
      const flows = sampleFlows(5, 3, nowMs - 2000);
      await seed(c, flows, 'batch-1');
      await seed(c, flows, 'batch-1');
      expect(await countRows(c)).toBe(5);
      await seed(c, flows, 'batch-2');
      expect(await countRows(c)).toBe(10);
      // A retry that arrives after the dedup window: same record ids, different token.
      const rows = flows.map((f, i) => flowToRow({ customerId: c, nodeId: 'n1', batchId: 'batch-1', ingestTimeMs: nowMs }, f, i));
      await insertFlowRows(engine, rows, { dedupToken: 'window-expired' });
      expect(await countRows(c)).toBe(15);
      await engine.command(named('flowstore:test.optimize', 'OPTIMIZE TABLE flows FINAL'));
      expect(await countRows(c)).toBe(10);
    });

    it('paginates with found, pages and more_data_available', async () => {
      const c = customer('pages');
      await seed(c, sampleFlows(23, 5, nowMs - 3000));
      const seen: string[] = [];
      for (let page = 0; page < 3; page++) {
        const r = (await search({ customerIds: [c], size: 10, page, fields: ['id'] }))[c]!;
        expect(r).toMatchObject({ found: 23, total: 23, pages: 3, current_page: page, returned: page < 2 ? 10 : 3, more_data_available: page < 2 });
        expect(r.flows).toHaveLength(r.returned);
        seen.push(...r.flows.map((f) => f.id as string));
        const ts = r.flows.map((f) => f['@timestamp'] as number);
        expect(ts).toEqual([...ts].sort((a, b) => b - a));
      }
      expect(new Set(seen).size).toBe(23);
    });

    it('sorts by several registry fields, missing values last', async () => {
      const c = customer('sort');
      const flows = sampleFlows(30, 9, nowMs - 4000);
      await seed(c, flows);
      const r = (
        await search({
          customerIds: [c],
          size: 100,
          sort: [
            { field: 'dst.port', order: 'asc' },
            { field: '@timestamp', order: 'asc' },
          ],
          fields: ['dst.port'],
        })
      )[c]!;
      const keys = r.flows.map((f) => [(f.dst as Record<string, number> | undefined)?.port ?? Infinity, f['@timestamp'] as number]);
      const sorted = [...keys].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
      expect(keys).toEqual(sorted);
      await expect(search({ customerIds: [c], sort: [{ field: 'path' }] })).rejects.toMatchObject({ code: 'validation_error', field: 'sort[0].field' });
    });

    it('projects fields: dotted paths, prefixes, extras, id on request', async () => {
      const c = customer('fields');
      const flow = {
        '@timestamp': nowMs - 100,
        src: { ip: '10.9.9.9', port: 1234, geo: { asn: 5 } },
        dst: { port: 443 },
        custom: { x: 1 },
        path: [{ sensor: { hostname: 'h', id: 'i' }, src_vlan: 3 }],
      };
      await seed(c, [flow]);
      const get = async (fields: string[]) => (await search({ customerIds: [c], fields }))[c]!.flows[0];
      expect(await get(['src.ip', 'dst.port', 'nope.missing'])).toEqual({ '@timestamp': flow['@timestamp'], src: { ip: '10.9.9.9' }, dst: { port: 443 } });
      expect(await get(['src', 'custom'])).toEqual({ '@timestamp': flow['@timestamp'], src: flow.src, custom: { x: 1 } });
      // Chains of one-member objects, present and absent, from a column and from `source`.
      expect(await get(['src.geo.asn', 'stats.volume.bytes.total', 'custom.x', 'custom2.y.z'])).toEqual({
        '@timestamp': flow['@timestamp'],
        src: { geo: { asn: 5 } },
        custom: { x: 1 },
      });
      expect(await get(['hostname'])).toEqual({ '@timestamp': flow['@timestamp'], path: [{ sensor: { hostname: 'h' } }] });
      expect(await get(['id', 'bytes'])).toEqual({ '@timestamp': flow['@timestamp'], id: recordId(c, 'n1', 'b1', 0) });
      await expect(get(['*'])).rejects.toMatchObject({ code: 'validation_error', field: 'fields[0]' });
    });

    it('keys results by instance and never leaks another tenant', async () => {
      const a = customer('tenant-a');
      const b = customer('tenant-b');
      await seed(a, sampleFlows(4, 1, nowMs - 5000));
      await seed(b, sampleFlows(6, 2, nowMs - 5000));
      const r = await search({ customerIds: [a, b, customer('empty')], size: 3 });
      expect(Object.keys(r).sort()).toEqual([a, b, customer('empty')].sort());
      expect(r[a]).toMatchObject({ found: 4, returned: 3, more_data_available: true });
      expect(r[b]).toMatchObject({ found: 6, returned: 3, pages: 2 });
      expect(r[customer('empty')]).toMatchObject({ found: 0, returned: 0, flows: [], more_data_available: false });
      for (const id of [a, b]) for (const f of r[id]!.flows) expect((f.meta as Record<string, unknown>).customer_id).toBe(id);
      const leak = await search({ customerIds: [a], sentence: `meta.customer_id eq ${b}` });
      expect(leak[a]!.found).toBe(0);
    });

    it('answers timeseries buckets with size 0', async () => {
      const c = customer('series');
      const end = Math.floor(nowMs / 60_000) * 60_000 - 60_000;
      const flows = [0, 1, 2, 61, 62, 130].map((s, i) => ({ '@timestamp': end - s * 1000, stats: { volume: { bytes: { total: i + 1 } } } }));
      await seed(c, flows);
      const r = (
        await searchRecords(engine, {
          customerIds: [c],
          start: { absolute: { date: new Date(end - 180_000).toISOString() } },
          end: { absolute: { date: new Date(end).toISOString() } },
          size: 0,
          timeseries: { interval: '1m', metric: 'sum:bytes' },
        })
      )[c]!;
      expect(r).toMatchObject({ flows: [], found: 6, returned: 0, more_data_available: false });
      const ts = r.timeseries!;
      expect(ts).toMatchObject({ interval: '1m', interval_ms: 60_000, metric: 'sum:stats.volume.bytes.total' });
      expect(ts.buckets.map((b) => b.ts)).toEqual([end - 180_000, end - 120_000, end - 60_000, end]);
      expect(ts.buckets.map((b) => [b.count, b.value])).toEqual([
        [1, 6],
        [2, 9],
        [2, 5],
        [1, 1],
      ]);
      await expect(search({ customerIds: [c], size: 0 })).rejects.toMatchObject({ field: 'size' });
    });

    it('aggregates terms with other_doc_count', async () => {
      const c = customer('terms');
      const flows = sampleFlows(40, 21, nowMs - 6000);
      await seed(c, flows);
      const counts = new Map<string, number>();
      for (const f of flows) if (typeof f.app_name === 'string') counts.set(f.app_name, (counts.get(f.app_name) ?? 0) + 1);
      const r = (await aggregateTerms(engine, { customerIds: [c], ...LAST_2H, field: 'app_name', size: 3 }, { nowMs: Date.now() }))[c]!;
      const expected = [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 3);
      expect(r.buckets.map((b) => [b.key, b.doc_count])).toEqual(expected);
      expect(r.buckets.every((b) => b.value === b.doc_count)).toBe(true);
      expect(r.other_doc_count).toBe([...counts.values()].reduce((s, n) => s + n, 0) - expected.reduce((s, e) => s + e[1], 0));
      const tags = (
        await aggregateTerms(engine, { customerIds: [c], ...LAST_2H, field: 'meta.tags', metric: 'max:bytes', order: { by: 'key' } }, { nowMs: Date.now() })
      )[c]!;
      expect(tags.buckets.map((b) => b.key)).toEqual(
        ['a', 'b', 'c d', 'scan'].filter((t) => flows.some((f) => ((f.meta as { tags?: string[] })?.tags ?? []).includes(t))),
      );
    });

    it('reads no column statistics (their per-part files cost each statement milliseconds)', async () => {
      const c = customer('stats');
      await seed(c, sampleFlows(20, 12, nowMs - 7000), 'b1');
      await seed(c, sampleFlows(20, 13, nowMs - 7000), 'b2');
      // A merged part carries statistics of every column (ClickHouse's auto_statistics_types).
      await engine.command(named('flowstore:test.optimize', 'OPTIMIZE TABLE flows FINAL'));
      const loadedMicros = async () =>
        Number(
          (
            await engine.query<{ v: number }>(
              named('flowstore:test.events', "SELECT sum(value) AS v FROM system.events WHERE event = 'LoadedStatisticsMicroseconds'"),
              {},
            )
          )[0]?.v ?? 0,
        );
      const before = await loadedMicros();
      await search({ customerIds: [c], sentence: 'dst.port eq 443', size: 5, timeseries: { interval: '1h' } });
      await aggregateTerms(engine, { customerIds: [c], ...LAST_2H, field: 'app_name' }, { nowMs: Date.now() });
      // Every SELECT, not only searches (explore, detection, ...).
      const filter = named('flowstore:test.filter', 'SELECT count() FROM flows WHERE customer_id = {c:String} AND dst_port = 443');
      await engine.query(filter, { c });
      expect(await loadedMicros()).toBe(before);
      // The same filter with ClickHouse's defaults does load them: the checks above can see it.
      await engine.query(filter, { c }, { settings: { use_statistics: 1, allow_statistics_optimize: 1, use_statistics_for_part_pruning: 1 } });
      expect(await loadedMicros()).toBeGreaterThan(before);
    });

    it("keeps the blocks a search decompresses for the next one, but not a big page's", async () => {
      const c = customer('cache');
      await seed(c, sampleFlows(40, 14, nowMs - 7000));
      const eventSum = async (...events: string[]) => {
        const sql = named('flowstore:test.events', 'SELECT sum(value) AS v FROM system.events WHERE event IN {events:Array(String)}');
        return Number((await engine.query<{ v: number }>(sql, { events }))[0]?.v ?? 0);
      };
      const hits = () => eventSum('UncompressedCacheHits');
      const cacheReads = () => eventSum('UncompressedCacheHits', 'UncompressedCacheMisses');
      await search({ customerIds: [c], sentence: 'dst.port eq 443', size: 5 });
      const before = await hits();
      await search({ customerIds: [c], sentence: 'dst.port eq 443', size: 5 });
      await aggregateTerms(engine, { customerIds: [c], ...LAST_2H, field: 'app_name' }, { nowMs: Date.now() });
      expect(await hits()).toBeGreaterThan(before);
      const reads = await cacheReads();
      await search({ customerIds: [c], size: CACHED_PAGE_MAX_RECORDS + 1 });
      expect(await cacheReads()).toBe(reads);
      await search({ customerIds: [c], size: CACHED_PAGE_MAX_RECORDS });
      expect(await cacheReads()).toBeGreaterThan(reads);
    });

    it('treats hostile values as data, never as SQL', async () => {
      const c = customer('inject');
      const nasty = ["x' OR 1=1 --", "'); DROP TABLE flows; --", 'back\\slash', 'tab\there', '{p1:String}'];
      await seed(
        c,
        nasty.map((app_name, i) => ({ '@timestamp': nowMs - 7000 - i, app_name })),
      );
      for (const value of nasty) {
        const quoted = '"' + value.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
        const r = (await search({ customerIds: [c], sentence: `app_name eq ${quoted}`, fields: ['app_name'] }))[c]!;
        expect(r.flows.map((f) => f.app_name)).toEqual([value]);
      }
      expect(await countRows(c)).toBe(nasty.length);
    });

    it('writes rows as they are, a line each or joined by commas', async () => {
      const rows = named('flowstore:test.rows', "SELECT arrayJoin(['{\"a\":1}', '{\"b\":\"x,y\\\\t\"}', '']) AS r, 'z' AS z");
      const expected = ['{"a":1}\tz', '{"b":"x,y\\t"}\tz', '\tz'];
      expect((await engine.queryLines(rows, {})).toString()).toBe(expected.map((r) => `${r}\n`).join(''));
      expect((await engine.queryLines(rows, {}, {}, 'commas')).toString()).toBe(expected.join(','));
      expect((await engine.queryLines(named('flowstore:test.rows', 'SELECT 1 WHERE 0'), {}, {}, 'commas')).toString()).toBe('');
    });

    it('reports PQL errors with a position', async () => {
      const err = await search({ customerIds: [customer('x')], sentence: 'dst.port eqq 443' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PqlSyntaxError);
      expect(err).toMatchObject({ message: "PQL parse failure near 'eqq'", position: 9, code: 'validation_error', field: 'sentence' });
      expect(await search({ customerIds: [customer('x')], sentence: 'nope eq 1' }).catch((e: unknown) => e)).toBeInstanceOf(FlowQueryError);
    });

    it('cancels a query past its limit with a typed timeout error', async () => {
      const slow = named('flowstore:test.slow', 'SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 0');
      await expect(engine.query(slow, {}, { timeoutMs: 300 })).rejects.toBeInstanceOf(FlowQueryTimeoutError);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      await expect(engine.query(slow, {}, { timeoutMs: 1000, signal: ac.signal })).rejects.toBeInstanceOf(FlowQueryAbortedError);
      expect(await engine.ping()).toBe(true);
    });

    it('builds a 25,000-flow page', async () => {
      const c = customer('big');
      const base = sampleFlows(50, 4, nowMs);
      const flows = Array.from({ length: 25_000 }, (_, i) => ({ ...base[i % 50]!, '@timestamp': nowMs - 10_000 - i * 100 }));
      await seed(c, flows);
      const started = performance.now();
      const r = (await search({ customerIds: [c], size: 25_000 }))[c]!;
      const ms = performance.now() - started;
      expect(r.returned).toBe(25_000);
      expect(r.flows).toHaveLength(25_000);
      expect(r.flows[0]).toEqual(expectedRecord(flows[0]!, c, nowMs));
      // A loose bound: it catches a pathological regression, not noise on a shared 2-core machine.
      expect(ms).toBeLessThan(30_000);
    });

    it('selects exactly what the reference evaluator selects (generated PQL)', async () => {
      const c = customer('pql');
      const endMs = nowMs - 20_000;
      const flows = sampleFlows(60, 7, endMs);
      await seed(c, flows);
      const stored = flows.map((f, i) => deepMerge(structuredClone(f), { id: recordId(c, 'n1', 'b1', i), meta: { customer_id: c } }));
      await fc.assert(
        fc.asyncProperty(typedExprArb(endMs), async (expr) => {
          const sentence = printPql(expr);
          const typed = checkPql(parsePql(sentence));
          const expected = stored
            .filter((f) => evaluatePql(typed, f))
            .map((f) => f.id as string)
            .sort();
          const r = (await search({ customerIds: [c], sentence, size: 1000, fields: ['id'] }))[c]!;
          expect({ sentence, ids: r.flows.map((f) => f.id as string).sort() }).toEqual({ sentence, ids: expected });
          expect(r.found).toBe(expected.length);
        }),
        { numRuns: Number(process.env.PQL_RUNS ?? 60) },
      );
    });
  });
}
