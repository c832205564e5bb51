import type { Event } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { EVENT_LIMITS, type EventPage, type TopicSummary } from './events.service.js';
import { topicNames } from './topics.js';

export const EventRecordRef = builder.objectRef<Event>('EventRecord').implement({
  description: 'Something that happened in a tenant (docs/events.md).',
  fields: (t) => ({
    eventId: t.exposeString('id'),
    customerId: t.exposeString('customerId', { description: 'The tenant it happened in.' }),
    topic: t.exposeString('topic', { description: `One of ${topicNames.join(', ')}.` }),
    kind: t.exposeString('kind', { description: 'What happened, e.g. `node_connected`; the kinds of each topic are listed by `eventTopics`.' }),
    subject: t.exposeString('subject', { nullable: true, description: 'The id of what it is about (a node, an investigation, a run...).' }),
    data: t.expose('data', { type: 'JSON', description: 'Details, snake_case; per kind in docs/events.md.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const EventTopicRef = builder.objectRef<TopicSummary>('EventTopic').implement({
  fields: (t) => ({
    topic: t.exposeString('topic'),
    description: t.exposeString('description'),
    kinds: t.stringList({ resolve: (s) => [...s.kinds] }),
    count: t.exposeInt('count', { description: 'Events of the tenant on this topic (within the retention).' }),
    latestAt: t.expose('latestAt', { type: 'DateTime', nullable: true, description: 'When the newest one happened; null when none.' }),
  }),
});

const EventTopicsRef = builder.objectRef<{ customerId: string; topics: TopicSummary[] }>('EventTopics').implement({
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    topics: t.field({ type: [EventTopicRef], resolve: (r) => r.topics }),
  }),
});

const EventRecordPageRef = builder.objectRef<EventPage>('EventRecordPage').implement({
  description: 'One page of a topic, newest first. More follow while `offset + events.length < total`.',
  fields: (t) => ({
    customerId: t.exposeString('customerId'),
    topic: t.exposeString('topic'),
    events: t.field({ type: [EventRecordRef], resolve: (p) => p.events }),
    total: t.exposeInt('total'),
    limit: t.exposeInt('limit'),
    offset: t.exposeInt('offset', { description: 'Events before this page (also when paging by cursor).' }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
});

builder.queryFields((t) => ({
  eventTopics: t.field({
    type: EventTopicsRef,
    description: "Every event topic with the tenant's count and latest time. Needs search_api; 404 `not_found` outside the caller's tree.",
    args: { customerId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.events.topics(await ctx.auth.requireSession(), args.customerId),
  }),
  eventRecords: t.field({
    type: EventRecordPageRef,
    description: 'The events of one topic of a tenant, newest first. 404 `not_found` for an unknown topic or a tenant outside the tree.',
    args: {
      customerId: t.arg.string({ required: true }),
      topic: t.arg.string({ required: true }),
      kind: t.arg.string({ required: false, description: 'Only this kind.' }),
      limit: t.arg.int({ required: false, description: `Default ${EVENT_LIMITS.page.default}, clamped to ${EVENT_LIMITS.page.min}–${EVENT_LIMITS.page.max}.` }),
      offset: t.arg.int({ required: false, description: 'Events to skip; not with `cursor`.' }),
      cursor: t.arg.string({ required: false, description: 'The `nextCursor` of the previous page.' }),
    },
    resolve: async (_root, { customerId, topic, ...page }, ctx) => ctx.services.events.list(await ctx.auth.requireSession(), customerId, topic, page),
  }),
}));

builder.subscriptionFields((t) => ({
  events: t.field({
    type: EventRecordRef,
    description:
      'Events of a tenant (optionally one topic) as they are recorded, from any server process. Access is checked at subscribe time; the socket closes (4401) when its token expires or its client is revoked.',
    args: { customerId: t.arg.string({ required: true }), topic: t.arg.string({ required: false }) },
    subscribe: async (_root, args, ctx) => ctx.services.events.watch(await ctx.auth.requireSession(), args.customerId, args.topic),
    resolve: (event) => event,
  }),
}));
