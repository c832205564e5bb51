import { PothosValidationError } from '@pothos/core';
import { type DefaultConnectionArguments, resolveOffsetConnection } from '@pothos/plugin-relay';
import type { Investigation, InvestigationActivity, InvestigationComment, Suppression } from '../../generated/prisma/client.js';
import type { Session } from '../../auth/session.js';
import type { Context } from '../../context.js';
import { badRequest, notFound } from '../../errors.js';
import { builder } from '../../graphql/builder.js';
import type { InvestigationSelection } from './investigations.store.js';
import { TRIAGE_LIMITS } from './triage.model.js';
import type { Assignee } from './triage.service.js';
import type { Page } from './triage.store.js';

// GraphQL spells the values in capitals; the database, events and services in lower case.
export const TriageStatusEnum = builder.enumType('TriageStatus', {
  description: 'NEW → ACKNOWLEDGED → IN_PROGRESS → RESOLVED, forward only (skipping allowed); a RESOLVED one is reopened to IN_PROGRESS.',
  values: {
    NEW: { value: 'new' },
    ACKNOWLEDGED: { value: 'acknowledged' },
    IN_PROGRESS: { value: 'in_progress' },
    RESOLVED: { value: 'resolved' },
  } as const,
});

export const TriageAnswerEnum = builder.enumType('TriageAnswer', {
  description: 'The answer to "was this activity authorized?".',
  values: {
    AUTHORIZED: { value: 'authorized', description: 'Resolves the investigation as AUTHORIZED and suppresses its subject.' },
    UNAUTHORIZED: { value: 'unauthorized', description: 'Raises severity one step, records `investigation_confirmed`; in progress until resolved.' },
    UNSURE: { value: 'unsure', description: 'Recorded; a NEW investigation becomes ACKNOWLEDGED.' },
  } as const,
});

const TriageResolutionEnum = builder.enumType('TriageResolution', {
  values: {
    AUTHORIZED: { value: 'authorized' },
    MALICIOUS: { value: 'malicious' },
    FALSE_POSITIVE: { value: 'false_positive' },
    DUPLICATE: { value: 'duplicate' },
  } as const,
});

interface ActorShape {
  kind: string;
  id: string;
}
const actorOf = (kind: string | null, id: string | null): ActorShape | null => (kind && id ? { kind, id } : null);

const TriageActorRef = builder.objectRef<ActorShape>('TriageActor').implement({
  description: 'Who acted: a person (`user`) or an API client (`client`).',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '`user` or `client`.' }),
    id: t.exposeString('id', { description: 'The user id or the client id.' }),
    name: t.string({
      nullable: true,
      description:
        "A person's display name (else their email's local part), an API client's description; null for one outside the reader's tree (a child is not shown its MSP's people) or a client without a description.",
      resolve: async (actor, _args, ctx) => ctx.services.triage.actorName(await ctx.auth.requireSession(), actor, ctx),
    }),
  }),
});

type TriageShape = Pick<
  Investigation,
  'triageStatus' | 'resolution' | 'resolvedAt' | 'answer' | 'answerNote' | 'answeredByKind' | 'answeredById' | 'answeredAt' | 'assigneeId' | 'severityRaise'
>;

const TriageRef = builder.objectRef<TriageShape>('InvestigationTriage').implement({
  description: 'What people and API clients made of an investigation (docs/triage.md).',
  fields: (t) => ({
    status: t.expose('triageStatus', { type: TriageStatusEnum }),
    resolution: t.expose('resolution', { type: TriageResolutionEnum, nullable: true, description: 'Set while RESOLVED.' }),
    resolvedAt: t.expose('resolvedAt', { type: 'DateTime', nullable: true }),
    answer: t.expose('answer', { type: TriageAnswerEnum, nullable: true, description: 'Null until someone answers.' }),
    note: t.exposeString('answerNote', { nullable: true, description: "The answer's note." }),
    answeredBy: t.field({ type: TriageActorRef, nullable: true, resolve: (i) => actorOf(i.answeredByKind, i.answeredById) }),
    answeredAt: t.expose('answeredAt', { type: 'DateTime', nullable: true }),
    assigneeId: t.exposeString('assigneeId', { nullable: true, description: 'The person it is assigned to.' }),
    severityRaise: t.exposeInt('severityRaise', { description: 'Points an UNAUTHORIZED answer added to the severity (0 otherwise).' }),
  }),
});

const CommentRef = builder.objectRef<InvestigationComment>('InvestigationComment').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    author: t.field({ type: TriageActorRef, resolve: (c) => ({ kind: c.actorKind, id: c.actorId }) }),
    text: t.exposeString('text'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const ActivityRef = builder.objectRef<InvestigationActivity>('InvestigationActivityEntry').implement({
  description: 'One entry of the triage history.',
  fields: (t) => ({
    id: t.exposeString('id'),
    kind: t.exposeString('kind', {
      description: '`answered`, `status_changed`, `reopened`, `commented`, `suppressed`, `suppression_revoked` or `assigned`.',
    }),
    actor: t.field({ type: TriageActorRef, resolve: (a) => ({ kind: a.actorKind, id: a.actorId }) }),
    assignee: t.field({
      type: TriageActorRef,
      nullable: true,
      description: 'On an `assigned` entry, the person it was assigned to (`data.assignee_id`); null otherwise and when unassigned.',
      resolve: (a) => {
        const id = a.kind === 'assigned' ? (a.data as { assignee_id?: unknown } | null)?.assignee_id : undefined;
        return typeof id === 'string' ? { kind: 'user', id } : null;
      },
    }),
    data: t.field({ type: 'JSON', description: 'Per kind (docs/triage.md), snake_case keys.', resolve: (a) => a.data }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const SuppressionRef = builder.objectRef<Suppression>('Suppression').implement({
  description: "A subject detection leaves alone: one detector's episodes from a source to a destination, until it expires or is revoked.",
  fields: (t) => ({
    id: t.exposeString('id'),
    customerId: t.exposeString('customerId'),
    detector: t.exposeString('detector'),
    source: t.exposeString('source'),
    destination: t.exposeString('destination'),
    reason: t.exposeString('reason', { nullable: true, description: "The AUTHORIZED answer's note." }),
    investigationId: t.exposeString('investigationId', { nullable: true, description: 'The investigation whose answer created it.' }),
    createdBy: t.field({ type: TriageActorRef, resolve: (s) => ({ kind: s.actorKind, id: s.actorId }) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    revokedBy: t.field({ type: TriageActorRef, nullable: true, resolve: (s) => actorOf(s.revokedByKind, s.revokedById) }),
    active: t.boolean({ description: 'In force now: neither revoked nor expired.', resolve: (s) => s.revokedAt === null && s.expiresAt > new Date() }),
  }),
});

const pageArgs = `At most ${TRIAGE_LIMITS.page.max} a page (default ${TRIAGE_LIMITS.page.default}).`;

/**
 * One page of an offset connection with its total (for `totalCount`). The relay plugin's own
 * argument errors (a negative `first`, a cursor it did not issue) become 400s, not masked 500s.
 */
async function countedPage<T extends object>(args: DefaultConnectionArguments, load: (page: Page) => Promise<{ items: T[]; total: number }>) {
  let totalCount = 0;
  try {
    const connection = await resolveOffsetConnection({ args, defaultSize: TRIAGE_LIMITS.page.default, maxSize: TRIAGE_LIMITS.page.max }, async (page) => {
      const { items, total } = await load(page);
      totalCount = total;
      return items;
    });
    return { ...connection, totalCount };
  } catch (error) {
    if (!(error instanceof PothosValidationError)) throw error;
    // `first`/`last` errors name their argument; the others come from decoding `after`/`before`.
    if (error.message.startsWith('Argument')) throw badRequest('invalid_request', error.message);
    throw badRequest('invalid_cursor', 'after/before is not a cursor this server issued; pass pageInfo.endCursor or startCursor as given');
  }
}

const AssigneeRef = builder.objectRef<Assignee>('Assignee').implement({
  description: 'A person as anyone who reads an investigation may see them: an id and a name.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The user id (`triage.assigneeId`).' }),
    name: t.exposeString('name', { description: "The person's display name, else the local part of their email." }),
  }),
});

builder.prismaObjectFields('Investigation', (t) => ({
  assignee: t.field({
    type: AssigneeRef,
    nullable: true,
    description: "The person it is assigned to; null when unassigned, or when that person's tenant is outside the caller's tree.",
    select: { assigneeId: true },
    resolve: async (i, _args, ctx) => ctx.services.triage.assignee(await ctx.auth.requireSession(), i, ctx),
  }),
  triage: t.field({
    type: TriageRef,
    select: {
      triageStatus: true,
      resolution: true,
      resolvedAt: true,
      answer: true,
      answerNote: true,
      answeredByKind: true,
      answeredById: true,
      answeredAt: true,
      assigneeId: true,
      severityRaise: true,
    },
    resolve: (i) => i,
  }),
  comments: t.connection(
    {
      type: CommentRef,
      description: `Comments, oldest first. ${pageArgs}`,
      resolve: async (i, args, ctx) => {
        const session = await ctx.auth.requireSession();
        return countedPage(args, (page) => ctx.services.triage.comments(session, i.id, page));
      },
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (page) => (page as { totalCount: number }).totalCount }) }) },
  ),
  activity: t.connection(
    {
      type: ActivityRef,
      description: `The triage history, oldest first: answers, status changes, comments, suppressions. ${pageArgs}`,
      resolve: async (i, args, ctx) => {
        const session = await ctx.auth.requireSession();
        return countedPage(args, (page) => ctx.services.triage.activity(session, i.id, page));
      },
    },
    { fields: (c) => ({ totalCount: c.int({ resolve: (page) => (page as { totalCount: number }).totalCount }) }) },
  ),
}));

interface SuppressionPageShape {
  items: Suppression[];
  total: number;
  page: { limit: number; offset: number };
}

const SuppressionPageRef = builder.objectRef<SuppressionPageShape>('SuppressionPage').implement({
  fields: (t) => ({
    suppressions: t.field({ type: [SuppressionRef], resolve: (p) => p.items }),
    total: t.exposeInt('total'),
    limit: t.int({ resolve: (p) => p.page.limit }),
    offset: t.int({ resolve: (p) => p.page.offset }),
  }),
});

builder.queryFields((t) => ({
  assignablePeople: t.field({
    type: [AssigneeRef],
    description:
      'The people of a tenant of the tree its investigations may be assigned to: active analysts and admins of that tenant and, asked by its MSP, of the MSP; by email (analyst role; 404 `not_found` outside the tree).',
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.triage.assignable(await ctx.auth.requireSession(), args.customerId),
  }),
  suppressions: t.field({
    type: SuppressionPageRef,
    description: 'Suppressions of a tenant of the tree, newest first (search_api scope).',
    args: {
      customerId: t.arg.string({ required: true }),
      active: t.arg.boolean({ required: false, description: 'True: only those in force now; false: only revoked or expired ones.' }),
      investigationId: t.arg.string({ required: false, description: 'Only the one this investigation created.' }),
      limit: t.arg.int({ required: false, description: `1..${TRIAGE_LIMITS.page.max} (clamped), default ${TRIAGE_LIMITS.page.default}.` }),
      offset: t.arg.int({ required: false }),
    },
    resolve: async (_root, args, ctx) => ctx.services.triage.suppressions(await ctx.auth.requireSession(), args.customerId, args),
  }),
}));

/** Makes a triage change, then reads the investigation back with the selection the mutation's caller asked for. */
async function changed(ctx: Context, select: InvestigationSelection, change: (session: Session) => Promise<Investigation>): Promise<Investigation> {
  const session = await ctx.auth.requireSession();
  const { id } = await change(session);
  const row = await ctx.services.investigations.find(session, id, select);
  // Gone between the change and the read (its tenant deleted meanwhile).
  if (!row) throw notFound('not_found', 'Investigation not found');
  return row;
}

builder.mutationFields((t) => ({
  answerInvestigation: t.prismaField({
    type: 'Investigation',
    description:
      'Answers "was this activity authorized?" (docs/triage.md). 404 `not_found` outside the tree; 409 `invalid_transition` when it is RESOLVED (reopen it first).',
    args: {
      id: t.arg.string({ required: true }),
      answer: t.arg({ type: TriageAnswerEnum, required: true }),
      note: t.arg.string({ required: false, description: `At most ${TRIAGE_LIMITS.note} characters; the suppression's reason with AUTHORIZED.` }),
      expiresInDays: t.arg.int({
        required: false,
        description: `With AUTHORIZED: how long the suppression lasts, 1..${TRIAGE_LIMITS.suppressionDays.max} days (default ${TRIAGE_LIMITS.suppressionDays.default}).`,
      }),
    },
    resolve: (select, _root, args, ctx) =>
      changed(ctx, select, (session) => ctx.services.triage.answer(session, args.id, args.answer, args.note, args.expiresInDays)),
  }),
  setInvestigationStatus: t.prismaField({
    type: 'Investigation',
    description: 'Moves the triage status (TriageStatus says where it may go); `resolution` is required with RESOLVED and refused otherwise.',
    args: {
      id: t.arg.string({ required: true }),
      status: t.arg({ type: TriageStatusEnum, required: true }),
      resolution: t.arg({ type: TriageResolutionEnum, required: false }),
    },
    resolve: (select, _root, args, ctx) => changed(ctx, select, (session) => ctx.services.triage.setStatus(session, args.id, args.status, args.resolution)),
  }),
  assignInvestigation: t.prismaField({
    type: 'Investigation',
    description:
      'Hands the investigation to a person (an active analyst or admin who sees its tenant: 400 `invalid_request` otherwise), or to nobody with `userId: null`.',
    args: { id: t.arg.string({ required: true }), userId: t.arg.string({ required: false }) },
    resolve: (select, _root, args, ctx) => changed(ctx, select, (session) => ctx.services.triage.assign(session, args.id, args.userId ?? null)),
  }),
  commentOnInvestigation: t.field({
    type: CommentRef,
    description: `Adds a comment (1..${TRIAGE_LIMITS.comment} characters; at most ${TRIAGE_LIMITS.commentsPerInvestigation} per investigation).`,
    args: { id: t.arg.string({ required: true }), text: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.triage.comment(await ctx.auth.requireSession(), args.id, args.text),
  }),
  revokeSuppression: t.field({
    type: SuppressionRef,
    description: 'Revokes a suppression of the tree: detection acts on its subject again. Revoking a revoked one changes nothing.',
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.triage.revokeSuppression(await ctx.auth.requireSession(), args.id),
  }),
}));
