import { useEffect, useState } from 'react';
import { ConsoleEventRecordsDocument, ConsoleEventTopicsDocument, ConsoleLiveEventsDocument } from '../../../generated/console.js';
import { formatDate } from '../investigations/format.js';
import { LiveProblem, useLive } from '../live.js';
import { QueryView } from '../query-view.js';
import { Link, useLocation } from '../router.js';
import { useQuery } from '../use-query.js';
import type { EventsProps } from './EventsRoutes.js';
import { DataTable } from '../data-table.js';

const PAGE = 50;

/** The topics with their counts; the chosen topic's records, newest first, a page at a time, live. */
export function EventsPage({ tenant }: EventsProps) {
  const topic = useLocation().searchParams.get('topic');
  const { state, reload } = useQuery(ConsoleEventTopicsDocument, { customerId: tenant.customerId });
  const liveProblem = useLive(ConsoleLiveEventsDocument, { customerId: tenant.customerId }, reload);
  return (
    <>
      <h1>Events</h1>
      <LiveProblem problem={liveProblem} />
      <QueryView state={state} what="The topics" reload={reload}>
        {({ eventTopics }) => (
          <DataTable caption={<>Event topics of {tenant.name ?? tenant.customerId}</>} columns={['Topic', 'What', 'Events', 'Latest']} className="topics">
            {eventTopics.topics.map((t) => (
              <tr key={t.topic}>
                <td>
                  <Link to={`/events?topic=${encodeURIComponent(t.topic)}`} aria-current={t.topic === topic ? 'true' : undefined}>
                    {t.topic}
                  </Link>
                </td>
                <td>{t.description}</td>
                <td>{t.count}</td>
                <td>{formatDate(t.latestAt)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
      {topic && <Records customerId={tenant.customerId} topic={topic} />}
    </>
  );
}

function Records({ customerId, topic }: { customerId: string; topic: string }) {
  const [cursor, setCursor] = useState<string>();
  useEffect(() => setCursor(undefined), [customerId, topic]);
  const { state, reload } = useQuery(ConsoleEventRecordsDocument, { customerId, topic, cursor, limit: PAGE });
  useLive(ConsoleLiveEventsDocument, { customerId, topic }, reload);
  return (
    <section aria-labelledby="records">
      <h2 id="records">Records of {topic}</h2>
      <QueryView state={state} what="The records" reload={reload}>
        {({ eventRecords: page }) =>
          page.events.length === 0 ? (
            <p>No events on this topic yet.</p>
          ) : (
            <>
              <DataTable caption={<>Events of {topic}, newest first</>} columns={['When', 'Kind', 'Subject', 'Data']} className="records">
                {page.events.map((e) => (
                  <tr key={e.eventId}>
                    <td>{formatDate(e.createdAt)}</td>
                    <td>{e.kind}</td>
                    <td>{e.subject ?? '—'}</td>
                    <td>
                      <code>{JSON.stringify(e.data)}</code>
                    </td>
                  </tr>
                ))}
              </DataTable>
              <div className="actions">
                {cursor && (
                  <button type="button" onClick={() => setCursor(undefined)}>
                    Newest
                  </button>
                )}
                {page.nextCursor && (
                  <button type="button" onClick={() => setCursor(page.nextCursor!)}>
                    Older
                  </button>
                )}
                <span className="note">{page.total} events in all</span>
              </div>
            </>
          )
        }
      </QueryView>
    </section>
  );
}
