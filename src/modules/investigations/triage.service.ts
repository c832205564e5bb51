import { roleAllows, roles } from '../../auth/actions.js';
import type { Actor, Session } from '../../auth/session.js';
import { DomainError, badRequest, conflict, notFound } from '../../errors.js';
import type { Investigation, InvestigationActivity, InvestigationComment, Suppression } from '../../generated/prisma/client.js';
import { newId, plausibleId } from '../../infra/ids.js';
import type { EventRecorder, NewEvent } from '../events/events.service.js';
import type { InvestigationStore } from './investigations.store.js';
import {
  ANSWERS,
  RESOLUTIONS,
  TRANSITIONS,
  TRIAGE_LIMITS,
  TRIAGE_STATUSES,
  type TriageAnswer,
  type TriageResolution,
  type TriageStatus,
  canMove,
  raiseFor,
  statusAfterAnswer,
} from './triage.model.js';
import type { ActivityEntry, NewSuppression, Page, SuppressionFilter, TriageChange, TriageStore, TriageWrite } from './triage.store.js';
import type { ActorNames } from '../users/actor-names.js';
import type { NamedPerson } from '../users/actor-names.store.js';
import { displayName } from '../users/users.service.js';

const DAY_MS = 86_400_000;

/** A person as triage shows them to anyone who reads the investigation: an id and a name, nothing more. */
export interface Assignee {
  id: string;
  name: string;
}
const assigneeOf = (person: NamedPerson): Assignee => ({ id: person.id, name: displayName(person) });
/** The roles that may triage, so may be handed an investigation. */
const TRIAGE_ROLES = roles.filter((role) => roleAllows(role, 'investigations.triage'));
const invalid = (field: string, message: string) => badRequest('invalid_request', message, { field });
const investigationNotFound = () => notFound('not_found', 'Investigation not found');
/** Who acted, as event data names it. */
const whoActed = (actor: Actor) => ({ actor_kind: actor.kind, actor_id: actor.id });
/** Status names as the GraphQL enum spells them, for messages. */
const shown = (s: string) => s.toUpperCase();

/** 409 `invalid_transition`: the move the triage rules refuse, and where the investigation may go instead. */
function invalidTransition(from: TriageStatus, to: TriageStatus | 'answered', message: string): DomainError {
  return new DomainError(409, 'invalid_transition', message, {
    details: { reason: 'invalid_transition', from: shown(from), to: shown(to), allowed: TRANSITIONS[from].map(shown) },
  });
}

/** A page request (`limit` clamped to 1..max, `offset` ≥ 0). */
export function pageOf(args: { limit?: number | null; offset?: number | null }): Page {
  const { default: fallback, max } = TRIAGE_LIMITS.page;
  if (args.offset != null && (!Number.isInteger(args.offset) || args.offset < 0)) throw invalid('offset', 'offset must be a non-negative integer');
  return { limit: Math.max(1, Math.min(max, args.limit ?? fallback)), offset: args.offset ?? 0 };
}

function noteOf(field: string, raw: string | null | undefined, max: number, required: boolean): string | null {
  const text = raw?.trim() ?? '';
  if (!text && required) throw invalid(field, `${field} must not be empty`);
  if (text.length > max) throw invalid(field, `${field} must be at most ${max} characters`);
  return text || null;
}

export interface SuppressionListArgs {
  active?: boolean | null;
  investigationId?: string | null;
  limit?: number | null;
  offset?: number | null;
}

/**
 * Triage (docs/triage.md): answering "was this activity authorized?", moving an investigation
 * through its triage status, commenting, and the suppressions an AUTHORIZED answer creates. Every
 * change is written with its history entry and recorded as an event; who acted is the session's
 * actor. An investigation outside the caller's tree, or still running, behaves as missing.
 */
export class TriageService {
  constructor(
    private readonly store: TriageStore,
    private readonly investigations: InvestigationStore,
    private readonly events: EventRecorder,
    /** Whether a person may be handed investigations of a tenant: active, able to triage, and seeing that tenant. */
    private readonly canTriage: (userId: string, customerId: string) => Promise<boolean>,
    private readonly names: ActorNames,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The person an investigation is assigned to, named, or null (unassigned, or a person of a tenant outside the caller's tree). */
  async assignee(session: Session, investigation: Pick<Investigation, 'assigneeId'>, key: object): Promise<Assignee | null> {
    session.assert('investigations.read');
    if (!investigation.assigneeId) return null;
    const name = await this.names.nameOf(session, { kind: 'user', id: investigation.assigneeId }, key);
    return name === null ? null : { id: investigation.assigneeId, name };
  }

  /** The name of who answered, commented, changed or suppressed (ActorNames). */
  async actorName(session: Session, actor: { kind: string; id: string }, key: object): Promise<string | null> {
    session.assert('investigations.read');
    return this.names.nameOf(session, actor, key);
  }

  /**
   * The people an investigation of a tenant of the tree may be assigned to: active, of a role that
   * triages, of that tenant and, when the caller's own tenant is its parent, of the caller's too
   * (an MSP's staff work their children's investigations; a child is never shown its MSP's people).
   */
  async assignable(session: Session, customerId: string): Promise<Assignee[]> {
    await session.assertTenant('investigations.assignees', customerId);
    const tenants = customerId === session.customerId ? [customerId] : [customerId, session.customerId];
    return (await this.store.activePeopleWithRole(tenants, TRIAGE_ROLES)).map(assigneeOf);
  }

  /**
   * Records the answer. AUTHORIZED resolves the investigation as `authorized` and suppresses its
   * subject for `expiresInDays` (default 90); UNAUTHORIZED raises its severity one step, records
   * `investigation_confirmed` and keeps it in progress until someone resolves it.
   */
  async answer(session: Session, id: string, answer: TriageAnswer, rawNote: string | null | undefined, expiresInDays?: number | null): Promise<Investigation> {
    session.assert('investigations.triage');
    if (!ANSWERS.includes(answer)) throw invalid('answer', `answer must be one of ${ANSWERS.map(shown).join(', ')}`);
    const note = noteOf('note', rawNote, TRIAGE_LIMITS.note, false);
    const days = expiresInDays ?? TRIAGE_LIMITS.suppressionDays.default;
    if (!Number.isInteger(days) || days < 1 || days > TRIAGE_LIMITS.suppressionDays.max) {
      throw invalid('expiresInDays', `expiresInDays must be a whole number of days from 1 to ${TRIAGE_LIMITS.suppressionDays.max}`);
    }
    const found = await this.find(session, id);
    const actor = session.actor;
    const at = this.now();
    const expiresAt = new Date(at.getTime() + days * DAY_MS);
    const changed = await this.store.change(found.customerId, found.id, (current) => this.answerChange(current, { answer, note, actor, at, expiresAt }));
    if (!changed) throw investigationNotFound();
    const { before: inv, after: updated, suppression } = changed;

    const who = whoActed(actor);
    const summary = { ...who, detector: inv.detector, source: inv.source, destination: inv.destination, severity: updated.severity };
    await this.record(inv, 'triage', 'investigation_answered', { ...summary, answer, note, previous_answer: inv.answer });
    if (updated.triageStatus !== inv.triageStatus) await this.recordStatus(updated, inv.triageStatus, who);
    if (suppression) await this.recordSuppression('suppression_created', suppression, who);
    if (answer === 'unauthorized' && inv.answer !== 'unauthorized') {
      // What automation rules match to act on a confirmed intrusion (webhook, collector update).
      await this.record(inv, 'investigations', 'investigation_confirmed', {
        ...summary,
        disposition: inv.disposition,
        confidence: inv.confidence,
        headline: inv.headline,
        node_ids: inv.nodeIds,
        previous_severity: inv.severity,
        note,
      });
    }
    return updated;
  }

  /** Moves the triage status by the rules of TRANSITIONS; `resolution` with RESOLVED only, and then required. */
  async setStatus(session: Session, id: string, status: TriageStatus, resolution: TriageResolution | null | undefined): Promise<Investigation> {
    session.assert('investigations.triage');
    if (!TRIAGE_STATUSES.includes(status)) throw invalid('status', `status must be one of ${TRIAGE_STATUSES.map(shown).join(', ')}`);
    if (status === 'resolved' && !resolution) throw invalid('resolution', `resolution is required with RESOLVED: one of ${RESOLUTIONS.map(shown).join(', ')}`);
    if (status !== 'resolved' && resolution) throw invalid('resolution', 'resolution goes only with RESOLVED');
    if (resolution && !RESOLUTIONS.includes(resolution)) throw invalid('resolution', `resolution must be one of ${RESOLUTIONS.map(shown).join(', ')}`);
    const found = await this.find(session, id);
    const actor = session.actor;
    const at = this.now();
    const changed = await this.store.change(found.customerId, found.id, (current) => {
      const from = current.triageStatus;
      if (!canMove(from, status)) {
        const allowed = TRANSITIONS[from].map(shown).join(' or ');
        throw invalidTransition(from, status, `Investigation ${current.id} is ${shown(from)}: it cannot move to ${shown(status)}, only to ${allowed}`);
      }
      return {
        write: this.statusWrite(status, resolution ?? null, at),
        actor,
        entries: [this.statusEntry(from, status, resolution ?? null)],
        suppression: null,
      };
    });
    if (!changed) throw investigationNotFound();
    await this.recordStatus(changed.after, changed.before.triageStatus, whoActed(actor));
    return changed.after;
  }

  /** Hands the investigation to a person who can triage it (an analyst or admin who sees its tenant), or to nobody (null). */
  async assign(session: Session, id: string, userId: string | null): Promise<Investigation> {
    session.assert('investigations.triage');
    const found = await this.find(session, id);
    if (userId !== null && !(plausibleId(userId) && (await this.canTriage(userId, found.customerId)))) {
      throw invalid('userId', `userId must name an active analyst or admin who sees investigation ${found.id}`);
    }
    const actor = session.actor;
    const changed = await this.store.change(found.customerId, found.id, (current) => ({
      write: { assigneeId: userId },
      actor,
      entries: current.assigneeId === userId ? [] : [{ kind: 'assigned', data: { assignee_id: userId, previous_assignee_id: current.assigneeId } }],
      suppression: null,
    }));
    if (!changed) throw investigationNotFound();
    if (changed.before.assigneeId !== userId) {
      await this.record(changed.after, 'triage', 'investigation_assigned', {
        ...whoActed(actor),
        assignee_id: userId,
        previous_assignee_id: changed.before.assigneeId,
      });
    }
    return changed.after;
  }

  async comment(session: Session, id: string, rawText: string): Promise<InvestigationComment> {
    session.assert('investigations.triage');
    const text = noteOf('text', rawText, TRIAGE_LIMITS.comment, true)!;
    const inv = await this.find(session, id);
    const actor = session.actor;
    const comment = await this.store.addComment(inv.customerId, inv.id, actor, text, TRIAGE_LIMITS.commentsPerInvestigation);
    if (!comment) {
      throw conflict('comment_limit_reached', `Investigation ${inv.id} has ${TRIAGE_LIMITS.commentsPerInvestigation} comments, as many as one may have`);
    }
    // Events are summaries (events.md): the start of the text, the comment id for the rest.
    await this.record(inv, 'triage', 'investigation_commented', { ...whoActed(actor), comment_id: comment.id, text: text.slice(0, 500) });
    return comment;
  }

  /** A page of an investigation's comments, oldest first, with their total (the caller has read the investigation). */
  async comments(session: Session, investigationId: string, page: Page): Promise<{ items: InvestigationComment[]; total: number }> {
    session.assert('investigations.read');
    const scope = await session.tenantScope();
    const [items, total] = await Promise.all([this.store.comments(scope, investigationId, page), this.store.commentCount(scope, investigationId)]);
    return { items, total };
  }

  /** A page of an investigation's triage history, oldest first, with its total. */
  async activity(session: Session, investigationId: string, page: Page): Promise<{ items: InvestigationActivity[]; total: number }> {
    session.assert('investigations.read');
    const scope = await session.tenantScope();
    const [items, total] = await Promise.all([this.store.activity(scope, investigationId, page), this.store.activityCount(scope, investigationId)]);
    return { items, total };
  }

  /** A tenant's suppressions, newest first; `active` keeps those in force now (or, false, those that are not). */
  async suppressions(session: Session, customerId: string, args: SuppressionListArgs): Promise<{ items: Suppression[]; total: number; page: Page }> {
    const scope = await session.assertTenant('suppressions.read', customerId);
    const page = pageOf(args);
    const filter: SuppressionFilter = {
      ...(args.active != null ? { active: { value: args.active, at: this.now() } } : {}),
      ...(args.investigationId ? { investigationId: args.investigationId } : {}),
    };
    const [items, total] = await Promise.all([
      this.store.suppressions(scope, customerId, filter, page),
      this.store.suppressionCount(scope, customerId, filter),
    ]);
    return { items, total, page };
  }

  /** Revokes a suppression of the caller's tree (detection acts on its subject again); revoking a revoked one changes nothing. */
  async revokeSuppression(session: Session, id: string): Promise<Suppression> {
    session.assert('suppressions.write');
    const found = plausibleId(id) ? await this.store.findSuppression(await session.tenantScope(), id) : null;
    if (!found) throw notFound('not_found', 'Suppression not found');
    const actor = session.actor;
    const revoked = await this.store.revokeSuppression(found.customerId, found, actor, this.now());
    if (!revoked) return found;
    await this.recordSuppression('suppression_revoked', revoked, whoActed(actor));
    return revoked;
  }

  // --- helpers ---------------------------------------------------------------------------

  /** What an answer changes on the investigation as it is now (under its lock). */
  private answerChange(current: Investigation, a: { answer: TriageAnswer; note: string | null; actor: Actor; at: Date; expiresAt: Date }): TriageChange {
    if (current.triageStatus === 'resolved') {
      throw invalidTransition('resolved', 'answered', `Investigation ${current.id} is resolved; reopen it (status IN_PROGRESS) before answering again`);
    }
    const status = statusAfterAnswer(current.triageStatus, a.answer);
    const detectorSeverity = current.severity - current.severityRaise;
    const severityRaise = raiseFor(detectorSeverity, a.answer);
    const resolution = status === 'resolved' ? 'authorized' : null;
    const suppression = a.answer === 'authorized' ? this.suppressionOf(current, a.note, a.expiresAt) : null;
    const entries: ActivityEntry[] = [{ kind: 'answered', data: { answer: a.answer, note: a.note, previous_answer: current.answer } }];
    if (status !== current.triageStatus) entries.push(this.statusEntry(current.triageStatus, status, resolution));
    if (suppression) entries.push({ kind: 'suppressed', data: { suppression_id: suppression.id, expires_at: a.expiresAt.toISOString() } });
    const write: TriageWrite = {
      answer: a.answer,
      answerNote: a.note,
      answeredByKind: a.actor.kind,
      answeredById: a.actor.id,
      answeredAt: a.at,
      severity: detectorSeverity + severityRaise,
      severityRaise,
      ...this.statusWrite(status, resolution, a.at),
    };
    return { write, actor: a.actor, entries, suppression };
  }

  private async find(session: Session, id: string): Promise<Investigation> {
    const inv = plausibleId(id) ? await this.investigations.findFinished(await session.tenantScope(), id) : null;
    if (!inv) throw investigationNotFound();
    return inv;
  }

  private statusWrite(status: TriageStatus, resolution: TriageResolution | null, at: Date): TriageWrite {
    return { triageStatus: status, resolution: status === 'resolved' ? resolution : null, resolvedAt: status === 'resolved' ? at : null };
  }

  private statusEntry(from: TriageStatus, to: TriageStatus, resolution: TriageResolution | null): ActivityEntry {
    return { kind: from === 'resolved' ? 'reopened' : 'status_changed', data: { from, to, resolution } };
  }

  private suppressionOf(inv: Investigation, reason: string | null, expiresAt: Date): NewSuppression {
    if (inv.source === null || inv.destination === null) {
      throw invalid('answer', `Investigation ${inv.id} names no source and destination, so AUTHORIZED has nothing to suppress`);
    }
    return { id: newId('sup'), detector: inv.detector, source: inv.source, destination: inv.destination, reason, expiresAt };
  }

  private recordStatus(inv: Investigation, from: TriageStatus, who: Record<string, string>) {
    return this.record(inv, 'triage', 'investigation_status_changed', { ...who, from, to: inv.triageStatus, resolution: inv.resolution });
  }

  private recordSuppression(kind: 'suppression_created' | 'suppression_revoked', s: Suppression, who: Record<string, string>) {
    return this.events.record({
      customerId: s.customerId,
      topic: 'suppressions',
      kind,
      subject: s.id,
      data: {
        ...who,
        detector: s.detector,
        source: s.source,
        destination: s.destination,
        investigation_id: s.investigationId,
        expires_at: s.expiresAt.toISOString(),
      },
    });
  }

  private record<T extends 'triage' | 'investigations'>(
    inv: Investigation,
    topic: T,
    kind: Extract<NewEvent, { topic: T }>['kind'],
    data: Record<string, unknown>,
  ) {
    return this.events.record({ customerId: inv.customerId, topic, kind, subject: inv.id, data } as NewEvent);
  }
}
