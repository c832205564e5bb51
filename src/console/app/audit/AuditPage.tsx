import { type FormEvent, useState } from 'react';
import { type AuditActorKind, type AuditLogFilter, ConsoleAuditLogDocument, type ConsoleAuditLogQuery } from '../../../generated/console.js';
import { DataTable } from '../data-table.js';
import { PageButtons, useCursorPages } from '../pager.js';
import { formatDate } from '../investigations/format.js';
import { QueryView } from '../query-view.js';
import type { PageProps } from '../routes.js';
import { hasRole } from '../session.js';
import { useQuery } from '../use-query.js';

const PAGE = 50;

type Entry = ConsoleAuditLogQuery['auditLog']['edges'][number]['node'];

const ACTORS: Record<AuditActorKind, string> = { USER: 'Person', CLIENT: 'API client', ANONYMOUS: 'Nobody signed in' };

/** The filter form's fields as typed; empty means any. */
interface Fields {
  actorKind: '' | AuditActorKind;
  action: string;
  result: string;
  from: string;
  to: string;
}
const NO_FILTER: Fields = { actorKind: '', action: '', result: '', from: '', to: '' };

/** The fields as the server's filter: the times are the browser's local time, sent as instants. */
function filterOf(fields: Fields): AuditLogFilter {
  const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);
  return {
    actorKind: fields.actorKind || undefined,
    action: fields.action.trim() || undefined,
    result: fields.result.trim() || undefined,
    from: instant(fields.from),
    to: instant(fields.to),
  };
}

/** Who did what to the chosen tenant, when and from where; for its admins (the server refuses others too). */
export function AuditPage({ user, tenant }: PageProps) {
  if (!hasRole(user, 'admin')) {
    return (
      <>
        <h1>Audit log</h1>
        <p>Only admins read the audit log. Ask an admin of your organization.</p>
      </>
    );
  }
  return <AuditLog customerId={tenant.customerId} tenantName={tenant.name ?? tenant.customerId} />;
}

function AuditLog({ customerId, tenantName }: { customerId: string; tenantName: string }) {
  const [fields, setFields] = useState<Fields>(NO_FILTER);
  const [filter, setFilter] = useState<AuditLogFilter>({});
  const pages = useCursorPages([customerId, filter]);
  const { state, reload } = useQuery(ConsoleAuditLogDocument, { customerId, filter, first: PAGE, after: pages.after });
  const field = (name: keyof Fields) => ({
    value: fields[name],
    onChange: (event: { target: { value: string } }) => setFields({ ...fields, [name]: event.target.value }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setFilter(filterOf(fields));
  };
  return (
    <>
      <h1>Audit log of {tenantName}</h1>
      <p>Every change a person or an API client made, or was refused, newest first (docs/audit.md).</p>
      <form className="filters" aria-label="Filter the audit log" onSubmit={submit}>
        <label>
          Who
          <select {...field('actorKind')}>
            <option value="">Anyone</option>
            {Object.entries(ACTORS).map(([kind, label]) => (
              <option key={kind} value={kind}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <input {...field('action')} placeholder="e.g. profiles.create" />
        </label>
        <label>
          Result
          <select {...field('result')}>
            <option value="">Any</option>
            <option value="ok">Done</option>
            <option value="error">Refused or failed</option>
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" {...field('from')} />
        </label>
        <label>
          Before
          <input type="datetime-local" {...field('to')} />
        </label>
        <button type="submit">Show</button>
      </form>
      <QueryView state={state} what="The audit log" reload={reload}>
        {({ auditLog }) =>
          auditLog.edges.length === 0 ? (
            <p>No entries{pages.before ? ' further back' : ''}.</p>
          ) : (
            <>
              <EntriesTable entries={auditLog.edges.map((edge) => edge.node)} />
              <PageButtons pages={pages} size={PAGE} shown={auditLog.edges.length} pageInfo={auditLog.pageInfo} what={['Entries', 'newest first']} />
            </>
          )
        }
      </QueryView>
    </>
  );
}

/** A person or a client by name when the server gives one (else its id), and what it is. */
function Actor({ actor }: { actor: Entry['actor'] }) {
  if (actor.kind === 'ANONYMOUS') return <>{ACTORS.ANONYMOUS}</>;
  return (
    <>
      {actor.name ?? <code>{actor.id}</code>}
      <div className="note">
        {ACTORS[actor.kind]}
        {actor.name && (
          <>
            {' '}
            <code>{actor.id}</code>
          </>
        )}
      </div>
    </>
  );
}

function EntriesTable({ entries }: { entries: Entry[] }) {
  return (
    <DataTable caption="Audit log entries, newest first" className="audit" columns={['When', 'Who', 'Action', 'Change', 'Target', 'Result', 'From']}>
      {entries.map((entry) => (
        <tr key={entry.entryId}>
          <td>{formatDate(entry.at)}</td>
          <td>
            <Actor actor={entry.actor} />
          </td>
          <td>{entry.action}</td>
          <td>
            <code>{entry.field}</code>
          </td>
          <td>
            <code>{JSON.stringify(entry.target)}</code>
          </td>
          <td className={entry.result === 'ok' ? undefined : 'problem'}>{entry.result === 'ok' ? 'Done' : `Refused: ${entry.result}`}</td>
          <td>{entry.clientAddress ?? '—'}</td>
        </tr>
      ))}
    </DataTable>
  );
}
