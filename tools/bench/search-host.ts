/**
 * `node src/start.cjs tools/bench/search-host.ts`, started by bench:search (search.ts) with the
 * server's environment: the service exactly as src/main.ts builds it, plus an IPC door through
 * which the bench times hand-written statements and the flow store's own functions on the
 * service's own engine, between its REST requests. chDB admits one process per data directory,
 * so the only way to time REST and SQL request by request, on the same engine at the same moment,
 * is here.
 */
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type FlowEngine, type SearchRequest, type TermsRequest, aggregateTerms, searchRecordPages } from '../../src/flowstore/index.js';
import { SEARCH_SETTINGS } from '../../src/flowstore/search-request.js';
import { giveBack } from '../../src/infra/lent-bytes.js';

/**
 * One statement of a hand-written question, run with the search settings (and `settings`);
 * `lines`: read as bytes, with the page query's settings.
 */
export interface Statement {
  sql: string;
  params: Record<string, unknown>;
  lines?: boolean;
  settings?: Record<string, number>;
}

/** What the bench asks: statements run concurrently (as the service runs them), or a flow store call. */
export type HostCall = { statements: Statement[] } | { store: 'records'; request: SearchRequest } | { store: 'terms'; request: TermsRequest };

/** How long the call took on the engine, measured here (no IPC), or why it failed. */
export type HostAnswer = { ms: number } | { error: string };

if (process.send) {
  /** As the service's page query: records read only for the page's rows, whatever its size. */
  const lazyPage = { ...SEARCH_SETTINGS, query_plan_max_limit_for_lazy_materialization: 0 };

  const app = await buildApp(loadConfig());
  // What the service does once a response is written: big results go back to the engine's
  // thread (lent-bytes.ts), else each would cost the API thread a new 60 MB slab or transfer.
  const run = async (engine: FlowEngine, call: HostCall): Promise<void> => {
    if ('statements' in call) {
      const results = await Promise.all(
        call.statements.map((st) =>
          st.lines
            ? engine.queryLines(st.sql, st.params, { settings: { ...lazyPage, ...st.settings } })
            : engine.query(st.sql, st.params, { settings: { ...SEARCH_SETTINGS, ...st.settings } }),
        ),
      );
      for (const result of results) if (Buffer.isBuffer(result)) giveBack(result);
    } else if (call.store === 'terms') {
      await aggregateTerms(engine, call.request);
    } else {
      for (const page of Object.values(await searchRecordPages(engine, call.request))) page.flows.release();
    }
  };
  process.on('message', (call: HostCall) => {
    const started = performance.now();
    run(app.flows, call).then(
      () => process.send!({ ms: performance.now() - started } satisfies HostAnswer),
      (error: Error) => process.send!({ error: String(error?.message ?? error) } satisfies HostAnswer),
    );
  });
  const stop = () => void app.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`listening on ${app.url}`);
}
