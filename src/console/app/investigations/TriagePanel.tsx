import { type FormEvent, type ReactNode, useState } from 'react';
import {
  ConsoleAnswerInvestigationDocument,
  ConsoleAssignInvestigationDocument,
  ConsoleCommentOnInvestigationDocument,
  type ConsoleInvestigationSuppressionsQuery,
  ConsoleInvestigationSuppressionsDocument,
  ConsoleAssignablePeopleDocument,
  ConsoleRevokeSuppressionDocument,
  ConsoleSetInvestigationStatusDocument,
  type ConsoleTriageFragment,
  type TriageAnswer,
  type TriageResolution,
  type TriageStatus,
} from '../../../generated/console.js';
import { type Actor, type PeopleNames, usePeopleNames } from '../people/names.js';
import { hasRole, type User } from '../session.js';
import { useAction } from '../use-action.js';
import { type QueryState, useQuery } from '../use-query.js';
import { formatDate } from './format.js';
import { ANSWERS, TRIAGE_STATUSES } from './list-query.js';

/** docs/triage.md: where each status may move. */
const TRANSITIONS: Record<TriageStatus, TriageStatus[]> = {
  NEW: ['ACKNOWLEDGED', 'IN_PROGRESS', 'RESOLVED'],
  ACKNOWLEDGED: ['IN_PROGRESS', 'RESOLVED'],
  IN_PROGRESS: ['RESOLVED'],
  RESOLVED: ['IN_PROGRESS'],
};
const RESOLUTIONS: Record<TriageResolution, string> = {
  AUTHORIZED: 'Authorized',
  MALICIOUS: 'Malicious',
  FALSE_POSITIVE: 'False positive',
  DUPLICATE: 'Duplicate',
};
const ANSWER_HINTS: Record<TriageAnswer, string> = {
  AUTHORIZED: 'resolves it and suppresses this activity for 90 days',
  UNAUTHORIZED: 'raises its severity and keeps it open until resolved',
  UNSURE: 'recorded; it stays open',
};

type Suppression = ConsoleInvestigationSuppressionsQuery['suppressions']['suppressions'][number];

/**
 * What people made of the investigation, and — for analysts and admins — the controls to answer
 * "was it authorized?", move its status, assign, comment and revoke the suppression an answer made.
 * A viewer sees it all read-only. Every change reloads the investigation (`onChanged`).
 */
export function TriagePanel({
  investigation,
  customerId,
  user,
  onChanged,
}: {
  investigation: ConsoleTriageFragment & { id: string };
  customerId: string;
  user: User;
  onChanged: () => void;
}) {
  const { triage } = investigation;
  const canTriage = hasRole(user, 'analyst');
  const names = usePeopleNames(user, customerId);
  const suppressions = useQuery(ConsoleInvestigationSuppressionsDocument, { customerId, investigationId: investigation.id });
  const { busy, problem, run } = useAction(() => {
    onChanged();
    suppressions.reload();
  });

  return (
    <section className="triage" aria-labelledby="triage-title">
      <h2 id="triage-title">Triage</h2>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          {TRIAGE_STATUSES[triage.status]}
          {triage.resolution && ` — ${RESOLUTIONS[triage.resolution]}`}
          {triage.resolvedAt && `, ${formatDate(triage.resolvedAt)}`}
        </dd>
        <dt>Authorized?</dt>
        <dd>
          {triage.answer ? ANSWERS[triage.answer] : 'Not answered yet'}
          {triage.answeredBy && ` by ${names.actor(triage.answeredBy)}, ${formatDate(triage.answeredAt)}`}
          {triage.note && <q className="quoted-note">{triage.note}</q>}
          {triage.severityRaise > 0 && ` (severity raised by ${triage.severityRaise})`}
        </dd>
        <dt>Assigned to</dt>
        <dd>{names.assignee(triage.assigneeId, investigation.assignee)}</dd>
      </dl>
      {!canTriage && <p className="note">Your role ({user.role}) can read the triage but not change it; an analyst or admin can.</p>}
      {problem && (
        <p role="alert" className="problem">
          {problem}
        </p>
      )}
      {canTriage && (
        <div className="triage-controls">
          <AnswerForm
            resolved={triage.status === 'RESOLVED'}
            busy={busy}
            onAnswer={async (answer, note) => !!(await run(ConsoleAnswerInvestigationDocument, { id: investigation.id, answer, note: note || undefined }))}
          />
          <StatusForm
            status={triage.status}
            busy={busy}
            onMove={async (status, resolution) => !!(await run(ConsoleSetInvestigationStatusDocument, { id: investigation.id, status, resolution }))}
          />
          <AssignForm
            user={user}
            customerId={customerId}
            assigneeId={triage.assigneeId}
            busy={busy}
            onAssign={async (userId) => !!(await run(ConsoleAssignInvestigationDocument, { id: investigation.id, userId }))}
          />
        </div>
      )}
      <SuppressionList
        state={suppressions.state}
        names={names}
        canRevoke={canTriage}
        busy={busy}
        onRevoke={(id) => void run(ConsoleRevokeSuppressionDocument, { id })}
      />
      <Comments
        investigation={investigation}
        names={names}
        canComment={canTriage}
        busy={busy}
        onComment={async (text) => !!(await run(ConsoleCommentOnInvestigationDocument, { id: investigation.id, text }))}
      />
      <History investigation={investigation} names={names} />
    </section>
  );
}

function Fieldset({ legend, children }: { legend: string; children: ReactNode }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {children}
    </fieldset>
  );
}

function AnswerForm({ resolved, busy, onAnswer }: { resolved: boolean; busy: boolean; onAnswer: (answer: TriageAnswer, note: string) => Promise<boolean> }) {
  const [answer, setAnswer] = useState<TriageAnswer>();
  const [note, setNote] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (answer && (await onAnswer(answer, note.trim()))) setNote('');
  };
  return (
    <form onSubmit={(event) => void submit(event)} aria-label="Answer">
      <Fieldset legend="Was this activity authorized?">
        {resolved && <p className="note">It is resolved: reopen it (status In progress) to answer again.</p>}
        {(Object.keys(ANSWERS) as TriageAnswer[]).map((key) => (
          <label key={key} className="radio">
            <input type="radio" name="answer" value={key} checked={answer === key} disabled={resolved} onChange={() => setAnswer(key)} /> {ANSWERS[key]}{' '}
            <span className="note">— {ANSWER_HINTS[key]}</span>
          </label>
        ))}
        <label htmlFor="answer-note">Note (what you know; it becomes the suppression's reason)</label>
        <textarea id="answer-note" maxLength={2000} rows={2} value={note} disabled={resolved} onChange={(e) => setNote(e.target.value)} />
        <button type="submit" disabled={busy || resolved || !answer}>
          Record answer
        </button>
      </Fieldset>
    </form>
  );
}

function StatusForm({
  status,
  busy,
  onMove,
}: {
  status: TriageStatus;
  busy: boolean;
  onMove: (status: TriageStatus, resolution?: TriageResolution) => Promise<boolean>;
}) {
  const next = TRANSITIONS[status];
  const [target, setTarget] = useState<TriageStatus>(next[0]!);
  const [resolution, setResolution] = useState<TriageResolution>('MALICIOUS');
  const chosen = next.includes(target) ? target : next[0]!;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void onMove(chosen, chosen === 'RESOLVED' ? resolution : undefined);
  };
  return (
    <form onSubmit={submit} aria-label="Status">
      <Fieldset legend="Status">
        <label>
          Move to{' '}
          <select value={chosen} onChange={(e) => setTarget(e.target.value as TriageStatus)}>
            {next.map((s) => (
              <option key={s} value={s}>
                {status === 'RESOLVED' ? 'In progress (reopen)' : TRIAGE_STATUSES[s]}
              </option>
            ))}
          </select>
        </label>
        {chosen === 'RESOLVED' && (
          <label>
            Resolution{' '}
            <select value={resolution} onChange={(e) => setResolution(e.target.value as TriageResolution)}>
              {Object.entries(RESOLUTIONS).map(([key, text]) => (
                <option key={key} value={key}>
                  {text}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" disabled={busy}>
          Change status
        </button>
      </Fieldset>
    </form>
  );
}

/** Analysts and admins hand it to a person of the tenant who can triage, by name, take it, or let it go. */
function AssignForm({
  user,
  customerId,
  assigneeId,
  busy,
  onAssign,
}: {
  user: User;
  customerId: string;
  assigneeId: string | null;
  busy: boolean;
  onAssign: (userId: string | null) => Promise<boolean>;
}) {
  const { state } = useQuery(ConsoleAssignablePeopleDocument, { customerId });
  const [chosen, setChosen] = useState(assigneeId ?? '');
  return (
    <Fieldset legend="Assignment">
      {state.kind === 'failed' ? (
        <p className="problem">The people who can be assigned could not be listed: {state.message}</p>
      ) : (
        <form
          className="inline-actions"
          onSubmit={(event) => {
            event.preventDefault();
            void onAssign(chosen || null);
          }}
        >
          <label>
            Assign to{' '}
            <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
              <option value="">Nobody</option>
              {(state.kind === 'done' ? state.data.assignablePeople : []).map((person) => (
                <option key={person.id} value={person.id}>
                  {person.id === user.id ? `${person.name} (you)` : person.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={busy || state.kind !== 'done'}>
            Assign
          </button>
        </form>
      )}
      <p className="inline-actions">
        <button type="button" disabled={busy || assigneeId === user.id} onClick={() => void onAssign(user.id)}>
          Assign to me
        </button>
        <button type="button" disabled={busy || assigneeId == null} onClick={() => void onAssign(null)}>
          Unassign
        </button>
      </p>
    </Fieldset>
  );
}

function SuppressionList({
  state,
  names,
  canRevoke,
  busy,
  onRevoke,
}: {
  state: QueryState<ConsoleInvestigationSuppressionsQuery>;
  names: PeopleNames;
  canRevoke: boolean;
  busy: boolean;
  onRevoke: (id: string) => void;
}) {
  if (state.kind === 'failed') return <p className="problem">Suppressions could not be loaded: {state.message}</p>;
  const list: Suppression[] = state.kind === 'done' ? state.data.suppressions.suppressions : [];
  if (list.length === 0) return null;
  return (
    <section aria-labelledby="suppression-title">
      <h3 id="suppression-title">Suppression</h3>
      <ul className="suppressions">
        {list.map((s) => (
          <li key={s.id}>
            <p>
              <strong>{s.active ? 'In force' : s.revokedAt ? `Revoked ${formatDate(s.revokedAt)}` : 'Expired'}</strong>: detection ignores {s.detector} from{' '}
              {s.source} to {s.destination} until {formatDate(s.expiresAt)}. Created by {names.actor(s.createdBy)}, {formatDate(s.createdAt)}
              {s.reason && (
                <>
                  {' '}
                  — <q>{s.reason}</q>
                </>
              )}
            </p>
            {s.active && canRevoke && (
              <button type="button" disabled={busy} onClick={() => onRevoke(s.id)}>
                Revoke suppression
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Comments({
  investigation,
  names,
  canComment,
  busy,
  onComment,
}: {
  investigation: ConsoleTriageFragment;
  names: PeopleNames;
  canComment: boolean;
  busy: boolean;
  onComment: (text: string) => Promise<boolean>;
}) {
  const [text, setText] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (text.trim() && (await onComment(text.trim()))) setText('');
  };
  return (
    <section aria-labelledby="comments-title">
      <h3 id="comments-title">Comments ({investigation.comments.totalCount})</h3>
      <ol className="comments">
        {investigation.comments.edges.map(({ node }) => (
          <li key={node.id}>
            <p className="note">
              {names.actor(node.author)}, {formatDate(node.createdAt)}
            </p>
            <p className="comment-text">{node.text}</p>
          </li>
        ))}
      </ol>
      {canComment && (
        <form onSubmit={(event) => void submit(event)}>
          <label htmlFor="comment-text">Add a comment</label>
          <textarea id="comment-text" maxLength={4000} rows={3} value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit" disabled={busy || !text.trim()}>
            Comment
          </button>
        </form>
      )}
    </section>
  );
}

/** One history entry in words (docs/triage.md: the `data` of each kind). */
function describe(kind: string, data: Record<string, unknown>, names: PeopleNames, assignee: Actor | null): string {
  const word = (value: unknown) => (typeof value === 'string' ? value.toLowerCase().replace(/_/g, ' ') : '');
  switch (kind) {
    case 'answered':
      return `answered ${word(data.answer)}${data.note ? `: “${String(data.note)}”` : ''}`;
    case 'status_changed':
    case 'reopened':
      return `${kind === 'reopened' ? 'reopened it' : 'moved it'} from ${word(data.from)} to ${word(data.to)}${data.resolution ? ` (${word(data.resolution)})` : ''}`;
    case 'commented':
      return 'commented';
    case 'suppressed':
      return `suppressed its subject until ${formatDate(String(data.expires_at))}`;
    case 'suppression_revoked':
      return 'revoked the suppression';
    case 'assigned':
      return assignee ? `assigned it to ${names.actor(assignee).replace(/^You$/, 'you')}` : 'unassigned it';
    default:
      return word(kind);
  }
}

function History({ investigation, names }: { investigation: ConsoleTriageFragment; names: PeopleNames }) {
  return (
    <section aria-labelledby="history-title">
      <h3 id="history-title">History</h3>
      {investigation.activity.totalCount === 0 ? (
        <p>Nothing yet.</p>
      ) : (
        <ol className="history">
          {investigation.activity.edges.map(({ node }) => (
            <li key={node.id}>
              <time dateTime={node.createdAt}>{formatDate(node.createdAt)}</time> {names.actor(node.actor)}{' '}
              {describe(node.kind, (node.data ?? {}) as Record<string, unknown>, names, node.assignee ?? null)}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
