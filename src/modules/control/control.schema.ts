import { builder } from '../../graphql/builder.js';
import { NodeRef } from '../nodes/nodes.schema.js';
import { watchNode } from './node-watch.js';

const NodeDiagnostics = builder.simpleObject('NodeDiagnostics', {
  fields: (t) => ({
    nodeId: t.string(),
    diagnostics: t.field({ type: 'JSON', nullable: true }),
    recentLogs: t.stringList(),
  }),
});

const NodeProfileCapture = builder.simpleObject('NodeProfileCapture', {
  description: 'A gzipped pprof profile captured on the collector.',
  fields: (t) => ({
    nodeId: t.string(),
    type: t.string(),
    filename: t.string(),
    profileBase64: t.string(),
  }),
});

const NodeUpdateResult = builder.simpleObject('NodeUpdateResult', {
  fields: (t) => ({
    nodeId: t.string(),
    updateStatus: t.string({ description: '`update_sent` or `already_current`.' }),
    version: t.string(),
    platform: t.string({ nullable: true, description: '`os_arch`; only when `update_sent`.' }),
  }),
});

const LegacyManageResult = builder.simpleObject('LegacyManageResult', {
  fields: (t) => ({ nodeId: t.string(), operation: t.string(), result: t.field({ type: 'JSON' }) }),
});

builder.mutationFields((t) => ({
  requestNodeDiagnostics: t.field({
    type: NodeDiagnostics,
    description: 'Pulls diagnostics and recent log lines from the live collector (log_lines clamped to 1–1000).',
    args: { nodeId: t.arg.string({ required: true }), logLines: t.arg.int({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.nodeCommands.diagnostics(await ctx.auth.requireSession(), args.nodeId, args.logLines),
  }),
  captureNodeProfile: t.field({
    type: NodeProfileCapture,
    description: 'Captures a pprof profile on the collector; duration (CPU, BLOCK, MUTEX) capped at 60 s.',
    args: { nodeId: t.arg.string({ required: true }), type: t.arg.string({ required: false }), durationSeconds: t.arg.int({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.nodeCommands.pprof(await ctx.auth.requireSession(), args.nodeId, args.type, args.durationSeconds),
  }),
  updateNode: t.field({
    type: NodeUpdateResult,
    description: "Sends the latest release of the node's channel to the connected collector.",
    args: { nodeId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.nodeCommands.update(await ctx.auth.requireSession(), args.nodeId),
  }),
  manageLegacyNode: t.field({
    type: LegacyManageResult,
    args: { nodeId: t.arg.string({ required: true }), operation: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.nodeCommands.manage(await ctx.auth.requireSession(), args.nodeId, args.operation),
  }),
  activateNode: t.field({
    type: NodeRef,
    description: 'Promotes a staged node to active.',
    args: { nodeId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.nodes.activate(await ctx.auth.requireSession(), args.nodeId),
  }),
}));

builder.subscriptionFields((t) => ({
  nodeStatus: t.field({
    type: NodeRef,
    description: 'The node now, then again after every change of its connection or status.',
    args: { nodeId: t.arg.string({ required: true }) },
    subscribe: async (_root, args, ctx) =>
      watchNode(await ctx.auth.requireSession(), args.nodeId, {
        nodes: ctx.services.nodes,
        pubsub: ctx.services.pubsub,
        logger: ctx.services.logger,
      }),
    resolve: (node) => node,
  }),
}));
