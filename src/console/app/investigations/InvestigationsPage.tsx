import { type FormEvent, useEffect, useState } from 'react';
import { ConsoleInvestigationEventsDocument, ConsoleInvestigationsDocument, type ConsoleInvestigationsQuery } from '../../../generated/console.js';
import { subscribe } from '../api.js';
import type { PageProps } from '../routes.js';
import { Link, navigate, useLocation } from '../router.js';
import { latest, useQuery } from '../use-query.js';
import { type PeopleNames, usePeopleNames } from '../people/names.js';
import { formatConfidence, formatDate, severityLabel } from './format.js';
import {
  ANSWERS,
  DISPOSITIONS,
  type ListFilters,
  PAGE_SIZE,
  SORTS,
  TRIAGE_CHOICES,
  TRIAGE_STATUSES,
  listVariables,
  readFilters,
  writeFilters,
} from './list-query.js';

type Row = ConsoleInvestigationsQuery['investigations']['investigations'][number];

const LIVE_RELOAD_DELAY_MS = 300;
const LIVE_TOPICS = ['investigations', 'triage'] as const;

/**
 * The chosen tenant's investigations, a page at a time, filtered and sorted by the server; the
 * page reloads itself when the tenant records an investigation event (a new one, an update).
 */
export function InvestigationsPage({ user, tenant }: PageProps) {
  const location = useLocation();
  const filters = readFilters(location.searchParams);
  const { state, reload } = useQuery(ConsoleInvestigationsDocument, listVariables(filters, { customerId: tenant.customerId, userId: user.id }));
  const [liveProblem, setLiveProblem] = useState<string>();
  const names = usePeopleNames(user, tenant.customerId);
  const show = (next: Partial<ListFilters>) => navigate(`/investigations${writeFilters({ ...filters, page: 1, ...next })}`);

  useEffect(() => {
    setLiveProblem(undefined);
    // A detection run records its investigations in a burst: one reload for each burst, not each event.
    let pending: number | undefined;
    const reloadSoon = () => {
      pending ??= window.setTimeout(() => {
        pending = undefined;
        reload();
      }, LIVE_RELOAD_DELAY_MS);
    };
    // Triage events too: a list of open investigations drops one once it is resolved, by anyone.
    const stops = LIVE_TOPICS.map((topic) =>
      subscribe(ConsoleInvestigationEventsDocument, { customerId: tenant.customerId, topic }, reloadSoon, (error) => setLiveProblem(error.message)),
    );
    return () => {
      for (const stop of stops) stop();
      window.clearTimeout(pending);
    };
  }, [tenant.customerId, reload]);

  const page = latest(state)?.investigations;
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
        {page && page.total > 0 && <Table rows={page.investigations} names={names} filters={filters} onSort={(sort) => show({ sort })} />}
        {page && page.total > PAGE_SIZE && (
          <Pager key={filters.page} total={page.total} offset={page.offset} filters={filters} onPage={(p) => show({ page: p })} />
        )}
      </div>
    </>
  );
}

/** A filter's select; "Any" is `anyValue` (the empty string unless the filter's default is a choice). */
function Choice({
  label,
  name,
  value,
  options,
  anyValue = '',
}: {
  label: string;
  name: string;
  value: string;
  options: Record<string, string>;
  anyValue?: string;
}) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value}>
        <option value={anyValue}>Any</option>
        {Object.entries(options).map(([key, text]) => (
          <option key={key} value={key}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

const FORM_FIELDS = ['triageStatus', 'answer', 'assignee', 'disposition', 'minConfidence', 'since', 'until'] as const;

function Filters({ filters, onApply }: { filters: ListFilters; onApply: (next: Partial<ListFilters>) => void }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    onApply(Object.fromEntries(FORM_FIELDS.map((name) => [name, String(form.get(name) ?? '')])));
  };
  return (
    // Keyed by the query string: the fields show the filters in force after back and forward.
    <form className="filters" aria-label="Filters" onSubmit={submit} key={writeFilters(filters)}>
      <Choice label="Triage status" name="triageStatus" value={filters.triageStatus} options={TRIAGE_CHOICES} anyValue="any" />
      <Choice label="Answer" name="answer" value={filters.answer} options={ANSWERS} />
      <Choice label="Assigned to" name="assignee" value={filters.assignee} options={{ me: 'Me' }} />
      <Choice label="Verdict" name="disposition" value={filters.disposition} options={Object.fromEntries(DISPOSITIONS.map((d) => [d, d]))} />
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

function Table({ rows, names, filters, onSort }: { rows: Row[]; names: PeopleNames; filters: ListFilters; onSort: (sort: ListFilters['sort']) => void }) {
  const sortHeader = (label: string, sort: ListFilters['sort']) => (
    <th scope="col" aria-sort={filters.sort === sort ? 'descending' : undefined}>
      <button type="button" className="sort" onClick={() => onSort(sort)} title={`Sort: ${SORTS[sort].toLowerCase()}`}>
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
          {sortHeader('Triage', 'triage_status')}
          {sortHeader('Answer', 'answer')}
          {sortHeader('Assignee', 'assignee')}
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
            <td className="nowrap">{row.source ?? '—'}</td>
            <td>{row.destination ?? '—'}</td>
            <td className="nowrap">{TRIAGE_STATUSES[row.triage.status]}</td>
            <td className="nowrap">{row.triage.answer ? ANSWERS[row.triage.answer] : '—'}</td>
            <td className="nowrap">{names.assignee(row.triage.assigneeId, row.assignee)}</td>
            <td>{formatDate(row.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Pager({ total, offset, filters, onPage }: { total: number; offset: number; filters: ListFilters; onPage: (page: number) => void }) {
  const pages = Math.ceil(total / PAGE_SIZE);
  const [target, setTarget] = useState(String(filters.page));
  const jump = (event: FormEvent) => {
    event.preventDefault();
    const page = Number(target);
    if (Number.isInteger(page) && page >= 1 && page <= pages) onPage(page);
  };
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={filters.page <= 1} onClick={() => onPage(1)}>
        First
      </button>
      <button type="button" disabled={filters.page <= 1} onClick={() => onPage(filters.page - 1)}>
        Previous
      </button>
      <span>
        {offset + 1}–{Math.min(offset + PAGE_SIZE, total)} of {total}
      </span>
      <button type="button" disabled={filters.page >= pages} onClick={() => onPage(filters.page + 1)}>
        Next
      </button>
      <button type="button" disabled={filters.page >= pages} onClick={() => onPage(pages)}>
        Last
      </button>
      <form onSubmit={jump}>
        <label>
          Page <input type="number" min={1} max={pages} value={target} onChange={(e) => setTarget(e.target.value)} className="page-number" /> of {pages}
        </label>{' '}
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}
