import type { TenantScope } from '../../auth/session.js';
import { type Node, Prisma as PrismaSql } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';

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
const nodeRow = PrismaSql.raw(Object.entries(columns).map(([field, column]) => `${column} AS "${field}"`).join(', '));

/** The `nodes` table, read within a caller's tenant scope. */
export class NodeStore {
  constructor(private readonly prisma: Prisma) {}

  /**
   * Nodes of one kind in the scope, oldest first. Raw SQL because Prisma's mapping of model rows
   * took half of the CPU time of a 1,000-node list (~25 ms of rows against ~10 ms this way).
   */
  listOfKind(scope: TenantScope, kind: string): Promise<Node[]> {
    return this.prisma.$queryRaw<Node[]>`/* nodes.list_of_kind */
      SELECT ${nodeRow} FROM nodes
      WHERE customer_id = ANY(${[...scope.tenantIds]}) AND kind = ${kind}
      ORDER BY created_at, id`;
  }
}
