import { type Scope, Scopes } from './scopes.js';

/**
 * How far an action reaches over tenants:
 * - `own`: the token's own tenant only (a collector's ingest token, a parent managing its children);
 * - `tree`: the caller's tenant and its children; a row or a named tenant outside the tree behaves
 *   as missing (the 404 of `Session.assertTenant`, or null/empty where the contract says so).
 */
export type TenantReach = 'own' | 'tree';

/** A person's role in a tenant, each including the one before it: read; also triage and approve devices; also manage. */
export const roles = ['viewer', 'analyst', 'admin'] as const;
export type Role = (typeof roles)[number];

export interface ActionRule {
  /** The token scope the action needs; null: any valid token will do. */
  scope: Scope | null;
  /** The least role a person needs; null: API clients only (a collector's own doors). */
  role: Role | null;
  tenant: TenantReach;
  description: string;
  /**
   * The schema coordinates (`Type.field`) whose resolvers assert the action; the REST paths follow
   * from their operations. A door outside GraphQL (the ingest endpoint, the control socket) is
   * named in `description` and listed in `doors`.
   */
  fields: readonly string[];
  doors?: readonly string[];
}

/**
 * Every action a caller may be allowed, declared once: the Session asserts them
 * (`session.assert('nodes.read')`), a test holds every GraphQL field and REST route to them, and
 * docs/authorization.md is printed from them. A person is granted the actions its role includes (`roleAllows`).
 */
export const actions = {
  'tenants.read': {
    scope: null,
    role: 'viewer',
    tenant: 'tree',
    description: "Read the caller's own tenant, and the tenant of a row it already sees",
    fields: ['Query.viewer', 'Query.viewerTenant', 'Query.tenant', 'Tenant.parent', 'Profile.customer'],
  },
  'deployments.read': {
    scope: Scopes.deploymentApi,
    role: 'viewer',
    tenant: 'own',
    description: "List the caller's child deployments; read a tenant other than its own",
    fields: ['Query.deploymentParent', 'Query.tenant', 'Tenant.deployments'],
  },
  'deployments.create': {
    scope: Scopes.deploymentApi,
    role: 'admin',
    tenant: 'own',
    description: 'Create a child deployment under the caller (a parent MSP)',
    fields: ['Mutation.createDeployment'],
  },
  'deployments.delete': {
    scope: Scopes.deploymentApi,
    role: 'admin',
    tenant: 'own',
    description: 'Delete a child deployment of the caller',
    fields: ['Mutation.deleteDeployment'],
  },
  'devices.approve': {
    scope: null,
    role: 'analyst',
    tenant: 'own',
    description: "Approve or deny a device authorization, enrolling the collector into the caller's tenant",
    fields: ['Mutation.approveDeviceAuthorization'],
  },
  'nodes.read': {
    scope: Scopes.nodeApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Read collector nodes of the caller's tree and watch their status",
    fields: [
      'Query.collectorNodes',
      'Query.collectorNode',
      'Query.outdatedNodes',
      'Subscription.nodeStatus',
      'Investigation.sourceNode',
      'Investigation.observedBy',
    ],
  },
  'nodes.provision': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Issue a one-time enrolment credential for a tenant of the tree',
    fields: ['Mutation.provisionNode'],
  },
  'nodes.activate': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Promote a staged node to active',
    fields: ['Mutation.activateNode'],
  },
  'nodes.command': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Send a command to a connected collector (diagnostics, pprof, update, legacy manage)',
    fields: ['Mutation.requestNodeDiagnostics', 'Mutation.captureNodeProfile', 'Mutation.updateNode', 'Mutation.manageLegacyNode'],
  },
  'collector.register': {
    scope: Scopes.ingest,
    role: null,
    tenant: 'own',
    description: "Enrol a collector with its credential's token (and the first-generation registration)",
    fields: ['Mutation.registerCollector', 'Mutation.legacyRegisterNode'],
  },
  'collector.ingest': {
    scope: Scopes.ingest,
    role: null,
    tenant: 'own',
    description: "Send flow batches for the token's own tenant",
    fields: [],
    doors: ['POST /collector/ingest/1.0/flows'],
  },
  'collector.control': {
    scope: Scopes.ingest,
    role: null,
    tenant: 'own',
    description: 'Hold the control channel a connected collector takes commands over',
    fields: [],
    doors: ['GET /collector/control/1.0 (WebSocket)'],
  },
  'profiles.read': {
    scope: Scopes.nodeApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Read collector profiles of the caller's tree",
    fields: ['Query.profiles', 'Query.profile'],
  },
  'profiles.create': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Create a profile for a tenant of the tree (403 `unauthorized` outside it)',
    fields: ['Mutation.createProfile'],
  },
  'profiles.delete': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: "Delete a profile of the caller's tree",
    fields: ['Mutation.deleteProfile'],
  },
  'networks.read': {
    scope: Scopes.nodeApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Read the own networks of the caller's tree",
    fields: ['Query.ownNetworks'],
  },
  'networks.write': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Replace, add or remove own networks of a tenant of the tree',
    fields: ['Mutation.replaceOwnNetworks', 'Mutation.addOwnNetworks', 'Mutation.removeOwnNetworks'],
  },
  'automation.read': {
    scope: Scopes.nodeApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Read automation rules of the caller's tree and their runs",
    fields: ['Query.automationRules', 'Query.automationRule', 'AutomationRule.runs'],
  },
  'automation.write': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Create, change or delete automation rules of a tenant of the tree',
    fields: ['Mutation.saveAutomationRule', 'Mutation.deleteAutomationRule'],
  },
  'flows.search': {
    scope: Scopes.searchApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Search flow records of the caller's tree (403 naming the instances outside it)",
    fields: ['Query.searchRecords', 'Query.searchAggregate', 'Query.flows', 'Query.flowAggregate', 'Query.flowTimeseries'],
  },
  'explore.read': {
    scope: Scopes.searchApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Explore the organizations the caller's tree talks to",
    fields: [
      'Query.exploreOrganizations',
      'Query.exploreOrganization',
      'Query.exploreOrgTemporal',
      'Query.exploreOrgCadence',
      'Query.exploreOrgTransfer',
      'Query.exploreOrgReach',
      'Query.exploreOrgAccess',
      'Query.ipOrgDataset',
    ],
  },
  'events.read': {
    scope: Scopes.searchApi,
    role: 'viewer',
    tenant: 'tree',
    description: 'Read and watch the events of a tenant of the tree',
    fields: ['Query.eventTopics', 'Query.eventRecords', 'Subscription.events'],
  },
  'investigations.read': {
    scope: Scopes.searchApi,
    role: 'viewer',
    tenant: 'tree',
    description: "Read finished investigations of the caller's tree and replay their traffic links",
    fields: ['Query.investigations', 'Query.investigation', 'TrafficLink.flows', 'Investigation.assignee'],
  },
  'audit.read': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Read the audit log of a tenant of the tree: who did what, when, from where (docs/audit.md)',
    fields: ['Query.auditLog'],
  },
  'investigations.triage': {
    scope: Scopes.searchApi,
    role: 'analyst',
    tenant: 'tree',
    description: "Answer, move through triage, assign and comment on investigations of the caller's tree",
    fields: ['Mutation.answerInvestigation', 'Mutation.setInvestigationStatus', 'Mutation.assignInvestigation', 'Mutation.commentOnInvestigation'],
  },
  'suppressions.read': {
    scope: Scopes.searchApi,
    role: 'viewer',
    tenant: 'tree',
    description: 'Read the suppressions of a tenant of the tree (subjects detection leaves alone)',
    fields: ['Query.suppressions'],
  },
  'suppressions.write': {
    scope: Scopes.searchApi,
    role: 'analyst',
    tenant: 'tree',
    description: "Revoke a suppression of the caller's tree",
    fields: ['Mutation.revokeSuppression'],
  },
  'users.read': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'List the console users of a tenant of the tree, and read its single sign-on settings',
    fields: ['Query.users', 'Query.singleSignOn'],
  },
  'users.manage': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Invite console users to a tenant of the tree, change their role, disable them, reset their password; configure single sign-on',
    fields: ['Mutation.inviteUser', 'Mutation.changeUserRole', 'Mutation.disableUser', 'Mutation.resetUserPassword', 'Mutation.configureSingleSignOn'],
  },
  'sessions.manage': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'List and revoke the sign-in sessions of the console users of a tenant of the tree',
    fields: ['Query.userSessions', 'Mutation.revokeSession'],
  },
  'account.self': {
    scope: null,
    role: 'viewer',
    tenant: 'own',
    description: "A signed-in person's own account: display name, password, sessions, second factor (people only)",
    fields: [
      'Query.mySessions',
      'Mutation.setMyName',
      'Mutation.revokeSession',
      'Mutation.changePassword',
      'Mutation.startTotpEnrolment',
      'Mutation.confirmTotpEnrolment',
      'Mutation.disableTotp',
    ],
  },
  'clients.read': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'List the API clients of a tenant of the tree: scripts, SDKs and collectors (never their secrets)',
    fields: ['Query.apiClients'],
  },
  'clients.manage': {
    scope: Scopes.nodeApi,
    role: 'admin',
    tenant: 'tree',
    description: 'Create API clients for a tenant of the tree, with scopes the caller holds itself (the secret shown once), and revoke them',
    fields: ['Mutation.createApiClient', 'Mutation.revokeApiClient'],
  },
  'investigations.assignees': {
    scope: Scopes.searchApi,
    role: 'analyst',
    tenant: 'tree',
    description: 'List the people of a tenant of the tree an investigation may be assigned to: their id and name only',
    fields: ['Query.assignablePeople'],
  },
} as const satisfies Record<string, ActionRule>;

export type Action = keyof typeof actions;

/** Whether a person of `role` may take `action`: roles are ordered, each granting what the ones before it do. */
export function roleAllows(role: Role, action: Action): boolean {
  const least: Role | null = actions[action].role;
  return least !== null && roles.indexOf(role) >= roles.indexOf(least);
}

/** The actions that reach the caller's whole tree: only these may name another tenant. */
export type TreeAction = { [A in Action]: (typeof actions)[A]['tenant'] extends 'tree' ? A : never }[Action];

/**
 * The doors anyone may open without a token: GraphQL fields by coordinate, and REST paths served
 * outside GraphQL (`ServedRoute`). A REST row with an operation is public when its fields are.
 */
export const publicDoors: readonly string[] = [
  'Mutation.issueToken',
  'Mutation.startDeviceAuthorization',
  'Mutation.pollDeviceAuthorization',
  'Query.deviceAuthorization',
  'Subscription.deviceAuthorizationStatus',
  'Query.collectorReleases',
  'Query.latestCollectorRelease',
  'Query.collectorDownload',
  'Query.collectorInstallScript',
  'Query.collectorUninstallScript',
  'GET /rest/collector/assets/1.0/:releaseId/:filename',
  'GET /rest/openapi.json',
  'GET /rest/docs',
  'GET /rest/docs/:file',
  'Query.me',
  'Mutation.signIn',
  'Mutation.signOut',
  'Mutation.setPassword',
];

/**
 * The scopes a person of `role` holds, for handing them to an API client: a client with a scope may
 * take every action of that scope, so a role holds it only when it allows all of them. The
 * collector's own doors (no role) count as the admin's, who provisions collector credentials.
 */
export function roleScopes(role: Role): Scope[] {
  const rules: readonly ActionRule[] = Object.values(actions);
  return Object.values(Scopes).filter((scope) =>
    rules.filter((rule) => rule.scope === scope).every((rule) => roles.indexOf(role) >= roles.indexOf(rule.role ?? 'admin')),
  );
}
