import type { Actor } from '../../auth/session.js';
import type { Prisma } from '../../infra/database.js';

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'expired';

/** A device_authorizations row with its status as of now (see `effectiveStatus`). */
export interface DeviceAuthorizationRow {
  id: string;
  codeHash: Uint8Array;
  userCodeHash: Uint8Array | null;
  hostname: string;
  machineId: string;
  nodeId: string | null;
  status: DeviceStatus;
  customerId: string | null;
  keyDeliveredAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Expiry is a matter of time, not of a job: a pending row past its `expires_at` is expired for
 * every reader, in the database's clock, and no statement ever moves it out of `pending` again.
 */
const columns = (alias: string) => `
  ${alias}.id, ${alias}.code_hash AS "codeHash", ${alias}.user_code_hash AS "userCodeHash", ${alias}.hostname, ${alias}.machine_id AS "machineId",
  ${alias}.node_id AS "nodeId",
  CASE WHEN ${alias}.status = 'pending' AND ${alias}.expires_at <= now() THEN 'expired' ELSE ${alias}.status END AS status,
  ${alias}.customer_id AS "customerId", ${alias}.key_delivered_at AS "keyDeliveredAt",
  ${alias}.created_at AS "createdAt", ${alias}.expires_at AS "expiresAt"`;

const SELECT = columns('d');

export interface NewDeviceAuthorization {
  id: string;
  codeHash: Uint8Array;
  userCodeHash: Uint8Array;
  hostname: string;
  machineId: string;
  nodeId: string | null;
  lifetimeSeconds: number;
}

export interface DeviceClient {
  clientId: string;
  secretHash: Uint8Array;
  customerId: string;
  scopes: string[];
  machineId: string;
  description: string;
}

type Db = Pick<Prisma, '$queryRawUnsafe' | '$executeRawUnsafe'>;

/** A node of the approver's tenant that already carries a device's machine id. */
export interface EnrolledNode {
  id: string;
  hostname: string | null;
  lastSeenAt: Date | null;
}

/**
 * SQL of the device flow. Unlike the tenant-owned stores, lookups here go by the hash of the
 * device code or of the user code: the code is the capability (a pending authorization has no
 * tenant yet), and the tenant enters only as the approver's, in `decide`.
 */
export class DeviceAuthorizationStore {
  constructor(private readonly prisma: Prisma) {}

  /** `undefined` when the user code is already taken (a retry draws another). */
  async insert(row: NewDeviceAuthorization): Promise<DeviceAuthorizationRow | undefined> {
    const [created] = await this.prisma.$queryRawUnsafe<DeviceAuthorizationRow[]>(
      `/* device_auth.insert */
       INSERT INTO device_authorizations AS d (id, code_hash, user_code_hash, hostname, machine_id, node_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7::double precision))
       ON CONFLICT (user_code_hash) DO NOTHING
       RETURNING ${SELECT}`,
      row.id,
      Buffer.from(row.codeHash),
      Buffer.from(row.userCodeHash),
      row.hostname,
      row.machineId,
      row.nodeId,
      row.lifetimeSeconds,
    );
    return created;
  }

  async findByHash(codeHash: Uint8Array): Promise<DeviceAuthorizationRow | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<DeviceAuthorizationRow[]>(
      `/* device_auth.find_by_hash */ SELECT ${SELECT} FROM device_authorizations d WHERE d.code_hash = $1`,
      Buffer.from(codeHash),
    );
    return row;
  }

  async findByUserCodeHash(userCodeHash: Uint8Array): Promise<DeviceAuthorizationRow | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<DeviceAuthorizationRow[]>(
      `/* device_auth.find_by_user_code_hash */ SELECT ${SELECT} FROM device_authorizations d WHERE d.user_code_hash = $1`,
      Buffer.from(userCodeHash),
    );
    return row;
  }

  async findById(id: string): Promise<DeviceAuthorizationRow | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<DeviceAuthorizationRow[]>(
      `/* device_auth.find_by_id */ SELECT ${SELECT} FROM device_authorizations d WHERE d.id = $1`,
      id,
    );
    return row;
  }

  /**
   * Approves or denies, only while pending and unexpired: one conditional UPDATE, so of two
   * racing decisions exactly one matches a row. `undefined` when this one did not.
   */
  async decide(id: string, decision: { status: 'approved' | 'denied'; customerId: string; decidedBy: Actor }): Promise<DeviceAuthorizationRow | undefined> {
    const [row] = await this.prisma.$queryRawUnsafe<DeviceAuthorizationRow[]>(
      `/* device_auth.decide */
       UPDATE device_authorizations AS d
          SET status = $2, customer_id = $3, decided_by = $4, decided_by_kind = $5, decided_at = now()
        WHERE d.id = $1 AND d.status = 'pending' AND d.expires_at > now()
       RETURNING ${SELECT}`,
      id,
      decision.status,
      decision.customerId,
      decision.decidedBy.id,
      decision.decidedBy.kind,
    );
    return row;
  }

  /** Records a poll; `tooFast` when the previous one was less than `intervalSeconds` ago. */
  async recordPoll(codeHash: Uint8Array, intervalSeconds: number): Promise<{ row: DeviceAuthorizationRow; tooFast: boolean } | undefined> {
    const [found] = await this.prisma.$queryRawUnsafe<Array<DeviceAuthorizationRow & { tooFast: boolean }>>(
      `/* device_auth.record_poll */
       UPDATE device_authorizations AS d SET last_polled_at = now()
         FROM (SELECT id, last_polled_at FROM device_authorizations WHERE code_hash = $1 FOR UPDATE) AS before
        WHERE d.id = before.id
       RETURNING ${SELECT},
         coalesce(before.last_polled_at > now() - make_interval(secs => $2::double precision), false) AS "tooFast"`,
      Buffer.from(codeHash),
      intervalSeconds,
    );
    if (!found) return undefined;
    const { tooFast, ...row } = found;
    return { row, tooFast };
  }

  /**
   * Mints the device's credential exactly once: the conditional UPDATE claims the delivery, and
   * the client and its enrolment record are written in the same transaction. A racing poll
   * waits on the row lock, then finds `key_delivered_at` set and gets `false`.
   */
  async deliverKey(authorizationId: string, client: DeviceClient): Promise<boolean> {
    return this.prisma.$transaction(async (tx: Db) => {
      const claimed = await tx.$executeRawUnsafe(
        `/* device_auth.claim_key */
         UPDATE device_authorizations SET key_delivered_at = now(), key_client_id = $2
          WHERE id = $1 AND status = 'approved' AND key_delivered_at IS NULL`,
        authorizationId,
        client.clientId,
      );
      if (claimed !== 1) return false;
      await tx.$executeRawUnsafe(
        `/* device_auth.insert_client */
         INSERT INTO api_clients (id, customer_id, secret_hash, scopes, description, kind)
         VALUES ($1, $2, $3, $4::text[], $5, 'device')`,
        client.clientId,
        client.customerId,
        Buffer.from(client.secretHash),
        client.scopes,
        client.description,
      );
      await tx.$executeRawUnsafe(
        `/* device_auth.insert_enrolment */
         INSERT INTO enrolment_credentials (client_id, customer_id, kind, machine_id, description)
         VALUES ($1, $2, 'device', $3, $4)`,
        client.clientId,
        client.customerId,
        client.machineId,
        client.description,
      );
      return true;
    });
  }

  /**
   * Deletes authorizations that can no longer change or be collected: pending or denied ones once
   * expired, approved ones `approvedGraceSeconds` after expiry (the device may collect its key
   * late). A poll of a deleted code answers `expired`, as for any unknown code.
   */
  async purgeExpired(approvedGraceSeconds: number): Promise<number> {
    return this.prisma.$executeRawUnsafe(
      `/* device_auth.purge_expired */
       DELETE FROM device_authorizations
        WHERE expires_at <= now()
          AND (status <> 'approved' OR expires_at <= now() - make_interval(secs => $1::double precision))`,
      approvedGraceSeconds,
    );
  }

  /** The managed node of `customerId` that already has this machine id, if any. */
  async enrolledNode(customerId: string, machineId: string): Promise<EnrolledNode | undefined> {
    const [node] = await this.prisma.$queryRawUnsafe<EnrolledNode[]>(
      `/* device_auth.enrolled_node */
       SELECT id, hostname, last_seen_at AS "lastSeenAt" FROM nodes
        WHERE customer_id = $1 AND kind = 'managed' AND machine_id = $2`,
      customerId,
      machineId,
    );
    return node;
  }

  /** Whether a client is a collector's one-time enrolment credential (provision or device key). */
  async isEnrolmentCredential(clientId: string): Promise<boolean> {
    const rows = await this.prisma.$queryRawUnsafe<unknown[]>(
      `/* device_auth.is_enrolment_credential */ SELECT 1 FROM enrolment_credentials WHERE client_id = $1`,
      clientId,
    );
    return rows.length > 0;
  }
}
