import { Scopes } from '../../src/auth/scopes.js';
import {
  GetNodeDocument,
  LegacyRegisterNodeDocument,
  ListNodesDocument,
  ListOutdatedNodesDocument,
  ManageLegacyNodeDocument,
  NodeDiagnosticsDocument,
  NodeProfileDocument,
  ProvisionNodeDocument,
  UpdateNodeDocument,
} from '../../src/generated/operations.js';
import { RawResponse, defineRoute, field, flag, integer, type Route } from '../route.js';

/** Nodes (api-spec.md section 4) and the legacy register path. */
export const nodeRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/register/1.0',
    access: Scopes.ingest,
    operation: LegacyRegisterNodeDocument,
    variables: ({ body }) => ({ machineId: field(body, 'machine_id') as string, hostname: field(body, 'hostname') as string }),
    render: ({ node }) => node,
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/nodes/1.0',
    access: Scopes.nodeApi,
    operation: ListNodesDocument,
    variables: ({ query }) => ({ services: flag(query, 'services'), hardware: flag(query, 'hardware') }),
    render: ({ nodes }) => ({ nodes: nodes.edges.map((edge) => edge.node) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/nodes/1.0/outdated',
    access: Scopes.nodeApi,
    operation: ListOutdatedNodesDocument,
    variables: () => ({}),
    render: ({ outdatedNodes }) => ({
      count: outdatedNodes.length,
      nodes: outdatedNodes.map(({ node, latest_version, update_channel, reachable }) => ({
        node_id: node.node_id,
        customer_id: node.customer_id,
        status: node.status,
        collector_version: node.collector_version,
        latest_version,
        update_channel,
        arch: node.arch,
        control_plane: reachable,
        health_status: node.health.status,
      })),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/nodes/1.0/:node_id',
    access: Scopes.nodeApi,
    operation: GetNodeDocument,
    variables: ({ params, query }) => ({ nodeId: params.node_id, services: flag(query, 'services'), hardware: flag(query, 'hardware') }),
    render: ({ node }) => node,
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/nodes/1.0/:node_id/diagnostics',
    access: Scopes.nodeApi,
    operation: NodeDiagnosticsDocument,
    variables: ({ params, query }) => ({ nodeId: params.node_id, logLines: integer(query, 'log_lines') }),
    render: ({ diagnostics }) => diagnostics,
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/nodes/1.0/:node_id/pprof',
    access: Scopes.nodeApi,
    operation: NodeProfileDocument,
    variables: ({ params, query }) => ({ nodeId: params.node_id, type: query.get('type'), duration: integer(query, 'duration') }),
    render: ({ capture }) =>
      new RawResponse(
        200,
        { 'content-type': 'application/octet-stream', 'content-disposition': `attachment; filename="${capture.filename}"` },
        Buffer.from(capture.profileBase64, 'base64'),
      ),
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/nodes/1.0/:node_id/update',
    access: Scopes.nodeApi,
    operation: UpdateNodeDocument,
    variables: ({ params }) => ({ nodeId: params.node_id }),
    render: ({ update }) => (update.platform === null ? { node_id: update.node_id, update_status: update.update_status, version: update.version } : update),
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/nodes/1.0/:node_id/manage',
    access: Scopes.nodeApi,
    operation: ManageLegacyNodeDocument,
    variables: ({ params, body }) => ({ nodeId: params.node_id, operation: field(body, 'operation') as string }),
    render: ({ managed }) => managed,
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/nodes/provision/1.0',
    access: Scopes.nodeApi,
    operation: ProvisionNodeDocument,
    variables: ({ body }) => ({
      input: {
        customerId: field(body, 'customer_id') as string,
        machineId: field(body, 'machine_id') as string,
        description: field(body, 'description') as string,
        profileId: field(body, 'profile_id') as string,
      },
    }),
    status: 201,
    render: ({ provisioned }) => provisioned,
  }),
];
