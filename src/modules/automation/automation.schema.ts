import DataLoader from 'dataloader';
import type { Context } from '../../context.js';
import type { AutomationRule, AutomationRun } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { topicNames } from '../events/topics.js';
import { actionTypes } from './actions.js';
import { RULE_LIMITS, matchOf } from './automation.service.js';
import { CONDITION_OPS, type Condition } from './conditions.js';

const AutomationConditionRef = builder.objectRef<Condition>('AutomationCondition').implement({
  fields: (t) => ({
    field: t.exposeString('field', { description: "Dotted path into the event's `data`." }),
    op: t.exposeString('op', { description: `One of ${CONDITION_OPS.join(', ')}.` }),
    value: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.value }),
  }),
});

const AutomationMatchRef = builder.objectRef<ReturnType<typeof matchOf>>('AutomationMatch').implement({
  fields: (t) => ({
    topic: t.exposeString('topic'),
    kinds: t.exposeStringList('kinds', { description: 'Empty: every kind of the topic.' }),
    conditions: t.field({ type: [AutomationConditionRef], description: 'All must hold.', resolve: (m) => m.conditions }),
  }),
});

const AutomationActionRef = builder.objectRef<AutomationRule>('AutomationAction').implement({
  fields: (t) => ({
    type: t.exposeString('action', { description: `One of ${actionTypes.join(', ')}.` }),
    url: t.exposeString('webhookUrl', { nullable: true, description: 'The webhook target; null for other actions.' }),
  }),
});

const AutomationRunRef = builder.objectRef<AutomationRun>('AutomationRun').implement({
  description: 'One rule run for one event: its delivery state and attempts.',
  fields: (t) => ({
    runId: t.exposeString('id'),
    ruleId: t.exposeString('ruleId'),
    eventId: t.exposeString('eventId'),
    status: t.exposeString('status', { description: '`pending`, `running`, `retrying`, `succeeded`, `failed` or `cancelled`.' }),
    attempts: t.exposeInt('attempts'),
    responseCode: t.exposeInt('responseCode', { nullable: true, description: "The webhook receiver's last HTTP status." }),
    error: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed.' }),
    result: t.expose('result', { type: 'JSON', nullable: true, description: 'What the last attempt did (response excerpt, node update statuses).' }),
    attemptLog: t.expose('attemptLog', { type: 'JSON', description: 'Every attempt: `attempt`, `at`, `response_code`, `error`, `duration_ms`.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (run) => (run.status === 'pending' || run.status === 'retrying' ? run.dueAt : null),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

/** Recent runs of many rules in one statement per request and limit. */
const runLoaders = new WeakMap<Context, DataLoader<string, AutomationRun[]>>();
const recentRuns = (ctx: Context, ruleId: string, limit: number | null | undefined) => {
  let loader = runLoaders.get(ctx);
  if (!loader) {
    loader = new DataLoader(async (keys: readonly string[]) => {
      const byLimit = new Map<string, string[]>();
      for (const key of keys) {
        const [size, id] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
        byLimit.set(size, [...(byLimit.get(size) ?? []), id]);
      }
      const session = await ctx.auth.requireSession();
      const found = new Map<string, AutomationRun[]>();
      for (const [size, ids] of byLimit) {
        const runs = await ctx.services.automation.recentRuns(session, ids, size === '' ? null : Number(size));
        for (const [id, list] of runs) found.set(`${size}:${id}`, list);
      }
      return keys.map((key) => found.get(key) ?? []);
    });
    runLoaders.set(ctx, loader);
  }
  return loader.load(`${limit ?? ''}:${ruleId}`);
};

const AutomationRuleRef = builder.objectRef<AutomationRule>('AutomationRule').implement({
  description: "A rule reacting to events of its tenant and that tenant's children (docs/automation.md).",
  fields: (t) => ({
    ruleId: t.exposeString('id'),
    customerId: t.exposeString('customerId', { description: 'The owner: the caller or one of its children.' }),
    name: t.exposeString('name'),
    enabled: t.exposeBoolean('enabled'),
    match: t.field({ type: AutomationMatchRef, resolve: matchOf }),
    action: t.field({ type: AutomationActionRef, resolve: (rule) => rule }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    runs: t.field({
      type: [AutomationRunRef],
      description: 'The newest runs, newest first.',
      args: {
        limit: t.arg.int({ required: false, description: `Default ${RULE_LIMITS.runs.default}, clamped to ${RULE_LIMITS.runs.min}–${RULE_LIMITS.runs.max}.` }),
      },
      resolve: (rule, args, ctx) => recentRuns(ctx, rule.id, args.limit),
    }),
  }),
});

const AutomationConditionInput = builder.inputType('AutomationConditionInput', {
  // Optional in the schema so that the service names the missing one (`match.conditions[0].op`).
  fields: (t) => ({
    field: t.string({ required: false, description: "Dotted path into the event's `data`, e.g. `disposition`." }),
    op: t.string({ required: false, description: `One of ${CONDITION_OPS.join(', ')}.` }),
    value: t.field({ type: 'JSON', required: false, description: 'A scalar; a list for in/not_in; a number for gt/gte/lt/lte; a boolean for exists.' }),
  }),
});

const AutomationMatchInput = builder.inputType('AutomationMatchInput', {
  fields: (t) => ({
    topic: t.string({ required: false, description: `Required; one of ${topicNames.join(', ')}.` }),
    kinds: t.stringList({ required: false, description: 'Kinds of the topic to react to; none or empty: all.' }),
    conditions: t.field({ type: [AutomationConditionInput], required: false, description: 'Conditions on the event data; all must hold.' }),
  }),
});

const AutomationActionInput = builder.inputType('AutomationActionInput', {
  fields: (t) => ({
    type: t.string({ required: false, description: `Required; one of ${actionTypes.join(', ')}.` }),
    url: t.string({ required: false, description: 'webhook: the http(s) URL the event is POSTed to.' }),
  }),
});

const SaveAutomationRuleInput = builder.inputType('SaveAutomationRuleInput', {
  fields: (t) => ({
    ruleId: t.string({ required: false, description: 'Updates this rule; omitted: creates one.' }),
    customerId: t.string({ required: false, description: 'The owner (default the caller): the caller or one of its children. Cannot change.' }),
    name: t.string({ required: false, description: `Required on create; at most ${RULE_LIMITS.name} characters.` }),
    enabled: t.boolean({ required: false, description: 'Default true.' }),
    match: t.field({ type: AutomationMatchInput, required: false, description: 'Required on create; replaces the whole match on update.' }),
    action: t.field({ type: AutomationActionInput, required: false, description: 'Required on create; replaces the whole action on update.' }),
    rotateSecret: t.boolean({ required: false, description: 'Webhook rules: issue a new signing secret (answered once).' }),
  }),
});

const SaveAutomationRulePayload = builder.simpleObject('SaveAutomationRulePayload', {
  fields: (t) => ({
    created: t.boolean(),
    rule: t.field({ type: AutomationRuleRef }),
    secret: t.string({ nullable: true, description: 'The webhook signing secret, only when it was just issued. Shown once; store it.' }),
  }),
});

const DeletedAutomationRule = builder.simpleObject('DeletedAutomationRule', { fields: (t) => ({ ruleId: t.string() }) });
const DeleteAutomationRulePayload = builder.simpleObject('DeleteAutomationRulePayload', {
  fields: (t) => ({ deleted: t.field({ type: DeletedAutomationRule }) }),
});

builder.queryFields((t) => ({
  automationRules: t.field({
    type: [AutomationRuleRef],
    description: "Rules of the caller's tree, or of one tenant in it (404 `not_found` outside). Needs node_api.",
    args: { customerId: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.automation.list(await ctx.auth.requireSession(), args.customerId),
  }),
  automationRule: t.field({
    type: AutomationRuleRef,
    description: "One rule of the caller's tree; 404 `not_found` otherwise.",
    args: { ruleId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.automation.get(await ctx.auth.requireSession(), args.ruleId),
  }),
}));

builder.mutationFields((t) => ({
  saveAutomationRule: t.field({
    type: SaveAutomationRulePayload,
    description: 'Creates a rule, or updates `ruleId`. 400 for invalid fields or a refused webhook target; 404 outside the tree.',
    args: { input: t.arg({ type: SaveAutomationRuleInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ctx.services.automation.save(await ctx.auth.requireSession(), input),
  }),
  deleteAutomationRule: t.field({
    type: DeleteAutomationRulePayload,
    description: "Deletes a rule of the caller's tree (404 `not_found` otherwise); its pending runs stop.",
    args: { ruleId: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ({ deleted: await ctx.services.automation.delete(await ctx.auth.requireSession(), args.ruleId) }),
  }),
}));
