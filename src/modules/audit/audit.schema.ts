import type { AuditEntry as AuditRow } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import { AUDIT_PAGE_SIZE, type AuditActorKind, auditActorKinds, encodeAuditCursor } from './audit-entry.js';

const AuditActorKindRef = builder.enumType('AuditActorKind', {
  description: 'Who took an action: an API client, a person, or nobody signed in (a refused token request naming a real client).',
  values: Object.fromEntries(auditActorKinds.map((kind) => [kind.toUpperCase(), { value: kind }])) as Record<
    Uppercase<AuditActorKind>,
    { value: AuditActorKind }
  >,
});

const AuditActorRef = builder.objectRef<Pick<AuditRow, 'actorKind' | 'actorId'>>('AuditActor').implement({
  fields: (t) => ({
    kind: t.field({ type: AuditActorKindRef, resolve: (a) => a.actorKind as AuditActorKind }),
    id: t.exposeString('actorId', { description: 'The client id or user id; empty for ANONYMOUS.' }),
    name: t.string({
      nullable: true,
      description:
        "A person's display name (else their email's local part), an API client's description; null for ANONYMOUS, a client without a description, or one outside the reader's tree.",
      resolve: async (a, _args, ctx) => ctx.services.actorNames.nameOf(await ctx.auth.requireSession(), { kind: a.actorKind, id: a.actorId }, ctx),
    }),
  }),
});

const AuditEntryRef = builder.objectRef<AuditRow>('AuditEntry').implement({
  description: 'One mutation a person or an API client took, or was refused (docs/audit.md).',
  fields: (t) => ({
    entryId: t.string({ resolve: (e) => String(e.id) }),
    customerId: t.exposeString('customerId', { description: 'The tenant it acted on: the one it named when in its tree, else its own.' }),
    at: t.expose('at', { type: 'DateTime' }),
    actor: t.field({ type: AuditActorRef, resolve: (e) => e }),
    action: t.exposeString('action', { description: 'The action of docs/authorization.md, or `public` for a public door.' }),
    field: t.exposeString('field', { description: 'The Mutation field, e.g. `createProfile`.' }),
    target: t.expose('target', {
      type: 'JSON',
      description: 'The ids the mutation named and a few harmless arguments, by argument path (`input.customerId`); never a secret.',
    }),
    result: t.exposeString('result', { description: '`ok`, or the error code the caller was answered.' }),
    requestId: t.exposeString('requestId'),
    clientAddress: t.exposeString('clientAddress', { nullable: true }),
    userAgent: t.exposeString('userAgent', { nullable: true }),
  }),
});

const AuditLogFilter = builder.inputType('AuditLogFilter', {
  fields: (t) => ({
    actorKind: t.field({ type: AuditActorKindRef, required: false }),
    actorId: t.string({ required: false }),
    action: t.string({ required: false, description: 'An action, e.g. `profiles.create`, or `public`.' }),
    result: t.string({ required: false, description: '`ok`, `error` (every refusal), or one error code.' }),
    from: t.field({ type: 'DateTime', required: false, description: 'Entries at or after this instant.' }),
    to: t.field({ type: 'DateTime', required: false, description: 'Entries before this instant.' }),
  }),
});

builder.queryFields((t) => ({
  auditLog: t.connection(
    {
      type: AuditEntryRef,
      description:
        `The audit log of a tenant of the caller's tree, newest first, paged forward (\`first\`, default ${AUDIT_PAGE_SIZE.default}, ` +
        `at most ${AUDIT_PAGE_SIZE.max}; \`after\`). Needs node_api (people: admin); 404 \`not_found\` outside the tree.`,
      args: {
        customerId: t.arg.string({ required: true }),
        filter: t.arg({ type: AuditLogFilter, required: false }),
      },
      resolve: async (_root, { customerId, filter, ...paging }, ctx) => {
        const page = await ctx.services.audit.page(
          await ctx.auth.requireSession(),
          customerId,
          {
            actorKind: filter?.actorKind ?? undefined,
            actorId: filter?.actorId ?? undefined,
            action: filter?.action ?? undefined,
            result: filter?.result ?? undefined,
            from: filter?.from ?? undefined,
            to: filter?.to ?? undefined,
          },
          paging,
        );
        const edges = page.entries.map((entry) => ({ cursor: encodeAuditCursor(entry), node: entry }));
        // Forward paging only: Relay lets hasPreviousPage be false then.
        return {
          edges,
          pageInfo: { hasPreviousPage: false, hasNextPage: page.hasNextPage, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        };
      },
    },
    { name: 'AuditEntryConnection' },
    { name: 'AuditEntryEdge' },
  ),
}));
