import type { TenantScope } from '../../auth/session.js';
import { type Node, Prisma as PrismaSql } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { DELETING } from '../../tenancy/tenant-deletions.store.js';
import type { NodeDetails } from './node-details.js';

/** Every column of a node row under its model name; the compiler insists that none is missing. */
const columns: Record<keyof Node, string> = {
  id: 'id',
  customerId: 'customer_id',
  machineId: 'machine_id',
  hostname: 'hostname',
  description: 'description',
  kind: 'kind',
  status: 'status',
  profileId: 'profile_id',
  clientId: 'client_id',
  collectorVersion: 'collector_version',
  updateChannel: 'update_channel',
  os: 'os',
  arch: 'arch',
  localIp: 'local_ip',
  publicIp: 'public_ip',
  hardware: 'hardware',
  reportedServices: 'reported_services',
  lastSeenAt: 'last_seen_at',
  controlConnectedAt: 'control_connected_at',
  controlDisconnectedAt: 'control_disconnected_at',
  ingestSeenAt: 'ingest_seen_at',
  controlSession: 'control_session',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};

interface DetailColumns {
  customerName: string | null;
  profileName: string | null;
  profileServices: unknown;
  channel: string;
  latestVersion: string | null;
}

/**
 * A node row and what its fields need besides it, in one statement: its owner's name (a tenant
 * being deleted has none), its profile, the release line it follows (its own reported channel,
 * else its profile's, else stable: nodeChannel) and the newest installable release of that line
 * for its platform (only releases whose tarball is stored, as the collector module rules).
 */
const withDetails = PrismaSql.sql`
  SELECT ${PrismaSql.raw(Object.entries(columns).map(([field, column]) => `n.${column} AS "${field}"`).join(', '))},
         t.name AS "customerName", p.name AS "profileName", p.services AS "profileServices", line.channel,
         (SELECT r.version FROM collector_releases r
           WHERE r.channel = line.channel AND r.os = n.os AND r.arch = n.arch
             AND EXISTS (SELECT 1 FROM collector_release_assets a WHERE a.release_id = r.id)
           ORDER BY r.created_at DESC LIMIT 1) AS "latestVersion"
  FROM nodes n
  LEFT JOIN tenants t ON t.id = n.customer_id AND t.deployment_status <> ${DELETING}
  LEFT JOIN profiles p ON p.id = n.profile_id
  CROSS JOIN LATERAL (SELECT COALESCE(n.update_channel, p.update_channel, 'stable') AS channel) line`;

const split = ({ customerName, profileName, profileServices, channel, latestVersion, ...node }: Node & DetailColumns) => ({
  node: node as Node,
  details: {
    customerName,
    profile: profileName === null ? null : { name: profileName, services: profileServices },
    channel,
    latestVersion,
  } satisfies NodeDetails,
});

/** The `nodes` table, read within a caller's tenant scope. */
export class NodeStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Nodes of one kind in the scope, oldest first, each with its details. One raw statement: the
   * list's cost was its round trips and Prisma's mapping of rows (a profile, owner and release
   * query beside the node query, each through Prisma, were ~3 ms of a 20-node list's ~5).
   */
  async listOfKind(scope: TenantScope, kind: string): Promise<Array<{ node: Node; details: NodeDetails }>> {
    const rows = await this.prisma.$queryRaw<Array<Node & DetailColumns>>`/* nodes.list_of_kind */ ${withDetails}
      WHERE n.customer_id = ANY(${[...scope.tenantIds]}) AND n.kind = ${kind}
      ORDER BY n.created_at, n.id`;
    return rows.map(split);
  }

  /** The details of nodes already read within a caller's scope (their owners are that scope), by id. */
  async detailsOf(nodes: readonly Node[]): Promise<Map<string, NodeDetails>> {
    const owners = [...new Set(nodes.map((n) => n.customerId))];
    const rows = await this.prisma.$queryRaw<Array<Node & DetailColumns>>`/* nodes.details_of */ ${withDetails}
      WHERE n.customer_id = ANY(${owners}) AND n.id = ANY(${nodes.map((n) => n.id)})`;
    return new Map(rows.map(split).map(({ node, details }) => [node.id, details]));
  }
}
