/**
 * The limits of the search paths on real chDB: a 25,000-flow page of reference-generator records
 * (and what GraphQL adds to it), and a query past its time limit, cancelled with a clear error.
 */
import { type DocumentNode, execute, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestAuth } from '../../context.js';
import { insertFlowBatch } from '../../flowstore/index.js';
import { SearchRecordsDocument } from '../../generated/operations.js';
import { Loaders } from '../../graphql/loaders.js';
import { schema } from '../../graphql/schema.js';
import { createLogger } from '../../infra/logger.js';
import { createFlowGenerator } from '../../../tools/collector/flowgen/index.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { type Caller, seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { call } from '../../../test/kit/http.js';
import { RECORDS, iso, nested, search } from './search.fixtures.js';
import { SearchService } from './search.service.js';

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

describe('search limits', () => {
  let t: TestApp;
  let big: Caller;
  let slow: Caller;
  const end = Date.now() - 60_000;
  const start = end - 9 * 60_000;
  const window = { start: { absolute: { date: iso(start) } }, end: { absolute: { date: iso(end) } } };

  beforeAll(async () => {
    t = await startTestApp();
    big = await seedCaller(t.app, (await seedTenant(t.app)).id);
    slow = await seedCaller(t.app, (await seedTenant(t.app)).id);
    const gen = createFlowGenerator({
      seed: 'search-limits',
      customerId: big.customerId,
      startMs: start,
      endMs: end,
      flowsPerSecond: 60,
      diurnal: false,
      scenarios: [],
    });
    for (let batch = 0; batch < 5; batch++) {
      await insertFlowBatch(t.app.flows, { customerId: big.customerId, nodeId: 'gen', batchId: `gen-${batch}`, flows: gen.take(5_000) as never });
    }
    // Enough rows that no search of them finishes within a few milliseconds.
    await t.app.flows.command(
      `/* test:search.bulk */ INSERT INTO flows (customer_id, node_id, timestamp, id, batch_id, app_name, src_ip, stats_volume_bytes_total, source) ` +
        `SELECT {c:String}, 'n', now64(3) - toIntervalMillisecond(number % 600000), toString(number), 'bulk', concat('app', toString(number % 1000)), ` +
        `concat('10.', toString(number % 250), '.', toString(number % 17), '.1'), number % 100000, concat('{"id":"', toString(number), '"}') FROM numbers(200000)`,
      { c: slow.customerId },
      { timeoutMs: 55_000 },
    );
  });
  afterAll(() => t.stop());

  it('answers a 25,000-flow page whole, and GraphQL adds next to nothing to it', async () => {
    const body = { instance_ids: [big.customerId], module: 'flows', size: 25_000, page: 0, ...window };
    const rest = await call(t.url, 'POST', RECORDS, { token: big.token, body, headers: { connection: 'close' } });
    expect(rest.status).toBe(200);
    expect(rest.body[big.customerId]).toMatchObject({ returned: 25_000, found: 25_000, total: 25_000, pages: 1, more_data_available: false });
    const flows = rest.body[big.customerId].flows;
    expect(flows.every((f: any, i: number) => i === 0 || f['@timestamp'] <= flows[i - 1]['@timestamp'])).toBe(true);
    expect(flows[0]).toMatchObject({ doc_type: 'flow', src: { ip: expect.any(String) }, meta: { customer_id: big.customerId } });

    // What graphql-js adds to the page: the execution of the operation rest-compat runs, minus the
    // time spent inside the service during that same execution (so machine noise cancels out).
    const auth = new RequestAuth(`Bearer ${big.token}`, (h) => t.app.services.auth.authenticate(h));
    const contextValue = {
      requestId: 'bench',
      prisma: t.app.db.prisma,
      services: t.app.services,
      auth,
      loaders: new Loaders(t.app.services.nodes),
      origin: { address: '127.0.0.1' },
    };
    const run = async (document: DocumentNode, variableValues: Record<string, unknown>) => execute({ schema, document, variableValues, contextValue });
    const service = t.app.services.search;
    let inside = 0;
    const records = service.records.bind(service);
    service.records = async (...args) => {
      const inner = await timed(() => records(...args));
      inside += inner.ms;
      return inner.value;
    };
    try {
      const overheads: number[] = [];
      for (let i = 0; i < 2; i++) {
        inside = 0;
        const viaGraphql = await timed(() => run(SearchRecordsDocument, { body }));
        expect(viaGraphql.value.errors).toBeUndefined();
        overheads.push(viaGraphql.ms - inside);
      }
      const roundTrip = await timed(() => call(t.url, 'POST', RECORDS, { token: big.token, body, headers: { connection: 'close' } }));
      inside = 0;
      const edges = await timed(() =>
        run(
          parse(
            `query($id: String!, $start: FlowTimeFilter, $end: FlowTimeFilter) { flows(instanceId: $id, first: 25000, start: $start, end: $end) { edges { cursor node } } }`,
          ),
          {
            id: big.customerId,
            ...window,
          },
        ),
      );
      expect(edges.value.errors).toBeUndefined();
      expect((edges.value.data as any).flows.edges).toHaveLength(25_000);
      console.log(
        `25,000-flow page: graphql-js adds ${Math.min(...overheads).toFixed(1)} ms to the service (JSON leaf); ` +
          `the connection's edges { cursor node } add ${(edges.ms - inside).toFixed(0)} ms; REST round trip ${roundTrip.ms.toFixed(0)} ms (HTTP and ~60 MB of JSON text included)`,
      );
      // Loose for a shared 2-core machine: it catches per-field resolution of the page, not noise.
      expect(Math.min(...overheads)).toBeLessThan(25);
    } finally {
      service.records = records;
    }
  }, 120_000);

  it('cancels a search past its time limit and answers 504 query_timeout in the nested envelope', async () => {
    const original = t.app.services.search;
    t.app.services.search = new SearchService(t.app.flows, createLogger('silent'), { timeoutMs: 10 });
    try {
      const body = {
        instance_ids: [slow.customerId],
        module: 'flows',
        sentence: 'src.ip wi *7.1* and bytes gt 5',
        sort: [{ field: 'src.ip', order: 'asc' }],
        start: { relative: { value: 1, unit: 'hours' } },
      };
      const res = await timed(() => search(t.url, slow.token, body));
      expect(res.value.status).toBe(504);
      expect(res.value.body).toEqual(
        nested(504, 'query_timeout', 'The search ran past its 0.01 s limit and was cancelled; narrow the time window or the sentence', {
          reason: 'query_timeout',
          timeout_ms: 10,
        }),
      );
      expect(res.ms).toBeLessThan(5_000);
    } finally {
      t.app.services.search = original;
    }
    // The engine let go of the cancelled statements: the next search runs at once.
    const next = await timed(() => search(t.url, slow.token, { instance_ids: [slow.customerId], module: 'flows', size: 1 }));
    expect(next.value.status).toBe(200);
    expect(next.value.body[slow.customerId].returned).toBe(1);
  });
});
