/**
 * Flow search in GraphQL (docs/search.md). Typed fields for GraphQL clients — `flows` (a cursor
 * connection), `flowAggregate`, `flowTimeseries` — and the two wire fields rest-compat runs for
 * POST /search/records/1.0 and /search/agg/1.0, which take the body as sent (read into the flow
 * store's request by search.wire.ts, the REST edge) and answer the wire envelope as one JSON leaf:
 * graphql-js does no per-record work, so a 25,000-flow page costs what the flow store spends
 * building it.
 */
import type { Session } from '../../auth/session.js';
import type { Context } from '../../context.js';
import { builder } from '../../graphql/builder.js';
import { readRecordsBody, readTermsBody } from './search.wire.js';

/** A wire field's caller, refused before its body is read when it lacks the search scope (wire.md 2.4). */
async function wireCaller(ctx: Context): Promise<Session> {
  const session = await ctx.auth.requireSession();
  session.assert('flows.search');
  return session;
}

const FlowTimeUnit = builder.enumType('FlowTimeUnit', { values: ['minutes', 'hours', 'days', 'weeks'] as const });
const FlowSortOrder = builder.enumType('FlowSortOrder', { values: ['asc', 'desc'] as const });
const FlowTermsOrderBy = builder.enumType('FlowTermsOrderBy', { values: ['doc_count', 'value', 'key'] as const });

const FlowRelativeTime = builder.inputType('FlowRelativeTime', {
  fields: (t) => ({
    value: t.int({ required: true, description: 'A positive number of units before now.' }),
    unit: t.field({ type: FlowTimeUnit, required: true }),
  }),
});

const FlowAbsoluteTime = builder.inputType('FlowAbsoluteTime', {
  fields: (t) => ({ date: t.string({ required: true, description: 'ISO 8601; `Z`, `+HH:MM` or no zone (UTC).' }) }),
});

const FlowTimeFilter = builder.inputType('FlowTimeFilter', {
  description: 'The DateTimeFilter of wire.md 5.2: exactly one of `now`, `relative`, `absolute`.',
  fields: (t) => ({
    now: t.boolean({ required: false }),
    relative: t.field({ type: FlowRelativeTime, required: false }),
    absolute: t.field({ type: FlowAbsoluteTime, required: false }),
  }),
});

const FlowSortInput = builder.inputType('FlowSortInput', {
  fields: (t) => ({
    field: t.string({ required: true, description: 'A sortable dotted path (or alias) of the flow record.' }),
    order: t.field({ type: FlowSortOrder, required: false, description: 'Default desc.' }),
  }),
});

const FlowTermsOrder = builder.inputType('FlowTermsOrder', {
  fields: (t) => ({
    by: t.field({ type: FlowTermsOrderBy, required: false, description: 'Default doc_count.' }),
    direction: t.field({ type: FlowSortOrder, required: false, description: 'Default desc (asc when ordering by key).' }),
  }),
});

const FlowTermsBucket = builder.simpleObject('FlowTermsBucket', {
  fields: (t) => ({
    key: t.field({ type: 'JSON', description: "The value, in the field's JSON type (timestamps as epoch ms)." }),
    docCount: t.float({ description: 'Flows (array fields: elements) with this value. An integer.' }),
    value: t.float({ nullable: true, description: 'The metric over those flows; equals docCount for `count`.' }),
  }),
});

const FlowTerms = builder.simpleObject('FlowTerms', {
  fields: (t) => ({
    instanceId: t.string(),
    buckets: t.field({ type: [FlowTermsBucket] }),
    otherDocCount: t.float({ description: 'Matching values outside the returned buckets. An integer.' }),
    took: t.float({ description: 'Seconds.' }),
  }),
});

const FlowTimeseriesBucket = builder.simpleObject('FlowTimeseriesBucket', {
  fields: (t) => ({
    ts: t.float({ description: 'Bucket start, epoch milliseconds, aligned to the interval since 1970-01-01T00:00Z.' }),
    count: t.float({ description: 'Matching flows in the bucket. An integer.' }),
    value: t.float({ nullable: true, description: 'The metric; null for an empty bucket of avg/min/max.' }),
  }),
});

const FlowTimeseries = builder.simpleObject('FlowTimeseries', {
  fields: (t) => ({
    instanceId: t.string(),
    interval: t.string(),
    intervalMs: t.float(),
    metric: t.string(),
    found: t.float({ description: 'Flows matching the sentence in the window. An integer.' }),
    total: t.float({ description: 'Flows of the instance in the window. An integer.' }),
    took: t.float({ description: 'Seconds.' }),
    buckets: t.field({ type: [FlowTimeseriesBucket], description: 'Every bucket of the window, empty ones included.' }),
  }),
});

builder.queryFields((t) => {
  /** The arguments every typed search field shares: sentence and window. */
  const windowArgs = () => ({
    sentence: t.arg.string({ required: false, description: 'PQL (wire.md 6, docs/flowstore.md); empty matches all.' }),
    start: t.arg({ type: FlowTimeFilter, required: false, description: 'Default: 15 minutes before `end`.' }),
    end: t.arg({ type: FlowTimeFilter, required: false, description: 'Default: now.' }),
  });
  return {
    flows: t.connection(
      {
        type: 'JSON',
        description:
          "Flow records of one instance in the caller's tree, in `sort` order, as a cursor connection (scope " +
          '`p.token.scope.search_api`). Same rules as POST /search/records/1.0; `first`/`last` are its `size` ' +
          '(default 15, at most 25000). Cursors are record offsets: pin `end` to an absolute date to page a ' +
          'window that keeps receiving flows.',
        args: {
          instanceId: t.arg.string({ required: true }),
          ...windowArgs(),
          sort: t.arg({ type: [FlowSortInput], required: false, description: 'Applied in order; default `@timestamp` desc.' }),
          fields: t.arg.stringList({ required: false, description: 'Dotted paths or prefixes to return; `@timestamp` always comes.' }),
        },
        resolve: async (_root, args, ctx) => ctx.services.search.connection(await ctx.auth.requireSession(), args),
      },
      {
        name: 'FlowConnection',
        fields: (c) => ({
          found: c.float({ resolve: (conn) => conn.found, description: 'Flows matching the sentence in the window. An integer.' }),
          total: c.float({ resolve: (conn) => conn.total, description: 'Flows of the instance in the window before the sentence. An integer.' }),
          took: c.float({ resolve: (conn) => conn.took, description: 'Seconds the search took.' }),
          flows: c.field({
            type: 'JSON',
            resolve: (conn) => conn.flows,
            description: "The page's records as one JSON array (the edges' nodes): the cheap way to read big pages.",
          }),
        }),
      },
      { name: 'FlowEdge' },
    ),
    flowAggregate: t.field({
      type: [FlowTerms],
      description: 'Terms aggregation per instance, as POST /search/agg/1.0 (scope `p.token.scope.search_api`).',
      args: {
        instanceIds: t.arg.stringList({ required: true }),
        ...windowArgs(),
        field: t.arg.string({ required: true, description: 'A filterable dotted path or alias; array fields count each element.' }),
        size: t.arg.int({ required: false, description: 'Buckets per instance; default 10, at most 1000.' }),
        metric: t.arg.string({ required: false, description: '`count` (default), `sum|avg|min|max:<numeric field>` or `uniq:<field>`.' }),
        order: t.arg({ type: FlowTermsOrder, required: false }),
      },
      resolve: async (_root, args, ctx) =>
        (await ctx.services.search.aggregate(await ctx.auth.requireSession(), args)).map(({ instanceId, buckets, other_doc_count, took }) => ({
          instanceId,
          buckets: buckets.map(({ key, doc_count, value }) => ({ key, docCount: doc_count, value })),
          otherDocCount: other_doc_count,
          took,
        })),
    }),
    flowTimeseries: t.field({
      type: [FlowTimeseries],
      description: 'Flow counts and a metric in time buckets per instance (scope `p.token.scope.search_api`).',
      args: {
        instanceIds: t.arg.stringList({ required: true }),
        ...windowArgs(),
        interval: t.arg.string({ required: true, description: '`<N><s|m|h|d|w>`, e.g. `30s`, `5m`, `1h`; at most 10,000 buckets.' }),
        metric: t.arg.string({ required: false, description: 'As for flowAggregate; default `count`.' }),
      },
      resolve: async (_root, args, ctx) =>
        (await ctx.services.search.timeseries(await ctx.auth.requireSession(), args)).map(({ interval_ms, ...series }) => ({
          ...series,
          intervalMs: interval_ms,
        })),
    }),
    searchRecords: t.field({
      type: 'JSON',
      description:
        'POST /search/records/1.0 as one field: `body` is the request body as sent (wire.md 5.1, plus `timeseries`), ' +
        'the answer the envelope keyed by instance id (wire.md 5.3). Errors are `validation_error` (400), ' +
        '`authorization_error` (403), `query_timeout` (504).',
      args: { body: t.arg({ type: 'JSON', required: true }) },
      resolve: async (_root, args, ctx) => {
        const session = await wireCaller(ctx);
        return ctx.services.search.records(session, readRecordsBody(args.body));
      },
    }),
    searchAggregate: t.field({
      type: 'JSON',
      description: 'POST /search/agg/1.0 as one field: the terms aggregation body as sent, the answer keyed by instance id (docs/search.md).',
      args: { body: t.arg({ type: 'JSON', required: true }) },
      resolve: async (_root, args, ctx) => {
        const session = await wireCaller(ctx);
        return ctx.services.search.terms(session, readTermsBody(args.body));
      },
    }),
  };
});
