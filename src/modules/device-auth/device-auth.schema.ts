import { builder } from '../../graphql/builder.js';
import type { DeviceAuthorizationView, DeviceGrant, DevicePoll } from './device-auth.service.js';
import type { EnrolledNode } from './device-auth.store.js';

const DeviceAuthorizationStatus = builder.enumType('DeviceAuthorizationStatus', {
  description: '`pending` until approved or denied; `expired` once its lifetime passes while still pending.',
  values: ['pending', 'approved', 'denied', 'expired'] as const,
});

const EnrolledNode = builder.objectRef<EnrolledNode>('DeviceEnrolledNode').implement({
  description: "A node of the approver's tenant that already has the device's machine id.",
  fields: (t) => ({
    id: t.exposeString('id'),
    hostname: t.exposeString('hostname', { nullable: true }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime', nullable: true }),
  }),
});

const DeviceAuthorization = builder.objectRef<DeviceAuthorizationView>('DeviceAuthorization').implement({
  description: 'A device asking to be enrolled, as shown to the operator who approves it.',
  fields: (t) => ({
    deviceCode: t.exposeString('deviceCode', {
      nullable: true,
      description: 'The device code, normalized, when this was looked up by it; null when looked up by the user code (it stays secret to the device).',
    }),
    userCode: t.exposeString('userCode', {
      nullable: true,
      description: "`XXXX-XXXX`, when this was looked up by the user code; the operator compares it with the device's screen.",
    }),
    hostname: t.exposeString('hostname'),
    machineId: t.exposeString('machineId', { description: 'The machine id, or the node_id the device gave in its place.' }),
    nodeId: t.exposeString('nodeId', { nullable: true, description: 'The node_id the device gave, if any.' }),
    status: t.field({ type: DeviceAuthorizationStatus, resolve: (d) => d.status }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    enrolledNode: t.field({
      type: EnrolledNode,
      nullable: true,
      description:
        "With a bearer token: the managed node of the caller's tenant that already has this machine id. Approving hands that node's identity to this device. Null without a token.",
      resolve: async (device, _args, ctx) => ctx.services.deviceAuth.enrolledNode(await ctx.auth.session(), device),
    }),
  }),
});

const DeviceAuthorizationGrant = builder.objectRef<DeviceGrant>('DeviceAuthorizationGrant').implement({
  description: 'What a device gets when it starts the flow.',
  fields: (t) => ({
    deviceCode: t.exposeString('deviceCode', { description: 'Secret to the device: it polls with it. Never part of the approval URL.' }),
    userCode: t.exposeString('userCode', { description: '`XXXX-XXXX`: the device shows it, the approval page shows it too, for the operator to compare.' }),
    authUrl: t.exposeString('authUrl', { description: 'The console page where an operator approves this device; carries the user code.' }),
    pollInterval: t.exposeInt('pollInterval', { description: 'Seconds to wait between polls.' }),
    expiresIn: t.exposeInt('expiresIn', { description: 'Seconds until the code expires unless decided.' }),
  }),
});

const DeviceAuthorizationDecision = builder.simpleObject('DeviceAuthorizationDecision', {
  fields: (t) => ({ status: t.field({ type: DeviceAuthorizationStatus }) }),
});

const DeviceAuthorizationPoll = builder.objectRef<DevicePoll>('DeviceAuthorizationPoll').implement({
  description: "A device's poll. The access key is present on the first poll after approval only.",
  fields: (t) => ({
    status: t.field({ type: DeviceAuthorizationStatus, resolve: (p) => p.status }),
    accessKey: t.exposeString('accessKey', {
      nullable: true,
      description: '`<client_id>.<client_secret>`, once; exchange it at the token endpoint.',
    }),
    nodeId: t.exposeString('nodeId', { nullable: true }),
    slowDown: t.exposeBoolean('slowDown', { description: 'True when this poll came sooner than pollInterval after the previous one.' }),
    pollInterval: t.exposeInt('pollInterval', { description: 'Seconds to wait before the next poll.' }),
  }),
});

// Arguments are optional in the schema so that a missing one gets the documented error code.
const lookupArgs = builder.args((t) => ({
  userCode: t.string({ required: false, description: 'The code the approval link carries (`XXXX-XXXX`; case, blanks and the dash do not matter).' }),
  deviceCode: t.string({ required: false, description: "The device's own code (api-spec.md's `device_code`)." }),
}));

builder.queryFields((t) => ({
  deviceAuthorization: t.field({
    type: DeviceAuthorization,
    description: 'Public: anyone holding the user code (or the device code) may see what it asks for. The user code wins when both are given.',
    args: lookupArgs,
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.describe(args, ctx.origin),
  }),
}));

builder.mutationFields((t) => ({
  startDeviceAuthorization: t.field({
    type: DeviceAuthorizationGrant,
    description: 'Public: a device starts the flow. `nodeId`, when given, is also used as the machine id.',
    args: {
      hostname: t.arg.string({ required: false }),
      machineId: t.arg.string({ required: false }),
      nodeId: t.arg.string({ required: false }),
    },
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.start(args, ctx.origin),
  }),
  approveDeviceAuthorization: t.field({
    type: DeviceAuthorizationDecision,
    description: 'Any valid token: `action` "deny" denies, anything else approves, for the caller\'s tenant. By user code or device code.',
    args: { ...lookupArgs, action: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => ctx.services.deviceAuth.decide(await ctx.auth.requireSession(), args, args.action, ctx.origin),
  }),
  pollDeviceAuthorization: t.field({
    type: DeviceAuthorizationPoll,
    description: 'Public: the device asks for its status; unknown codes answer `expired`.',
    args: { deviceCode: t.arg.string({ required: false }) },
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.poll(args.deviceCode, ctx.origin),
  }),
}));

builder.subscriptionFields((t) => ({
  deviceAuthorizationStatus: t.field({
    type: DeviceAuthorization,
    description: 'Public: the current state at once, then every change (also expiry); completes after a final state. By user code or device code.',
    args: lookupArgs,
    subscribe: (_root, args, ctx) => ctx.services.deviceAuth.watch(args, ctx.origin),
    resolve: (event) => event,
  }),
}));
