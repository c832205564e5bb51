import type { TriageAnswer, TriageResolution, TriageStatus } from '../../generated/prisma/client.js';

/**
 * Triage (docs/triage.md): the rules of an investigation's status, pure so that the service, the
 * docs and the tests read the same table.
 */
export const TRIAGE_STATUSES = ['new', 'acknowledged', 'in_progress', 'resolved'] as const satisfies readonly TriageStatus[];
export const RESOLUTIONS = ['authorized', 'malicious', 'false_positive', 'duplicate'] as const satisfies readonly TriageResolution[];
export const ANSWERS = ['unauthorized', 'unsure', 'authorized'] as const satisfies readonly TriageAnswer[];
export type { TriageAnswer, TriageResolution, TriageStatus };

/**
 * Where each status may go. Forward only, skipping allowed; a resolved investigation goes back only
 * by being reopened, explicitly, to `in_progress`.
 */
export const TRANSITIONS: Record<TriageStatus, readonly TriageStatus[]> = {
  new: ['acknowledged', 'in_progress', 'resolved'],
  acknowledged: ['in_progress', 'resolved'],
  in_progress: ['resolved'],
  resolved: ['in_progress'],
};

export const canMove = (from: TriageStatus, to: TriageStatus) => TRANSITIONS[from].includes(to);

export const TRIAGE_LIMITS = {
  /** Characters of a comment. */
  comment: 4000,
  /** Characters of an answer's note (also the suppression's reason). */
  note: 2000,
  /** Days a suppression lasts: default and most. */
  suppressionDays: { default: 90, max: 365 },
  /** Comments and activity entries per page. */
  page: { default: 50, max: 200 },
  /** Comments one investigation may collect. */
  commentsPerInvestigation: 1000,
} as const;

/**
 * How far an UNAUTHORIZED answer raises severity (0..100): one band of four (low, medium, high,
 * critical), never past 100. Kept as `severity_raise` so a re-analysis, which recomputes the
 * detector's severity, adds it again, and a changed answer takes it back.
 */
export const CONFIRMED_SEVERITY_STEP = 25;

export const raiseFor = (detectorSeverity: number, answer: TriageAnswer | null) =>
  answer === 'unauthorized' ? Math.min(CONFIRMED_SEVERITY_STEP, Math.max(0, 100 - detectorSeverity)) : 0;

/** What the status becomes when an answer is given (the AUTHORIZED answer resolves separately). */
export function statusAfterAnswer(current: TriageStatus, answer: TriageAnswer): TriageStatus {
  if (answer === 'authorized') return 'resolved';
  // Confirmed activity is being worked on until someone resolves it.
  if (answer === 'unauthorized') return 'in_progress';
  return current === 'new' ? 'acknowledged' : current;
}

/** The kinds of activity entry (investigation_activity.kind). */
export const ACTIVITY_KINDS = ['answered', 'status_changed', 'reopened', 'commented', 'suppressed', 'suppression_revoked', 'assigned'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];
