import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import type { FlowEngine } from './engine.js';
import type { Params } from './sql.js';
import { insertFlowBatch } from './ingest.js';
import { migrateFlowStore } from './schema.js';
import { aggregateTerms, type TermsRequest } from './terms.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const APPS = ['HTTPS', 'DNS', 'SSH', 'NTP', undefined];

/** Flows of one tenant every 7 minutes over 30 hours from `base`, their fields cycling at different rates. */
function tenantFlows(base: number, seed: number) {
  return Array.from({ length: (30 * HOUR) / (7 * MINUTE) }, (_, i) => {
    const app = APPS[(i * (seed + 1)) % APPS.length];
    return {
      '@timestamp': base + i * 7 * MINUTE + seed * 1000,
      ...(app ? { app_name: app } : {}),
      dst: { ip: '198.51.100.7', port: [443, 53, 22, 8443][(i + seed) % 4] },
      transport: { proto: i % 3 ? 'TCP' : 'UDP' },
    };
  });
}

type Flow = ReturnType<typeof tenantFlows>[number];
const FIELDS: Record<string, (f: Flow) => string | number | undefined> = {
  app_name: (f) => f.app_name,
  'dst.port': (f) => f.dst.port,
  'transport.proto': (f) => f.transport.proto,
};

/** The answer worked out from the flows themselves. */
function expected(flows: Map<string, Flow[]>, req: { customerIds: string[]; field: string; size: number }, startMs: number, endMs: number) {
  const answer: Record<string, { buckets: { key: unknown; doc_count: number; value: number }[]; other_doc_count: number }> = {};
  for (const id of req.customerIds) {
    const counts = new Map<string | number, number>();
    for (const f of flows.get(id)!) {
      const key = FIELDS[req.field]!(f);
      if (key !== undefined && f['@timestamp'] >= startMs && f['@timestamp'] <= endMs) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const buckets = sorted.slice(0, req.size).map(([key, n]) => ({ key, doc_count: n, value: n }));
    answer[id] = { buckets, other_doc_count: sorted.slice(req.size).reduce((s, [, n]) => s + n, 0) };
  }
  return answer;
}

/** The engine, remembering every query it ran, with its values. */
function recording(engine: FlowEngine): { engine: FlowEngine; queries: { sql: string; params: Params }[] } {
  const queries: { sql: string; params: Params }[] = [];
  const query: FlowEngine['query'] = (sql, params, opts) => (queries.push({ sql, params }), engine.query(sql, params, opts));
  return { engine: new Proxy(engine, { get: (target, prop, receiver) => (prop === 'query' ? query : Reflect.get(target, prop, receiver)) }), queries };
}

describe('terms rollups', () => {
  const dir = mkdtempSync(join(tmpdir(), 'terms-rollups-'));
  const engine = new ChdbEngine(dir);
  const base = Math.floor(Date.now() / HOUR) * HOUR - 40 * HOUR;
  const flows = new Map(['t1', 't2', 't3'].map((id, seed) => [id, tenantFlows(base, seed)]));

  beforeAll(async () => {
    await migrateFlowStore(engine);
    for (const [customerId, batch] of flows) await insertFlowBatch(engine, { customerId, nodeId: 'n1', batchId: `b-${customerId}`, flows: batch });
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const at = (ms: number) => ({ absolute: { date: new Date(ms).toISOString() } });
  const windows: [string, number, number][] = [
    ['ragged at both ends', base + 2 * HOUR + 17 * MINUTE + 23_456, base + 26 * HOUR + 41 * MINUTE + 789],
    ['whole hours', base + 3 * HOUR, base + 9 * HOUR - 1],
    ['whole hours and their last millisecond', base + 3 * HOUR, base + 9 * HOUR],
    ['inside one hour', base + 5 * HOUR + 3 * MINUTE, base + 5 * HOUR + 55 * MINUTE],
    ['across one hour boundary', base + 5 * HOUR + 50 * MINUTE, base + 6 * HOUR + 20 * MINUTE],
  ];

  it.each(windows)('count exactly what the rows hold, window %s', async (_name, startMs, endMs) => {
    for (const field of Object.keys(FIELDS)) {
      for (const customerIds of [['t1'], ['t1', 't2', 't3']]) {
        for (const size of [2, 10]) {
          const req: TermsRequest = { customerIds, field, size, start: at(startMs), end: at(endMs) };
          const answer = await aggregateTerms(engine, req);
          const noTook = Object.fromEntries(Object.entries(answer).map(([id, { took: _took, ...rest }]) => [id, rest]));
          expect(noTook, `${field} ${customerIds.join()} ${size}`).toEqual(expected(flows, { customerIds, field, size }, startMs, endMs));
        }
      }
    }
  });

  it("are what answers several instances' count without a sentence (the whole hours), and rows answer the rest", async () => {
    const { engine: watched, queries } = recording(engine);
    const window = { customerIds: ['t1', 't2'], start: at(windows[0]![1]), end: at(windows[0]![2]) };
    await aggregateTerms(watched, { ...window, field: 'app_name' });
    const [rolledUp] = queries.splice(0);
    expect(rolledUp!.sql).toMatch(/^\/\* flowstore:search\.terms_rolled_up \*\//);
    // ClickHouse refuses the statement when the named projection answers no part of it.
    const forced = { optimize_use_projections: 1, force_optimize_projection_name: 'terms_app_name' };
    expect(await engine.query(rolledUp!.sql, rolledUp!.params, { settings: forced })).toHaveLength(8);
    await expect(
      engine.query(rolledUp!.sql, rolledUp!.params, { settings: { ...forced, force_optimize_projection_name: 'terms_dst_port' } }),
    ).rejects.toThrow();

    await aggregateTerms(watched, { ...window, field: 'app_name', sentence: 'transport.proto eq TCP' });
    await aggregateTerms(watched, { ...window, field: 'app_name', metric: 'sum:bytes' });
    await aggregateTerms(watched, { ...window, field: 'src.ip' });
    await aggregateTerms(watched, { ...window, customerIds: ['t1'], field: 'app_name' });
    expect(queries.map((q) => /^\/\* ([\w:.]+) \*\//.exec(q.sql)?.[1])).toEqual(Array(4).fill('flowstore:search.terms'));
  });
});
