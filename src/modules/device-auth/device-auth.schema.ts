import { builder } from '../../graphql/builder.js';
import type { DeviceAuthorizationView, DeviceGrant, DevicePoll } from './device-auth.service.js';

const DeviceAuthorizationStatus = builder.enumType('DeviceAuthorizationStatus', {
  description: '`pending` until approved or denied; `expired` once its lifetime passes while still pending.',
  values: ['pending', 'approved', 'denied', 'expired'] as const,
});

const DeviceAuthorization = builder.objectRef<DeviceAuthorizationView>('DeviceAuthorization').implement({
  description: 'A device asking to be enrolled, as shown to the operator who approves it.',
  fields: (t) => ({
    deviceCode: t.exposeString('deviceCode', { description: 'The code this was looked up by (normalized).' }),
    hostname: t.exposeString('hostname'),
    machineId: t.exposeString('machineId', { description: 'The machine id, or the node_id the device gave in its place.' }),
    nodeId: t.exposeString('nodeId', { nullable: true, description: 'The node_id the device gave, if any.' }),
    status: t.field({ type: DeviceAuthorizationStatus, resolve: (d) => d.status }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const DeviceAuthorizationGrant = builder.objectRef<DeviceGrant>('DeviceAuthorizationGrant').implement({
  description: 'What a device gets when it starts the flow.',
  fields: (t) => ({
    deviceCode: t.exposeString('deviceCode', { description: 'Secret: the device polls with it; the approval URL carries it.' }),
    authUrl: t.exposeString('authUrl', { description: 'The console page where an operator approves this device.' }),
    pollInterval: t.exposeInt('pollInterval', { description: 'Seconds to wait between polls.' }),
    expiresIn: t.exposeInt('expiresIn', { description: 'Seconds until the code expires unless decided.' }),
  }),
});

const DeviceAuthorizationDecision = builder.simpleObject('DeviceAuthorizationDecision', {
  fields: (t) => ({ status: t.field({ type: DeviceAuthorizationStatus }) }),
});

const DeviceAuthorizationPoll = builder.objectRef<DevicePoll>('DeviceAuthorizationPoll').implement({
  description: 'A device\'s poll. The access key is present on the first poll after approval only.',
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
builder.queryFields((t) => ({
  deviceAuthorization: t.field({
    type: DeviceAuthorization,
    description: 'Public: anyone holding the device code may see what it asks for.',
    args: { deviceCode: t.arg.string({ required: false }) },
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.describe(args.deviceCode),
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
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.start(args),
  }),
  approveDeviceAuthorization: t.field({
    type: DeviceAuthorizationDecision,
    description: 'Any valid token: `action` "deny" denies, anything else approves, for the caller\'s tenant.',
    args: { deviceCode: t.arg.string({ required: false }), action: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.deviceAuth.decide(await ctx.auth.requireSession(), args.deviceCode, args.action),
  }),
  pollDeviceAuthorization: t.field({
    type: DeviceAuthorizationPoll,
    description: 'Public: the device asks for its status; unknown codes answer `expired`.',
    args: { deviceCode: t.arg.string({ required: false }) },
    resolve: (_root, args, ctx) => ctx.services.deviceAuth.poll(args.deviceCode),
  }),
}));

builder.subscriptionFields((t) => ({
  deviceAuthorizationStatus: t.field({
    type: DeviceAuthorization,
    description: 'Public: the current state at once, then every change (also expiry); completes after a final state.',
    args: { deviceCode: t.arg.string({ required: false }) },
    subscribe: (_root, args, ctx) => ctx.services.deviceAuth.watch(args.deviceCode),
    resolve: (event) => event,
  }),
}));
