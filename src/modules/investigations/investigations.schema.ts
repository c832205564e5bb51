import type { Session } from '../../auth/session.js';
import { foundNothingOr } from '../../graphql/unused-query.js';
import { builder } from '../../graphql/builder.js';
import { NodeRef } from '../nodes/nodes.schema.js';
import {
  ANALYSIS_VERSION,
  type Analysis,
  type AtAGlance,
  type AttackRef,
  type DecisionSupport,
  type HostValue,
  type InvestigationMeta,
  type KeyFinding,
  type OpenQuestion,
  type Provenance,
  type ProvenanceActor,
  type ProvenanceLeg,
  type RecommendedAction,
  type TimelineEvent,
  type TrafficLink,
  type Trigger,
  type TriggerSignal,
  type Verdict,
} from './investigation.model.js';
import { type ListQuery, TRAFFIC_LINK_SEARCHES_PER_REQUEST } from './investigations.service.js';
import { TriageAnswerEnum, TriageStatusEnum } from './triage.schema.js';

/** Links carry their investigation's tenant, so that `flows` can replay the search for it. */
type LinkParent = TrafficLink & { customerId: string };
type FindingParent = KeyFinding & { customerId: string };

const analysisOf = (i: { analysis: unknown }) => (i.analysis ?? null) as Analysis | null;

const TriggerSignalRef = builder.objectRef<TriggerSignal>('TriggerSignal').implement({
  description: "The detector's quantified reason for flagging; docs/detections.md defines each per detector.",
  fields: (t) => ({
    volumeBytes: t.exposeFloat('volumeBytes', { nullable: true, description: 'Bytes involved (an integer).' }),
    anomalyScore: t.exposeFloat('anomalyScore', { nullable: true, description: 'How far past the threshold the deciding measure is, 0..1.' }),
    surprise: t.exposeFloat('surprise', { nullable: true, description: 'Doublings of the deciding count over its threshold (log2).' }),
    mismatch: t.exposeFloat('mismatch', { nullable: true, description: "The detector's shape measure (gap variation, up/down ratio, failed share...)." }),
  }),
});

const TriggerRef = builder.objectRef<Trigger>('InvestigationTrigger').implement({
  fields: (t) => ({
    source: t.exposeString('source', { nullable: true }),
    destination: t.exposeString('destination', { nullable: true }),
    detectedAt: t.exposeString('detectedAt', { nullable: true, description: 'ISO 8601.' }),
    signal: t.expose('signal', { type: TriggerSignalRef }),
  }),
});

const VerdictRef = builder.objectRef<Verdict>('InvestigationVerdict').implement({
  fields: (t) => ({
    disposition: t.exposeString('disposition', { description: '`benign`, `malicious` or `escalate`.' }),
    confidence: t.exposeFloat('confidence', { description: '0..1.' }),
    headline: t.exposeString('headline'),
    rationale: t.exposeString('rationale'),
  }),
});

const AtAGlanceRef = builder.objectRef<AtAGlance>('AtAGlance').implement({
  fields: (t) => ({
    known: t.exposeString('known'),
    unknown: t.exposeString('unknown', { nullable: true }),
    therefore: t.exposeString('therefore'),
  }),
});

const TimelineEventRef = builder.objectRef<TimelineEvent>('InvestigationTimelineEvent');
TimelineEventRef.implement({
  fields: (t) => ({
    at: t.exposeString('at', { description: 'ISO 8601.' }),
    label: t.exposeString('label'),
    children: t.field({ type: [TimelineEventRef], resolve: (e) => e.children ?? [] }),
  }),
});

const TrafficLinkRef = builder.objectRef<LinkParent>('TrafficLink').implement({
  fields: (t) => ({
    label: t.exposeString('label'),
    rationale: t.exposeString('rationale', { nullable: true }),
    query: t.field({
      type: 'JSON',
      nullable: true,
      description: 'A flow search without the tenant: `{query, start, end}`, replayed as `{instance_ids, sentence: query, start, end}`.',
      resolve: (l) => l.query,
    }),
    flows: t.field({
      type: ['JSON'],
      // Nullable: a search that fails (its deadline, the request's budget) nulls this field only.
      nullable: true,
      description:
        'The flows the search finds, oldest first (the same records search returns). Null with an error when the search fails: ' +
        `504 \`query_timeout\`, or 400 \`too_many_searches\` past ${TRAFFIC_LINK_SEARCHES_PER_REQUEST} traffic-link searches in one request (docs/detections.md).`,
      args: { size: t.arg.int({ required: false, description: '1..1000, default 25.' }) },
      resolve: async (l, args, ctx) =>
        l.query ? ctx.services.investigations.linkedFlows(await ctx.auth.requireSession(), ctx, l.customerId, l.query, args.size ?? 25) : [],
    }),
  }),
});

const KeyFindingRef = builder.objectRef<FindingParent>('KeyFinding').implement({
  fields: (t) => ({
    headline: t.exposeString('headline'),
    observation: t.exposeString('observation'),
    significance: t.exposeString('significance'),
    role: t.exposeString('role', { nullable: true, description: '`decisive`, `supporting`, `ambiguous`, `context` or `data_gap`.' }),
    importance: t.exposeString('importance', { nullable: true, description: '`high`, `medium` or `low`.' }),
    rulesOut: t.exposeStringList('rulesOut'),
    confirms: t.exposeStringList('confirms'),
    timeline: t.expose('timeline', { type: [TimelineEventRef], nullable: true }),
    trafficLinks: t.field({
      type: [TrafficLinkRef],
      nullable: true,
      resolve: (f) => f.trafficLinks?.map((l) => ({ ...l, customerId: f.customerId })) ?? null,
    }),
  }),
});

const HostValueRef = builder.objectRef<HostValue>('HostValue').implement({
  fields: (t) => ({
    role: t.exposeString('role'),
    value: t.exposeString('value', { description: '`low`, `moderate` or `high`.' }),
    reach: t.exposeString('reach', { nullable: true }),
  }),
});

const ActorRef = builder.objectRef<ProvenanceActor>('ProvenanceActor').implement({
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '`human`, `account`, `process`, `source_ip`, `tool`, `path` or `destination`.' }),
    label: t.exposeString('label'),
    detail: t.exposeString('detail', { nullable: true }),
  }),
});

const AttackRefRef = builder.objectRef<AttackRef>('AttackReference').implement({
  description: 'A MITRE ATT&CK (Enterprise) technique.',
  fields: (t) => ({
    tactic: t.exposeString('tactic'),
    techniqueId: t.exposeString('techniqueId', { description: 'e.g. `T1071.001`.' }),
    technique: t.exposeString('technique'),
  }),
});

const LegRef = builder.objectRef<ProvenanceLeg>('ProvenanceLeg').implement({
  fields: (t) => ({
    stage: t.exposeString('stage', { description: '`access`, `identity`, `execution`, `collection`, `exfiltration`, `lateral` or `command_and_control`.' }),
    title: t.exposeString('title'),
    headline: t.exposeString('headline'),
    detail: t.exposeString('detail', { nullable: true }),
    confidence: t.exposeString('confidence', { description: '`directly_observed`, `inferred` or `not_established`.' }),
    gapReason: t.exposeString('gapReason', { nullable: true }),
    at: t.exposeString('at', { nullable: true, description: 'ISO 8601.' }),
    actors: t.expose('actors', { type: [ActorRef] }),
    attack: t.expose('attack', { type: [AttackRefRef] }),
    pivotKeys: t.exposeStringList('pivotKeys'),
  }),
});

const ProvenanceRef = builder.objectRef<Provenance>('Provenance').implement({
  fields: (t) => ({
    available: t.exposeBoolean('available'),
    unavailableReason: t.exposeString('unavailableReason', { nullable: true }),
    headline: t.exposeString('headline', { nullable: true }),
    host: t.exposeString('host', { nullable: true }),
    completeness: t.exposeFloat('completeness', { description: 'Share of the legs directly observed, 0..1.' }),
    hostValue: t.expose('hostValue', { type: HostValueRef, nullable: true }),
    legs: t.expose('legs', { type: [LegRef] }),
  }),
});

const OpenQuestionRef = builder.objectRef<OpenQuestion>('OpenQuestion').implement({
  fields: (t) => ({
    question: t.exposeString('question'),
    neededData: t.exposeString('neededData', { nullable: true }),
    priority: t.exposeString('priority', { nullable: true, description: '`highest`, `high`, `medium` or `low`.' }),
  }),
});

const ActionRef = builder.objectRef<RecommendedAction>('RecommendedAction').implement({
  fields: (t) => ({
    timeframe: t.exposeString('timeframe', { description: '`immediately`, `within_1h`, `within_4h`, `within_24h`...' }),
    action: t.exposeString('action'),
  }),
});

const DecisionSupportRef = builder.objectRef<DecisionSupport>('DecisionSupport').implement({
  fields: (t) => ({
    confidenceLimits: t.exposeString('confidenceLimits', { nullable: true }),
    whatWouldChangeTheVerdict: t.exposeString('whatWouldChangeTheVerdict', { nullable: true }),
    openQuestions: t.expose('openQuestions', { type: [OpenQuestionRef], description: 'Always starts with whether the activity was authorized.' }),
    recommendedActions: t.expose('recommendedActions', { type: [ActionRef] }),
  }),
});

const MetaRef = builder.objectRef<InvestigationMeta>('InvestigationMeta').implement({
  fields: (t) => ({
    generatedAt: t.exposeString('generatedAt', { nullable: true, description: 'ISO 8601.' }),
    aiGenerated: t.exposeBoolean('aiGenerated', { description: 'False: the analysis is rule-based.' }),
    analysisVersion: t.exposeString('analysisVersion', { nullable: true }),
  }),
});

/** A failed analysis still answers every required field (wire.md 16). */
const AUTHORIZED_QUESTION: OpenQuestion = { question: 'Was this activity authorized?', neededData: null, priority: 'highest' };
const noSignal: TriggerSignal = { volumeBytes: null, anomalyScore: null, surprise: null, mismatch: null };

builder.prismaObject('Investigation', {
  description: 'An investigation a detector opened (wire.md 8.3; docs/detections.md).',
  // Select mode: a list reads only the columns its fields need, never the analysis document.
  select: { id: true },
  fields: (t) => ({
    id: t.exposeString('id'),
    customerId: t.exposeString('customerId', { description: 'The tenant the activity happened in.' }),
    detector: t.exposeString('detector', { description: '`beacon`, `exfil`, `scan`, `bruteforce` or `dns-tunnel`.' }),
    status: t.exposeString('status', { description: '`running` while analysis is in progress, then `completed` or `failed`.' }),
    disposition: t.exposeString('disposition', { nullable: true, description: "The verdict's disposition; null until analysed." }),
    confidence: t.exposeFloat('confidence', { nullable: true }),
    severity: t.exposeInt('severity', { description: '0..100; the default list order.' }),
    headline: t.exposeString('headline', { nullable: true }),
    source: t.exposeString('source', { nullable: true, description: "The acting host's address." }),
    destination: t.exposeString('destination', { nullable: true, description: 'An organization, network, address or domain.' }),
    tags: t.exposeStringList('tags'),
    relatedAlertsCount: t.exposeInt('relatedAlertsCount', { description: 'Flows of the episode that raised IDS alerts.' }),
    detectedAt: t.expose('detectedAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    firstActivityAt: t.expose('firstActivityAt', { type: 'DateTime' }),
    lastActivityAt: t.expose('lastActivityAt', { type: 'DateTime' }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true, description: "Set once the activity has been quiet for the detector's quiet period." }),
    active: t.boolean({ select: { closedAt: true }, resolve: (i) => i.closedAt === null }),
    evidence: t.field({
      type: 'JSON',
      select: { evidence: true },
      description: "The detector's episode: measurements, facts and activity.",
      resolve: (i) => i.evidence,
    }),
    trigger: t.field({
      type: TriggerRef,
      select: { analysis: true, source: true, destination: true, detectedAt: true },
      resolve: (i) => analysisOf(i)?.trigger ?? { source: i.source, destination: i.destination, detectedAt: i.detectedAt.toISOString(), signal: noSignal },
    }),
    verdict: t.field({ type: VerdictRef, nullable: true, select: { analysis: true }, resolve: (i) => analysisOf(i)?.verdict ?? null }),
    atAGlance: t.field({ type: AtAGlanceRef, nullable: true, select: { analysis: true }, resolve: (i) => analysisOf(i)?.atAGlance ?? null }),
    keyFindings: t.field({
      type: [KeyFindingRef],
      select: { analysis: true, customerId: true },
      resolve: (i) => (analysisOf(i)?.keyFindings ?? []).map((f) => ({ ...f, customerId: i.customerId })),
    }),
    provenance: t.field({ type: ProvenanceRef, nullable: true, select: { analysis: true }, resolve: (i) => analysisOf(i)?.provenance ?? null }),
    decisionSupport: t.field({
      type: DecisionSupportRef,
      select: { analysis: true },
      resolve: (i) =>
        analysisOf(i)?.decisionSupport ?? {
          confidenceLimits: null,
          whatWouldChangeTheVerdict: null,
          openQuestions: [AUTHORIZED_QUESTION],
          recommendedActions: [],
        },
    }),
    meta: t.field({
      type: MetaRef,
      select: { analysis: true },
      resolve: (i) => analysisOf(i)?.meta ?? { generatedAt: null, aiGenerated: false, analysisVersion: ANALYSIS_VERSION },
    }),
    sourceNode: t.field({
      type: NodeRef,
      nullable: true,
      description: 'The collector running on the source host, when it has one (scope `p.token.scope.node_api`).',
      select: { customerId: true, source: true },
      resolve: async (i, _args, ctx) => ctx.services.investigations.sourceNode(await ctx.auth.requireSession(), i, ctx),
    }),
    observedBy: t.field({
      type: [NodeRef],
      // Nullable like sourceNode: without node_api only this field is refused, not the investigation.
      nullable: true,
      description: 'The collectors whose flows show the activity (scope `p.token.scope.node_api`); null with an `authorization_error` without it.',
      select: { customerId: true, nodeIds: true },
      resolve: async (i, _args, ctx) => ctx.services.investigations.observers(await ctx.auth.requireSession(), i, ctx),
    }),
  }),
});

interface PageParent {
  session: Session;
  query: ListQuery;
}

const InvestigationPageRef = builder.objectRef<PageParent>('InvestigationPage').implement({
  description: 'One page of investigations (wire.md 8.1).',
  fields: (t) => ({
    investigations: t.prismaField({
      type: ['Investigation'],
      resolve: async (select, page, _args, ctx) => foundNothingOr(select, await ctx.services.investigations.list(page.session, page.query, select)),
    }),
    total: t.int({
      description: 'Investigations matching the filters.',
      resolve: (page, _args, ctx) => ctx.services.investigations.total(page.session, page.query),
    }),
    limit: t.int({ resolve: (page) => page.query.limit }),
    offset: t.int({ resolve: (page) => page.query.offset }),
  }),
});

builder.queryFields((t) => ({
  investigations: t.field({
    type: InvestigationPageRef,
    description: 'Investigations of the caller and its children (search_api scope). 400 `invalid_request` names a bad argument.',
    args: {
      limit: t.arg.int({ required: false, description: '1..200 (clamped), default 50.' }),
      offset: t.arg.int({ required: false, description: 'Default 0.' }),
      disposition: t.arg.string({ required: false, description: '`benign`, `malicious` or `escalate`.' }),
      minConfidence: t.arg.float({ required: false, description: '0..1: verdicts with at least this confidence.' }),
      since: t.arg.string({ required: false, description: 'ISO 8601: created at or after.' }),
      until: t.arg.string({ required: false, description: 'ISO 8601: created at or before.' }),
      sort: t.arg.string({
        required: false,
        description:
          '`severity` (default: most severe first), `recent`, `triage_status` (NEW first), `answer` (UNAUTHORIZED first, unanswered last) or `assignee` (unassigned last); ties most severe first.',
      }),
      triageStatus: t.arg({ type: TriageStatusEnum, required: false }),
      open: t.arg.boolean({
        required: false,
        description:
          'true: the investigations not yet resolved (triage status NEW, ACKNOWLEDGED or IN_PROGRESS); false: the RESOLVED ones; default: both. With `triageStatus`, both apply.',
      }),
      answer: t.arg({ type: TriageAnswerEnum, required: false }),
      assigneeId: t.arg.string({ required: false, description: 'Assigned to this person.' }),
      customerId: t.arg.string({ required: false, description: "One tenant of the caller's tree (404 `not_found` outside it); default: the whole tree." }),
    },
    resolve: async (_root, args, ctx) => {
      const session = await ctx.auth.requireSession();
      return { session, query: ctx.services.investigations.query(session, args) };
    },
  }),
  investigation: t.prismaField({
    type: 'Investigation',
    nullable: true,
    description: "An investigation of the caller's tree whose analysis has finished; null otherwise (also while it is `running`).",
    args: { id: t.arg.string({ required: true }) },
    resolve: async (select, _root, args, ctx) =>
      foundNothingOr(select, await ctx.services.investigations.find(await ctx.auth.requireSession(), args.id, select)),
  }),
}));
