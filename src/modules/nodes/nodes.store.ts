import type { TenantScope } from '../../auth/session.js';
import { type EnrolmentCredential, type Node, Prisma as PrismaSql } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import { isUniqueViolation } from '../../infra/unique-violation.js';
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
  SELECT ${PrismaSql.raw(
    Object.entries(columns)
      .map(([field, column]) => `n.${column} AS "${field}"`)
      .join(', '),
  )},
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

/** What a collector reports about itself, as the columns that keep it. */
export type ReportedFacts = Pick<
  PrismaSql.NodeUncheckedCreateInput,
  'hostname' | 'collectorVersion' | 'updateChannel' | 'os' | 'arch' | 'localIp' | 'publicIp' | 'hardware' | 'reportedServices' | 'lastSeenAt'
>;

/** An enrolment credential, with whether its profile stages the nodes it enrols. */
export type Enrolment = EnrolmentCredential & { profile: { fleetStaging: boolean } | null };

/** A node's identity within its tenant (the unique key of `nodes`). */
export interface NodeKey {
  customerId: string;
  kind: string;
  machineId: string;
}

/** The tenant filter every statement starts with. */
const inScope = (scope: TenantScope) => ({ customerId: { in: [...scope.tenantIds] } });

/** The owner of a row to write: the service has checked it, and a store never writes outside the scope it is given. */
function owner(scope: TenantScope, customerId: string): string {
  if (!scope.tenantIds.has(customerId)) throw new Error(`customer ${customerId} is outside the scope`);
  return customerId;
}

class LostEnrolmentRace extends Error {}

/** The `nodes` and `enrolment_credentials` tables, read and written within a caller's tenant scope. */
export class NodeStore {
  constructor(private readonly prisma: Prisma) {}

  /** A node of the scope (of one kind, when given). */
  find(scope: TenantScope, id: string, kind?: string): Promise<Node | null> {
    return this.prisma.node.findFirst({ where: { ...inScope(scope), id, ...(kind !== undefined && { kind }) } });
  }

  /** Changes a node of the scope; a node that is not there is an error, as the caller has just read it. */
  update(scope: TenantScope, id: string, data: PrismaSql.NodeUncheckedUpdateInput): Promise<Node> {
    return this.prisma.node.update({ where: { id, ...inScope(scope) }, data });
  }

  /**
   * The update channel of the profile a node of the scope follows, null without one. Read through
   * the node: a child's node may follow its parent's profile, which is outside the child's scope.
   */
  async profileChannel(scope: TenantScope, nodeId: string): Promise<string | null> {
    const row = await this.prisma.node.findFirst({ where: { ...inScope(scope), id: nodeId }, select: { profile: { select: { updateChannel: true } } } });
    return row?.profile?.updateChannel ?? null;
  }

  /**
   * The node of `key`, its hostname updated, or a new one with `status`: `created` says which. Of
   * two first registrations at once, the one whose insert loses updates the row the other created.
   */
  async upsert(scope: TenantScope, key: NodeKey, hostname: string, status: string): Promise<{ node: Node; created: boolean }> {
    const known = { where: { customerId_kind_machineId: { ...key, customerId: owner(scope, key.customerId) } }, data: { hostname } };
    if (await this.prisma.node.findUnique({ where: known.where, select: { id: true } })) return { node: await this.prisma.node.update(known), created: false };
    try {
      return { node: await this.prisma.node.create({ data: { id: newId('node'), ...key, hostname, status } }), created: true };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return { node: await this.prisma.node.update(known), created: false };
    }
  }

  async createEnrolment(
    scope: TenantScope,
    credential: Pick<EnrolmentCredential, 'clientId' | 'customerId' | 'kind'> & Partial<Pick<EnrolmentCredential, 'machineId' | 'profileId' | 'description'>>,
  ): Promise<void> {
    await this.prisma.enrolmentCredential.create({ data: { ...credential, customerId: owner(scope, credential.customerId) } });
  }

  /**
   * The enrolment credential of a client of the scope, with its profile's staging flag (read
   * through the credential: a parent's profile applies to its children's nodes).
   */
  enrolment(scope: TenantScope, clientId: string): Promise<Enrolment | null> {
    return this.prisma.enrolmentCredential.findFirst({ where: { ...inScope(scope), clientId }, include: { profile: { select: { fleetStaging: true } } } });
  }

  /**
   * In one transaction: the managed node of `enrolment`'s tenant on `machineId` takes the
   * credential, its profile, its description (else keeps its own) and `status` (a new node is
   * created when the machine has none), and the credential records it as the node it enrolled.
   * Null when another request with the same credential got there first: it claimed the credential,
   * or created the same node.
   */
  async enrol(scope: TenantScope, enrolment: EnrolmentCredential, key: NodeKey, status: string, reported: ReportedFacts): Promise<Node | null> {
    const customerId = owner(scope, key.customerId);
    const bound = { clientId: enrolment.clientId, profileId: enrolment.profileId, status };
    return this.prisma
      .$transaction(async (tx) => {
        const existing = await tx.node.findUnique({ where: { customerId_kind_machineId: { ...key, customerId } } });
        const node = existing
          ? await tx.node.update({ where: { id: existing.id }, data: { ...reported, ...bound, description: enrolment.description ?? existing.description } })
          : await tx.node.create({ data: { id: newId('node'), ...key, ...bound, description: enrolment.description, ...reported } });
        const claimed = await tx.enrolmentCredential.updateMany({
          where: { customerId, clientId: enrolment.clientId, nodeId: null },
          data: { nodeId: node.id, enrolledAt: new Date() },
        });
        if (claimed.count === 0) throw new LostEnrolmentRace();
        return node;
      })
      .catch((error: unknown) => {
        if (error instanceof LostEnrolmentRace || isUniqueViolation(error)) return null;
        throw error;
      });
  }

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
