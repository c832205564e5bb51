import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import { ConsoleFlowSearchDocument, type ConsoleFlowSearchQuery } from '../../../generated/console.js';
import { ApiError, request } from '../api.js';
import { Chart, type ChartOption, MARK } from '../explore/Chart.js';
import { RangePicker } from '../explore/RangePicker.js';
import { RANGES, type RangeKey, relativeStart } from '../explore/range.js';
import '../sections.css';
import { navigate, useLocation } from '../router.js';
import type { Tenant } from '../session.js';
import { COLUMNS, type SearchParams, TERMS_FIELDS, cellText, readSearch, valueAt, writeSearch } from './columns.js';
import { DataTable } from '../data-table.js';

const PAGE = 50;
const SEARCH_RANGES: RangeKey[] = ['15m', '1h', '1d', '7d'];

type Answer = ConsoleFlowSearchQuery;
type State = { kind: 'idle' } | { kind: 'loading' } | { kind: 'failed'; error: ApiError | Error } | { kind: 'done'; answer: Answer };

/**
 * Flow search for the chosen tenant: the query language (docs/flowstore.md), a syntax error shown
 * at its position, the counts over time, a terms breakdown, and the newest records with the chosen
 * columns; a row opens the whole record. Everything lives in the query string (`q`, `range`,
 * `cols`, `terms`), so a search can be bookmarked and shared.
 */
export function SearchPage({ tenant }: { tenant: Tenant }) {
  const location = useLocation();
  const search = readSearch(location.searchParams);
  const range: RangeKey = search.range in RANGES ? (search.range as RangeKey) : '1h';
  const [state, setState] = useState<State>({ kind: 'idle' });
  const [opened, setOpened] = useState<number>();
  const show = (next: Partial<SearchParams>) => navigate(`/search${writeSearch({ ...search, ...next })}`);

  const variables = useMemo(
    () => ({
      instanceId: tenant.customerId,
      instanceIds: [tenant.customerId],
      sentence: search.q,
      start: relativeStart(range),
      first: PAGE,
      interval: RANGES[range].interval,
      termsField: search.terms,
    }),
    [tenant.customerId, search.q, range, search.terms],
  );
  useEffect(() => {
    const controller = new AbortController();
    setState({ kind: 'loading' });
    setOpened(undefined);
    request(ConsoleFlowSearchDocument, variables, controller.signal).then(
      (answer) => setState({ kind: 'done', answer }),
      (error: Error) => controller.signal.aborted || setState({ kind: 'failed', error }),
    );
    return () => controller.abort();
  }, [variables]);

  const position = state.kind === 'failed' && state.error instanceof ApiError ? state.error.details?.position : undefined;
  return (
    <>
      <h1>Search flows</h1>
      <QueryForm search={search} range={range} errorPosition={position} onSearch={show} />
      <div aria-live="polite" aria-busy={state.kind === 'loading'}>
        {state.kind === 'loading' && <p role="status">Searching…</p>}
        {state.kind === 'failed' && <SearchError query={search.q} error={state.error} />}
        {state.kind === 'done' && <Results answer={state.answer} search={search} opened={opened} onOpen={setOpened} />}
      </div>
    </>
  );
}

function QueryForm({
  search,
  range,
  errorPosition,
  onSearch,
}: {
  search: SearchParams;
  range: RangeKey;
  errorPosition?: number;
  onSearch: (next: Partial<SearchParams>) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  // Puts the caret where the server found the error (its position counts code points).
  useEffect(() => {
    if (errorPosition === undefined || !input.current) return;
    const offset = [...search.q].slice(0, errorPosition).join('').length;
    input.current.focus();
    input.current.setSelectionRange(offset, offset);
  }, [errorPosition, search.q]);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const columns = COLUMNS.filter((c) => form.has(`col-${c}`));
    onSearch({ q: String(form.get('q') ?? ''), columns: columns.length > 0 ? columns : search.columns, terms: String(form.get('terms')) });
  };
  return (
    <form className="search-form" onSubmit={submit} key={writeSearch(search)}>
      <label className="search-query">
        Query
        <input
          ref={input}
          name="q"
          defaultValue={search.q}
          placeholder="dst.port eq 443 and app_name eq HTTPS"
          autoComplete="off"
          spellCheck={false}
          aria-invalid={errorPosition !== undefined}
          aria-describedby={errorPosition !== undefined ? 'search-error' : 'search-help'}
        />
      </label>
      <p id="search-help" className="note">
        Conditions such as <code>src.ip eq 10.0.0.0/8</code>, <code>dst.port in [80, 443]</code>, <code>app_name wi Goo*</code>, joined by <code>and</code> /{' '}
        <code>or</code>; empty matches every flow.
      </p>
      <div className="filters">
        <RangePicker value={range} choices={SEARCH_RANGES} onChange={(next) => onSearch({ range: next })} />
        <label>
          Break down by
          <select name="terms" defaultValue={search.terms}>
            {TERMS_FIELDS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
      </div>
      <details>
        <summary>Columns</summary>
        <fieldset className="columns">
          <legend>Columns of the results table</legend>
          {COLUMNS.map((c) => (
            <label className="check" key={c}>
              <input type="checkbox" name={`col-${c}`} defaultChecked={search.columns.includes(c)} /> {c}
            </label>
          ))}
        </fieldset>
      </details>
    </form>
  );
}

/** The server's refusal; a query-language error points at its position in the query. */
function SearchError({ query, error }: { query: string; error: Error }) {
  const position = error instanceof ApiError ? error.details?.position : undefined;
  if (position === undefined) {
    return (
      <p role="alert" className="problem">
        The search failed: {error.message}
      </p>
    );
  }
  const chars = [...query];
  return (
    <div role="alert" id="search-error" className="problem">
      <p>
        {error.message} (at character {position + 1}):
      </p>
      <pre className="query-error" data-testid="query-error">
        <span>{chars.slice(0, position).join('')}</span>
        <mark>{chars.slice(position).join('') || ' '}</mark>
        {'\n'}
        <span aria-hidden="true">{' '.repeat(position)}^</span>
      </pre>
    </div>
  );
}

function Results({ answer, search, opened, onOpen }: { answer: Answer; search: SearchParams; opened?: number; onOpen: (index: number | undefined) => void }) {
  const records = answer.flows.edges.map((e) => e.node);
  return (
    <>
      <p>
        {answer.flows.found.toLocaleString()} of {answer.flows.total.toLocaleString()} flows match ({answer.flows.took.toFixed(3)} s); the newest{' '}
        {records.length} below.
      </p>
      <div className="chart-grid">
        <Timeseries series={answer.flowTimeseries[0]} />
        <Terms terms={answer.flowAggregate[0]} field={search.terms} />
      </div>
      {records.length > 0 && (
        <DataTable caption="Matching flows, newest first; open a row for the whole record" columns={['Record', ...search.columns]} className="flows">
          {records.map((record, index) => (
            <tr key={index} className="clickable" onClick={() => onOpen(index)}>
              <td>
                <button type="button" onClick={() => onOpen(index)} aria-expanded={opened === index}>
                  Open
                </button>
              </td>
              {search.columns.map((c) => (
                <td key={c}>{cellText(valueAt(record, c), c)}</td>
              ))}
            </tr>
          ))}
        </DataTable>
      )}
      {opened !== undefined && records[opened] !== undefined && (
        <section aria-labelledby="flow-record" className="flow-record">
          <h2 id="flow-record">The whole record</h2>
          <button type="button" onClick={() => onOpen(undefined)}>
            Close
          </button>
          <pre className="copyable" tabIndex={0} data-testid="flow-record">
            {JSON.stringify(records[opened], null, 2)}
          </pre>
        </section>
      )}
    </>
  );
}

function Timeseries({ series }: { series?: Answer['flowTimeseries'][number] }) {
  const option = useMemo<ChartOption>(
    () => ({
      grid: { left: 48, right: 16, top: 16, bottom: 32 },
      xAxis: { type: 'time' },
      yAxis: { type: 'value', minInterval: 1 },
      tooltip: { trigger: 'axis' },
      series: [{ type: 'bar', name: 'Flows', itemStyle: { color: MARK }, data: (series?.buckets ?? []).map((b) => [b.ts, b.count]) }],
    }),
    [series],
  );
  const busy = series?.buckets.filter((b) => b.count > 0).length ?? 0;
  return (
    <figure>
      <figcaption>Matching flows over time</figcaption>
      <Chart
        option={option}
        label={`Matching flows over time: ${busy} of ${series?.buckets.length ?? 0} intervals have flows`}
        height={220}
        testId="chart-timeseries"
      />
    </figure>
  );
}

function Terms({ terms, field }: { terms?: Answer['flowAggregate'][number]; field: string }) {
  const buckets = terms?.buckets ?? [];
  const option = useMemo<ChartOption>(
    () => ({
      grid: { left: 120, right: 16, top: 8, bottom: 28 },
      xAxis: { type: 'value', minInterval: 1 },
      yAxis: { type: 'category', data: buckets.map((b) => String(b.key)).reverse() },
      tooltip: { trigger: 'axis' },
      series: [{ type: 'bar', itemStyle: { color: MARK }, data: buckets.map((b) => b.docCount).reverse() }],
    }),
    [buckets],
  );
  return (
    <figure>
      <figcaption>Top values of {field}</figcaption>
      {buckets.length > 0 ? (
        <Chart
          option={option}
          label={`Top values of ${field}: ${buckets.map((b) => `${String(b.key)} ${b.docCount}`).join(', ')}`}
          height={Math.max(120, buckets.length * 24 + 40)}
          testId="chart-terms"
        />
      ) : (
        <p className="note">No values.</p>
      )}
    </figure>
  );
}
