import type { ConsoleInvestigationQuery } from '../../../generated/console.js';
import { ConsoleInvestigationDocument } from '../../../generated/console.js';
import type { PageProps } from '../routes.js';
import { Link } from '../router.js';
import { latest, useQuery } from '../use-query.js';
import { formatConfidence, formatDate, severityLabel } from './format.js';
import { Lineage } from './Lineage.js';
import { searchPath } from './search-link.js';
import { TriagePanel } from './TriagePanel.js';

type Investigation = NonNullable<ConsoleInvestigationQuery['investigation']>;
type Finding = Investigation['keyFindings'][number];

/** One investigation as an analyst works from it: the analysis on the left of their mind, the triage beside it. */
export function InvestigationPage({ user, params: [id] }: PageProps) {
  const { state, reload } = useQuery(ConsoleInvestigationDocument, { id: id! });
  const back = <Link to="/investigations">← All investigations</Link>;
  // While reloading after a change, the investigation stays on screen.
  const data = latest(state);
  if (!data && state.kind === 'loading') return <p role="status">Loading the investigation…</p>;
  if (state.kind === 'failed') {
    return (
      <>
        {back}
        <p role="alert" className="problem">
          The investigation could not be loaded: {state.message}{' '}
          <button type="button" onClick={reload}>
            Try again
          </button>
        </p>
      </>
    );
  }
  const investigation = data?.investigation;
  if (!investigation) {
    return (
      <>
        {back}
        <h1>Investigation not found</h1>
        <p>It does not exist in your tenants, or its analysis has not finished yet.</p>
      </>
    );
  }
  const { verdict, atAGlance, keyFindings, decisionSupport } = investigation;
  return (
    <article className="investigation">
      {back}
      <h1>{investigation.headline ?? `Investigation ${investigation.id}`}</h1>
      <div className="investigation-columns">
        <div>
          <section aria-labelledby="verdict-title" className={`verdict verdict-${verdict?.disposition ?? 'none'}`}>
            <h2 id="verdict-title">Verdict</h2>
            {verdict ? (
              <>
                <p>
                  <strong>
                    {verdict.disposition}
                    {formatConfidence(verdict.confidence)}
                  </strong>
                  : {verdict.headline}
                </p>
                <p>{verdict.rationale}</p>
              </>
            ) : (
              <p>No verdict yet.</p>
            )}
          </section>
          <Facts investigation={investigation} />
          {atAGlance && (
            <section aria-labelledby="glance-title">
              <h2 id="glance-title">At a glance</h2>
              <dl>
                <dt>Known</dt>
                <dd>{atAGlance.known}</dd>
                {atAGlance.unknown && (
                  <>
                    <dt>Unknown</dt>
                    <dd>{atAGlance.unknown}</dd>
                  </>
                )}
                <dt>Therefore</dt>
                <dd>{atAGlance.therefore}</dd>
              </dl>
            </section>
          )}
          <section aria-labelledby="findings-title">
            <h2 id="findings-title">Key findings</h2>
            {keyFindings.length === 0 ? (
              <p>None recorded.</p>
            ) : (
              <ol>
                {keyFindings.map((finding, index) => (
                  <KeyFindingItem key={index} finding={finding} />
                ))}
              </ol>
            )}
          </section>
          <Timeline findings={keyFindings} />
          <section aria-labelledby="lineage-title">
            <h2 id="lineage-title">Provenance</h2>
            <Lineage provenance={investigation.provenance} />
          </section>
          <section aria-labelledby="questions-title">
            <h2 id="questions-title">Open questions</h2>
            <ul>
              {decisionSupport.openQuestions.map((q, index) => (
                <li key={index}>
                  {q.question}
                  {q.priority && ` (${q.priority})`}
                  {q.neededData && <span className="note"> — needs {q.neededData}</span>}
                </li>
              ))}
            </ul>
            {decisionSupport.whatWouldChangeTheVerdict && <p className="note">What would change the verdict: {decisionSupport.whatWouldChangeTheVerdict}</p>}
          </section>
          <section aria-labelledby="actions-title">
            <h2 id="actions-title">Recommended actions</h2>
            <ul>
              {decisionSupport.recommendedActions.map((a, index) => (
                <li key={index}>
                  {a.action} ({a.timeframe.replace(/_/g, ' ')})
                </li>
              ))}
            </ul>
          </section>
        </div>
        <TriagePanel investigation={investigation} customerId={investigation.customerId} user={user} onChanged={reload} />
      </div>
    </article>
  );
}

function Facts({ investigation }: { investigation: Investigation }) {
  return (
    <dl className="facts">
      <dt>Severity</dt>
      <dd>
        {severityLabel(investigation.severity)} {investigation.severity}
      </dd>
      <dt>Detector</dt>
      <dd>{investigation.detector}</dd>
      <dt>Source</dt>
      <dd>{investigation.source ?? '—'}</dd>
      <dt>Destination</dt>
      <dd>{investigation.destination ?? '—'}</dd>
      <dt>Activity</dt>
      <dd>
        {formatDate(investigation.firstActivityAt)} – {formatDate(investigation.lastActivityAt)}
      </dd>
      <dt>Created</dt>
      <dd>{formatDate(investigation.createdAt)}</dd>
      <dt>Tenant</dt>
      <dd>{investigation.customerId}</dd>
      <dt>Related IDS alerts</dt>
      <dd>{investigation.relatedAlertsCount}</dd>
    </dl>
  );
}

function KeyFindingItem({ finding }: { finding: Finding }) {
  const links = (finding.trafficLinks ?? []).map((link) => ({ ...link, path: searchPath(link.query) })).filter((link) => link.path);
  return (
    <li>
      <h3>{finding.headline}</h3>
      {(finding.importance || finding.role) && (
        <p className="note">{[finding.importance && `${finding.importance} importance`, finding.role?.replace(/_/g, ' ')].filter(Boolean).join(', ')}</p>
      )}
      <p>{finding.observation}</p>
      <p>{finding.significance}</p>
      {links.length > 0 && (
        <ul className="evidence" aria-label="Evidence">
          {links.map((link, i) => (
            <li key={i}>
              <Link to={link.path!}>{link.label}</Link>
              {link.rationale && <span className="note"> — {link.rationale}</span>}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** The findings' timelines merged into one, in time order. */
function Timeline({ findings }: { findings: Finding[] }) {
  const events = findings.flatMap((f) => f.timeline ?? []).sort((a, b) => a.at.localeCompare(b.at));
  if (events.length === 0) return null;
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <ol className="timeline">
        {events.map((event, index) => (
          <li key={index}>
            <time dateTime={event.at}>{formatDate(event.at)}</time> {event.label}
            {event.children.length > 0 && (
              <ul>
                {event.children.map((child, i) => (
                  <li key={i}>
                    <time dateTime={child.at}>{formatDate(child.at)}</time> {child.label}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
