import { resolveArrayConnection } from '@pothos/plugin-relay';
import type { Node } from '../../generated/prisma/client.js';
import { builder } from '../../graphql/builder.js';
import type { Context } from '../../context.js';
import { controlConnected, controlPlaneUp, healthStatus, ingestUp } from './liveness.js';
import { type NodeDetails } from './node-details.js';
import { deliveredServices } from '../profiles/services-defaults.js';
import { isBehind } from '../../infra/versions.js';

const NodeNetwork = builder.simpleObject('NodeNetwork', {
  fields: (t) => ({ localIp: t.string({ nullable: true }), publicIp: t.string({ nullable: true }) }),
});
const NodeConnection = builder.simpleObject('NodeConnectionState', {
  description: 'Whether the control channel is live (or was healthy recently) and flows are arriving.',
  fields: (t) => ({ controlPlane: t.boolean(), ingest: t.boolean() }),
});
const NodeHealth = builder.simpleObject('NodeHealth', {
  fields: (t) => ({
    status: t.string({ description: '`healthy`, `degraded`, `offline` or `unknown`.' }),
    lastSeenAt: t.field({ type: 'DateTime', nullable: true }),
  }),
});

/** A field read from the node's details: at once when its list loaded them, else through the batch loader. */
const fromDetails =
  <T>(read: (details: NodeDetails, node: Node) => T) =>
  (node: Node, _args: object, ctx: Context): T | Promise<T> => {
    const known = ctx.loaders.nodeDetails.known(node);
    return known ? read(known, node) : ctx.loaders.nodeDetails.load(node).then((details) => read(details, node));
  };

export const NodeRef = builder.prismaNode('Node', {
  name: 'CollectorNode',
  description: 'A collector known to the control plane.',
  id: { field: 'id' },
  fields: (t) => ({
    nodeId: t.exposeString('id'),
    machineId: t.exposeString('machineId', { nullable: true }),
    hostname: t.exposeString('hostname', { nullable: true }),
    customerId: t.exposeString('customerId'),
    customerName: t.string({ nullable: true, resolve: fromDetails((details) => details.customerName) }),
    description: t.exposeString('description', { nullable: true, description: 'Label stored on the enrolment credential.' }),
    kind: t.exposeString('kind', { description: '`managed` or `legacy`.' }),
    status: t.exposeString('status', { description: '`active`, `pending_approval`, `staged`, or a future value.' }),
    profileId: t.exposeString('profileId', { nullable: true }),
    profileName: t.string({ nullable: true, resolve: fromDetails((details) => details.profile?.name ?? null) }),
    network: t.field({ type: NodeNetwork, resolve: (node) => ({ localIp: node.localIp, publicIp: node.publicIp }) }),
    connection: t.field({ type: NodeConnection, resolve: (node) => ({ controlPlane: controlPlaneUp(node), ingest: ingestUp(node) }) }),
    health: t.field({ type: NodeHealth, resolve: (node) => ({ status: healthStatus(node), lastSeenAt: node.lastSeenAt }) }),
    collectorVersion: t.exposeString('collectorVersion', { nullable: true }),
    os: t.exposeString('os', { nullable: true }),
    arch: t.exposeString('arch', { nullable: true }),
    updateChannel: t.string({ resolve: fromDetails((details) => details.channel) }),
    latestVersion: t.string({ nullable: true, resolve: fromDetails((details) => details.latestVersion) }),
    updateAvailable: t.boolean({ resolve: fromDetails((details, node) => isBehind(node.collectorVersion, details.latestVersion)) }),
    services: t.field({
      type: 'JSON',
      description: "The profile's services merged over the server defaults: what the node runs with.",
      resolve: fromDetails((details) => deliveredServices(details.profile?.services)),
    }),
    hardware: t.field({ type: 'JSON', description: 'As the collector reported it; `{}` until it has.', resolve: (node) => node.hardware ?? {} }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const OutdatedNode = builder.simpleObject('OutdatedNode', {
  fields: (t) => ({
    node: t.field({ type: NodeRef }),
    latestVersion: t.string(),
    updateChannel: t.string(),
    reachable: t.boolean({ description: 'Its control channel is open: an update can be sent now (`connection.controlPlane` also counts a recent heartbeat).' }),
  }),
});

const ProvisionedCredential = builder.simpleObject('ProvisionedCredential', {
  description: 'A one-time credential that enrols one collector.',
  fields: (t) => ({
    status: t.string(),
    accessKey: t.string({ description: '`<client_id>.<client_secret>`; shown once. Exchange it at the token endpoint.' }),
    customerId: t.string(),
    machineId: t.string({ nullable: true }),
    profileId: t.string({ nullable: true }),
  }),
});

const ProvisionInput = builder.inputType('ProvisionNodeInput', {
  fields: (t) => ({
    customerId: t.string({ required: false, description: 'The caller or one of its children.' }),
    machineId: t.string({ required: false }),
    description: t.string({ required: false }),
    profileId: t.string({ required: false, description: "Inherited at first boot; from the target's tree." }),
  }),
});

const CollectorFactsInput = builder.inputType('CollectorFactsInput', {
  description: 'What a collector reports about itself when it registers.',
  fields: (t) => ({
    machineId: t.string({ required: false }),
    hostname: t.string({ required: false }),
    collectorVersion: t.string({ required: false }),
    updateChannel: t.string({ required: false }),
    os: t.string({ required: false }),
    arch: t.string({ required: false }),
    localIp: t.string({ required: false }),
    publicIp: t.string({ required: false }),
    hardware: t.field({ type: 'JSON', required: false }),
    services: t.field({ type: 'JSON', required: false }),
  }),
});

builder.queryFields((t) => ({
  collectorNodes: t.connection({
    type: NodeRef,
    description: 'Control-plane-managed nodes of the caller and its children, oldest first.',
    args: {
      customerId: t.arg.string({ required: false, description: "One tenant of the caller's tree (404 `not_found` outside it); default: the whole tree." }),
    },
    resolve: async (_root, args, ctx) => {
      const listed = await ctx.services.nodes.list(await ctx.auth.requireSession(), args.customerId);
      // The fields then read the details without awaiting (node-details.ts).
      ctx.loaders.nodeDetails.prime(listed);
      return resolveArrayConnection(
        { args, defaultSize: 100, maxSize: 100_000 },
        listed.map((entry) => entry.node),
      )!;
    },
  }),
  collectorNode: t.field({
    type: NodeRef,
    description: "One node of the caller's tree; 404 `not_found` otherwise.",
    args: { nodeId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.nodes.get(await ctx.auth.requireSession(), args.nodeId),
  }),
  outdatedNodes: t.field({
    type: [OutdatedNode],
    description: 'Nodes whose collector is behind the latest release of their channel.',
    resolve: async (_root, _args, ctx) =>
      (await ctx.services.nodes.outdated(await ctx.auth.requireSession())).map((o) => ({
        ...o,
        updateChannel: o.channel,
        reachable: controlConnected(o.node),
      })),
  }),
}));

builder.mutationFields((t) => ({
  provisionNode: t.field({
    type: ProvisionedCredential,
    args: { input: t.arg({ type: ProvisionInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ctx.services.nodes.provision(await ctx.auth.requireSession(), input),
  }),
  registerCollector: t.field({
    type: NodeRef,
    description: "A collector announcing itself with its enrolment credential's token (scope ingest).",
    args: { input: t.arg({ type: CollectorFactsInput, required: true }) },
    resolve: async (_root, { input }, ctx) => ctx.services.nodes.register(await ctx.auth.requireSession(), input),
  }),
  legacyRegisterNode: t.field({
    type: NodeRef,
    description: 'First-generation collectors: the existing or a new legacy node (scope ingest).',
    args: { machineId: t.arg.string({ required: false }), hostname: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.nodes.legacyRegister(await ctx.auth.requireSession(), args),
  }),
}));
