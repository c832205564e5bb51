import { ConsoleInvestigationDocument } from '../../../generated/console.js';
import type { PageProps } from '../routes.js';
import { Link } from '../router.js';
import { useQuery } from '../use-query.js';
import { formatConfidence, formatDate, severityLabel } from './format.js';

/** One investigation, read-only: the verdict, the at-a-glance, key findings and decision support. */
export function InvestigationPage({ params: [id] }: PageProps) {
  const { state, reload } = useQuery(ConsoleInvestigationDocument, { id: id! });
  const back = <Link to="/investigations">← All investigations</Link>;
  if (state.kind === 'loading') return <p role="status">Loading the investigation…</p>;
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
  const investigation = state.data.investigation;
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
      <section aria-labelledby="verdict-title">
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
              <li key={index}>
                <h3>{finding.headline}</h3>
                <p>{finding.observation}</p>
                <p>{finding.significance}</p>
              </li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="questions-title">
        <h2 id="questions-title">Open questions</h2>
        <ul>
          {decisionSupport.openQuestions.map((q, index) => (
            <li key={index}>
              {q.question}
              {q.priority && ` (${q.priority})`}
            </li>
          ))}
        </ul>
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
    </article>
  );
}
