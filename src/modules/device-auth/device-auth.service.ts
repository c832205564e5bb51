import { Scopes } from '../../auth/scopes.js';
import { generateClientId, generateSecret, hashSecret } from '../../auth/secrets.js';
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError, badRequest, missingFields, notFound } from '../../errors.js';
import { newId } from '../../infra/ids.js';
import type { PublicLinks } from '../../infra/links.js';
import type { Logger } from '../../infra/logger.js';
import { nameProblem } from '../../infra/text.js';
import { type EventStream, type PubSub, eventStream, topic } from '../../infra/pubsub.js';
import { type EventRecorder, noEvents } from '../events/events.service.js';
import {
  MAX_DEVICE_CODE_LENGTH,
  generateDeviceCode,
  hashDeviceCode,
  normalizeDeviceCode,
  sameCodeHash,
} from './device-code.js';
import type { DeviceAuthorizationRow, DeviceAuthorizationStore, DeviceStatus } from './device-auth.store.js';

/** Defaults of api-spec.md section 8's two device limits; DEVICE_CODE_TTL_SECONDS and DEVICE_POLL_INTERVAL_SECONDS override them. */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
const MAX_TEXT = 255;

/** Every decision, from any process; subscribers re-read the row, so the payload stays tiny. */
export const deviceAuthorizationChanged = topic<{ id: string; status: DeviceStatus }>('device_authorization_changed');

export interface DeviceAuthorizationView {
  deviceCode: string;
  hostname: string;
  machineId: string;
  nodeId: string | null;
  status: DeviceStatus;
  createdAt: Date;
  expiresAt: Date;
}

export interface DeviceGrant {
  deviceCode: string;
  authUrl: string;
  pollInterval: number;
  expiresIn: number;
}

export interface DevicePoll {
  status: DeviceStatus;
  /** `<client_id>.<client_secret>`, on the first poll after approval only. */
  accessKey: string | null;
  nodeId: string | null;
  /** The device polled sooner than `pollInterval` after its previous poll. */
  slowDown: boolean;
  pollInterval: number;
}

export interface DeviceAuthOptions {
  lifetimeSeconds?: number;
  pollIntervalSeconds?: number;
}

const startError = () => badRequest('error', 'machine_id (or node_id) and hostname are required');
// The spec's poll puts the text in the body's `error` ("400 `error` with body error text").
const pollError = () => new DomainError(400, 'error', 'device_code is required', { body: { error: 'device_code is required' } });
const notPending = (status: DeviceStatus) =>
  new DomainError(409, 'not_pending', `This device authorization is ${status}; only a pending one can be approved or denied`, {
    body: { current_status: status },
  });
const unknownCode = () => notFound('not_found', 'Device code not found');

/** Present and non-blank after trimming; `undefined` otherwise. */
const given = (value: string | null | undefined) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

function checkText(name: string, value: string): string {
  const problem = nameProblem(value, MAX_TEXT);
  if (problem) throw badRequest('invalid_request', `${name} ${problem}`);
  return value;
}

/**
 * The device authorization flow (api-spec.md sections 3 and 4) as a small state machine:
 * `pending` → `approved` | `denied` by a decision, `pending` → `expired` by time. The device
 * code is 160 random bits, handed out once and stored only as its SHA-256; the device's
 * credential is minted on its first poll after approval, exactly once.
 */
export class DeviceAuthService {
  readonly lifetimeSeconds: number;
  readonly pollIntervalSeconds: number;

  constructor(
    private readonly store: DeviceAuthorizationStore,
    private readonly pubsub: PubSub,
    private readonly links: PublicLinks,
    private readonly logger: Logger,
    options: DeviceAuthOptions = {},
    private readonly events: EventRecorder = noEvents,
  ) {
    this.lifetimeSeconds = options.lifetimeSeconds ?? DEVICE_CODE_LIFETIME_SECONDS;
    this.pollIntervalSeconds = options.pollIntervalSeconds ?? DEVICE_POLL_INTERVAL_SECONDS;
  }

  async start(input: { hostname?: string | null; machineId?: string | null; nodeId?: string | null }): Promise<DeviceGrant> {
    const fields = { hostname: given(input.hostname), machine_id: given(input.machineId), node_id: given(input.nodeId) };
    const { hostname, node_id: nodeId } = fields;
    // node_id is an alias: when given, it is also the machine id.
    const machineId = nodeId ?? fields.machine_id;
    if (!hostname || !machineId) throw startError();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) checkText(name, value);

    const deviceCode = generateDeviceCode();
    await this.store.insert({
      id: newId('dva'),
      codeHash: hashDeviceCode(deviceCode),
      hostname,
      machineId,
      nodeId: nodeId ?? null,
      lifetimeSeconds: this.lifetimeSeconds,
    });
    return {
      deviceCode,
      authUrl: this.links.console(`/device?code=${deviceCode}`),
      pollInterval: this.pollIntervalSeconds,
      expiresIn: this.lifetimeSeconds,
    };
  }

  /** The info endpoint: what the approver is shown. Unknown codes are 404 `not_found`. */
  async describe(deviceCode: string | null | undefined): Promise<DeviceAuthorizationView> {
    const code = this.code(deviceCode, () => missingFields(['device_code']));
    const row = await this.find(code);
    if (!row) throw unknownCode();
    return view(row, code);
  }

  /**
   * Approves (any `action` but `deny`, in any letter case) or denies a pending code for the
   * approver's tenant. Collector credentials cannot approve: a device's own key must not let it
   * enrol further devices.
   */
  async decide(
    session: Session,
    deviceCode: string | null | undefined,
    action: string | null | undefined,
  ): Promise<{ status: 'approved' | 'denied' }> {
    const code = this.code(deviceCode, () => missingFields(['device_code']));
    if (await this.store.isEnrolmentCredential(session.claims.clientId)) {
      throw authorizationError('Collector credentials cannot approve devices', { reason: 'enrolment_credential' });
    }
    const status: 'approved' | 'denied' = action?.trim().toLowerCase() === 'deny' ? 'denied' : 'approved';
    const hash = hashDeviceCode(code);
    const decided = await this.store.decide(hash, { status, customerId: session.customerId, decidedBy: session.claims.clientId });
    if (!decided) {
      const current = await this.find(code);
      if (!current) throw unknownCode();
      throw notPending(current.status);
    }
    this.logger.info('device_auth.decided', { id: decided.id, status, customerId: session.customerId, clientId: session.claims.clientId });
    await this.announce(decided);
    await this.events.record({
      customerId: session.customerId,
      topic: 'device_approvals',
      kind: status === 'approved' ? 'device_approved' : 'device_denied',
      subject: decided.id,
      data: { device_authorization_id: decided.id, hostname: decided.hostname, machine_id: decided.machineId, node_id: decided.nodeId, decided_by: session.claims.clientId },
    });
    return { status };
  }

  /** The device's poll. Unknown codes poll as `expired`; the key travels once. */
  async poll(deviceCode: string | null | undefined): Promise<DevicePoll> {
    const hash = hashDeviceCode(this.code(deviceCode, pollError));
    const polled = await this.store.recordPoll(hash, this.pollIntervalSeconds);
    const answer = { accessKey: null, slowDown: false, pollInterval: this.pollIntervalSeconds };
    if (!polled || !sameCodeHash(polled.row.codeHash, hash)) return { ...answer, status: 'expired', nodeId: null };
    const { row, tooFast } = polled;
    const result: DevicePoll = { ...answer, status: row.status, nodeId: row.nodeId, slowDown: tooFast };
    if (row.status === 'approved' && row.keyDeliveredAt === null && row.customerId) {
      result.accessKey = await this.mintKey(row, row.customerId);
    }
    return result;
  }

  /**
   * The live status for a subscription: the current state at once, then every change from any
   * process, and `expired` when the lifetime runs out; it ends after a final state. Resolves
   * only once listening, so no change between the first read and the subscription is lost.
   */
  async watch(deviceCode: string | null | undefined): Promise<AsyncIterableIterator<DeviceAuthorizationView>> {
    const code = this.code(deviceCode, () => missingFields(['device_code']));
    const first = await this.find(code);
    if (!first) throw unknownCode();

    let timer: NodeJS.Timeout | undefined;
    let lastStatus: DeviceStatus | undefined;
    let closed = false;
    let unsubscribe = () => {};
    const stream: EventStream<DeviceAuthorizationView> = eventStream(() => {
      closed = true;
      clearTimeout(timer);
      unsubscribe();
    });
    // Re-reads are chained so that they emit in order, whatever order notifications and the timer fire.
    let chain = Promise.resolve();
    const refresh = () => {
      chain = chain
        .then(async () => {
          if (closed) return;
          const row = await this.store.findById(first.id);
          if (closed) return;
          if (!row) return stream.end();
          if (row.status !== lastStatus) {
            lastStatus = row.status;
            stream.push(view(row, code));
          }
          clearTimeout(timer);
          if (row.status !== 'pending') return stream.end();
          // At expiry, read again: the database's clock decides, and a late tick just re-arms.
          timer = setTimeout(refresh, Math.max(row.expiresAt.getTime() - Date.now(), 0) + 50);
          timer.unref();
        })
        .catch((error) => {
          this.logger.error('device_auth.watch_failed', { id: first.id, error });
          stream.end();
        });
    };
    unsubscribe = await this.pubsub.subscribe(deviceAuthorizationChanged, (event) => {
      if (event.id === first.id) refresh();
    });
    refresh();
    return stream.iterator;
  }

  private async mintKey(row: DeviceAuthorizationRow, customerId: string): Promise<string | null> {
    const clientId = generateClientId();
    const secret = generateSecret();
    const delivered = await this.store.deliverKey(row.id, {
      clientId,
      secretHash: hashSecret(secret),
      customerId,
      scopes: [Scopes.ingest],
      machineId: row.machineId,
      description: `device flow: ${row.hostname}`,
    });
    if (!delivered) return null;
    this.logger.info('device_auth.key_delivered', { id: row.id, customerId, clientId });
    return `${clientId}.${secret}`;
  }

  /** A normalized code, or the documented error when absent; malformed input is a 400. */
  private code(deviceCode: string | null | undefined, absent: () => DomainError): string {
    const code = given(deviceCode);
    if (!code) throw absent();
    if (code.length > MAX_DEVICE_CODE_LENGTH) {
      throw badRequest('invalid_request', `device_code must be at most ${MAX_DEVICE_CODE_LENGTH} characters`);
    }
    return normalizeDeviceCode(code);
  }

  private async find(code: string): Promise<DeviceAuthorizationRow | undefined> {
    const hash = hashDeviceCode(code);
    const row = await this.store.findByHash(hash);
    return row && sameCodeHash(row.codeHash, hash) ? row : undefined;
  }

  private async announce(row: DeviceAuthorizationRow): Promise<void> {
    try {
      await this.pubsub.publish(deviceAuthorizationChanged, { id: row.id, status: row.status });
    } catch (error) {
      // The decision is committed; live watchers miss it until they re-read (poll and info stay true).
      this.logger.error('device_auth.announce_failed', { id: row.id, error });
    }
  }
}

const view = (row: DeviceAuthorizationRow, deviceCode: string): DeviceAuthorizationView => ({
  deviceCode,
  hostname: row.hostname,
  machineId: row.machineId,
  nodeId: row.nodeId,
  status: row.status,
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
});
