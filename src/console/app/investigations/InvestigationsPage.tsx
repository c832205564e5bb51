import { type FormEvent, useEffect, useState } from 'react';
import { ConsoleInvestigationEventsDocument, ConsoleInvestigationsDocument, type ConsoleInvestigationsQuery } from '../../../generated/console.js';
import { subscribe } from '../api.js';
import { Link, navigate, useLocation } from '../router.js';
import type { PageProps } from '../routes.js';
import { useQuery } from '../use-query.js';
import { formatConfidence, formatDate, severityLabel } from './format.js';
import { DISPOSITIONS, type ListFilters, PAGE_SIZE, SORTS, listVariables, readFilters, writeFilters } from './list-query.js';

type Row = ConsoleInvestigationsQuery['investigations']['investigations'][number];

/**
 * The investigations of the person's tree, a page at a time, filtered and sorted by the server;
 * the page reloads itself when the chosen tenant records a new investigation.
 */
export function InvestigationsPage({ tenant }: PageProps) {
  const location = useLocation();
  const filters = readFilters(location.searchParams);
  const { state, reload } = useQuery(ConsoleInvestigationsDocument, listVariables(filters));
  const [liveProblem, setLiveProblem] = useState<string>();
  const show = (next: Partial<ListFilters>) => navigate(`/investigations${writeFilters({ ...filters, page: 1, ...next })}`);

  useEffect(() => {
    setLiveProblem(undefined);
    return subscribe(ConsoleInvestigationEventsDocument, { customerId: tenant.customerId }, reload, (error) => setLiveProblem(error.message));
  }, [tenant.customerId, reload]);

  const page = state.kind === 'done' ? state.data.investigations : state.kind === 'loading' ? state.previous?.investigations : undefined;
  return (
    <>
      <h1>Investigations</h1>
      <Filters filters={filters} onApply={show} />
      {liveProblem && <p className="note">Live updates are off: {liveProblem}</p>}
      <div aria-live="polite" aria-busy={state.kind === 'loading'}>
        {state.kind === 'failed' && (
          <p role="alert" className="problem">
            The investigations could not be loaded: {state.message}{' '}
            <button type="button" onClick={reload}>
              Try again
            </button>
          </p>
        )}
        {state.kind === 'loading' && !page && <p role="status">Loading investigations…</p>}
        {page && page.total === 0 && <p>No investigations match these filters.</p>}
        {page && page.total > 0 && <Table rows={page.investigations} filters={filters} onSort={(sort) => show({ sort })} />}
        {page && page.total > PAGE_SIZE && <Pager total={page.total} offset={page.offset} filters={filters} onPage={(p) => show({ page: p })} />}
      </div>
    </>
  );
}

function Filters({ filters, onApply }: { filters: ListFilters; onApply: (next: Partial<ListFilters>) => void }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '');
    onApply({ disposition: text('disposition'), minConfidence: text('minConfidence'), since: text('since'), until: text('until') });
  };
  return (
    // Keyed by the query string: the fields show the filters in force after back and forward.
    <form className="filters" aria-label="Filters" onSubmit={submit} key={writeFilters(filters)}>
      <label>
        Verdict
        <select name="disposition" defaultValue={filters.disposition}>
          <option value="">Any</option>
          {DISPOSITIONS.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
      </label>
      <label>
        Confidence at least (%)
        <input name="minConfidence" type="number" min={0} max={100} step={1} defaultValue={filters.minConfidence} />
      </label>
      <label>
        Created from
        <input name="since" type="date" defaultValue={filters.since} />
      </label>
      <label>
        to
        <input name="until" type="date" defaultValue={filters.until} />
      </label>
      <button type="submit">Apply</button>
    </form>
  );
}

function Table({ rows, filters, onSort }: { rows: Row[]; filters: ListFilters; onSort: (sort: ListFilters['sort']) => void }) {
  const sortHeader = (label: string, sort: ListFilters['sort']) => (
    <th scope="col" aria-sort={filters.sort === sort ? 'descending' : undefined}>
      <button type="button" className="sort" onClick={() => onSort(sort)} title={SORTS[sort]}>
        {label}
        {filters.sort === sort ? ' ▼' : ''}
      </button>
    </th>
  );
  return (
    <table className="investigations">
      <caption className="visually-hidden">Investigations, {SORTS[filters.sort].toLowerCase()}</caption>
      <thead>
        <tr>
          {sortHeader('Severity', 'severity')}
          <th scope="col">Investigation</th>
          <th scope="col">Detector</th>
          <th scope="col">Verdict</th>
          <th scope="col">Source</th>
          <th scope="col">Destination</th>
          {sortHeader('Created', 'recent')}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <td>
              <span className={`severity severity-${severityLabel(row.severity).toLowerCase()}`}>
                {severityLabel(row.severity)} {row.severity}
              </span>
            </td>
            <td>
              <Link to={`/investigations/${encodeURIComponent(row.id)}`}>{row.headline ?? row.id}</Link>
            </td>
            <td>{row.detector}</td>
            <td>{row.verdict ? `${row.verdict.disposition}${formatConfidence(row.verdict.confidence)}` : row.status === 'running' ? 'analysing…' : '—'}</td>
            <td>{row.source ?? '—'}</td>
            <td>{row.destination ?? '—'}</td>
            <td>{formatDate(row.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Pager({ total, offset, filters, onPage }: { total: number; offset: number; filters: ListFilters; onPage: (page: number) => void }) {
  const pages = Math.ceil(total / PAGE_SIZE);
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={filters.page <= 1} onClick={() => onPage(filters.page - 1)}>
        Previous
      </button>
      <span>
        {offset + 1}–{Math.min(offset + PAGE_SIZE, total)} of {total} (page {filters.page} of {pages})
      </span>
      <button type="button" disabled={filters.page >= pages} onClick={() => onPage(filters.page + 1)}>
        Next
      </button>
    </nav>
  );
}
