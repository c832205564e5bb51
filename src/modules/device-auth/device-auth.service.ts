import { Scopes } from '../../auth/scopes.js';
import { generateClientId, generateSecret, hashSecret } from '../../auth/secrets.js';
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError, badRequest, notFound } from '../../errors.js';
import { newId } from '../../infra/ids.js';
import type { PublicLinks } from '../../infra/links.js';
import type { Logger } from '../../infra/logger.js';
import type { RateLimiter, RequestOrigin } from '../../infra/rate-limits.js';
import { nameProblem } from '../../infra/text.js';
import { type EventStream, type PubSub, eventStream, topic } from '../../infra/pubsub.js';
import { type EventRecorder, noEvents } from '../events/events.service.js';
import {
  MAX_DEVICE_CODE_LENGTH,
  USER_CODE_PATTERN,
  formatUserCode,
  generateDeviceCode,
  generateUserCode,
  hashDeviceCode,
  hashUserCode,
  normalizeDeviceCode,
  normalizeUserCode,
  sameCodeHash,
} from './device-code.js';
import type { DeviceAuthorizationRow, DeviceAuthorizationStore, DeviceStatus, EnrolledNode } from './device-auth.store.js';

/** Defaults of api-spec.md section 8's two device limits; DEVICE_CODE_TTL_SECONDS and DEVICE_POLL_INTERVAL_SECONDS override them. */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** How long an approved authorization outlives its expiry before the purge deletes it: the device may collect its key late. */
export const APPROVED_RETENTION_SECONDS = 86_400;
const MAX_TEXT = 255;

/** Every decision, from any process; subscribers re-read the row, so the payload stays tiny. */
export const deviceAuthorizationChanged = topic<{ id: string; status: DeviceStatus }>('device_authorization_changed');

export interface DeviceAuthorizationView {
  /** The device code, when that is what it was looked up by; never revealed otherwise. */
  deviceCode: string | null;
  /** `XXXX-XXXX`, when looked up by the user code (only its hash is stored). */
  userCode: string | null;
  /** The row, for the approver-only `enrolledNode` question. */
  id: string;
  hostname: string;
  machineId: string;
  nodeId: string | null;
  status: DeviceStatus;
  createdAt: Date;
  expiresAt: Date;
}

export interface DeviceGrant {
  deviceCode: string;
  /** `XXXX-XXXX`: the device shows it; `authUrl` carries it. */
  userCode: string;
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
const noCode = () =>
  new DomainError(400, 'missing_required_fields', 'Missing required fields: user_code (or device_code)', {
    details: { fields: ['user_code'] },
  });
/** Drawing a used user code again is a 1-in-10^6 event even with 25,000 live codes; three tries make a failure practically impossible. */
const USER_CODE_ATTEMPTS = 3;

/** How the approval side names an authorization: by the user code (the page), or by the device code (api-spec.md). */
export interface DeviceLookup {
  userCode?: string | null;
  deviceCode?: string | null;
}

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
 * code is 160 random bits, handed out once, kept by the device and stored only as its SHA-256;
 * the approval side names the authorization by its short user code (also stored hashed), which
 * can never poll. The device's credential is minted on its first poll after approval, exactly once.
 */
export class DeviceAuthService {
  readonly lifetimeSeconds: number;
  readonly pollIntervalSeconds: number;

  constructor(
    private readonly store: DeviceAuthorizationStore,
    private readonly pubsub: PubSub,
    private readonly links: PublicLinks,
    private readonly logger: Logger,
    private readonly limiter: RateLimiter,
    options: DeviceAuthOptions = {},
    private readonly events: EventRecorder = noEvents,
  ) {
    this.lifetimeSeconds = options.lifetimeSeconds ?? DEVICE_CODE_LIFETIME_SECONDS;
    this.pollIntervalSeconds = options.pollIntervalSeconds ?? DEVICE_POLL_INTERVAL_SECONDS;
  }

  async start(input: { hostname?: string | null; machineId?: string | null; nodeId?: string | null }, origin: RequestOrigin): Promise<DeviceGrant> {
    await this.limiter.take('device_start', origin);
    const fields = { hostname: given(input.hostname), machine_id: given(input.machineId), node_id: given(input.nodeId) };
    const { hostname, node_id: nodeId } = fields;
    // node_id is an alias: when given, it is also the machine id.
    const machineId = nodeId ?? fields.machine_id;
    if (!hostname || !machineId) throw startError();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) checkText(name, value);

    const deviceCode = generateDeviceCode();
    for (let attempt = 0; attempt < USER_CODE_ATTEMPTS; attempt++) {
      const userCode = generateUserCode();
      const created = await this.store.insert({
        id: newId('dva'),
        codeHash: hashDeviceCode(deviceCode),
        userCodeHash: hashUserCode(userCode),
        hostname,
        machineId,
        nodeId: nodeId ?? null,
        lifetimeSeconds: this.lifetimeSeconds,
      });
      if (!created) continue;
      const shown = formatUserCode(userCode);
      return {
        deviceCode,
        userCode: shown,
        // RFC 8628's verification_uri_complete: the user code only, so the link cannot poll.
        authUrl: this.links.console(`/device?user_code=${shown}`),
        pollInterval: this.pollIntervalSeconds,
        expiresIn: this.lifetimeSeconds,
      };
    }
    throw new Error(`no free user code in ${USER_CODE_ATTEMPTS} draws`);
  }

  /** The info endpoint: what the approver is shown. Unknown codes are 404 `not_found`. */
  async describe(lookup: DeviceLookup, origin: RequestOrigin): Promise<DeviceAuthorizationView> {
    await this.limiter.take('device_lookup', origin);
    const found = await this.lookUp(lookup);
    if (!found) throw unknownCode();
    return found;
  }

  /**
   * The managed node of the approver's tenant that already has this device's machine id: approving
   * would hand that node's identity to the device, so the page warns. Nothing without a session.
   */
  async enrolledNode(session: Session | undefined, device: DeviceAuthorizationView): Promise<EnrolledNode | null> {
    if (!session) return null;
    return (await this.store.enrolledNode(session.customerId, device.machineId)) ?? null;
  }

  /**
   * Approves (any `action` but `deny`, in any letter case) or denies a pending code for the
   * approver's tenant. Collector credentials cannot approve: a device's own key must not let it
   * enrol further devices.
   */
  async decide(session: Session, lookup: DeviceLookup, action: string | null | undefined, origin: RequestOrigin): Promise<{ status: 'approved' | 'denied' }> {
    session.assert('devices.approve');
    // A decision is a lookup too: with any token, guessing user codes would approve strangers' devices.
    await this.limiter.take('device_lookup', origin);
    const target = await this.lookUp(lookup);
    if (!session.person && (await this.store.isEnrolmentCredential(session.claims.clientId))) {
      throw authorizationError('Collector credentials cannot approve devices', { reason: 'enrolment_credential' });
    }
    if (!target) throw unknownCode();
    const status: 'approved' | 'denied' = action?.trim().toLowerCase() === 'deny' ? 'denied' : 'approved';
    const decided = await this.store.decide(target.id, { status, customerId: session.customerId, decidedBy: session.actor });
    if (!decided) {
      const current = await this.store.findById(target.id);
      if (!current) throw unknownCode();
      throw notPending(current.status);
    }
    this.logger.info('device_auth.decided', { id: decided.id, status, customerId: session.customerId, actor: session.actor });
    await this.announce(decided);
    await this.events.record({
      customerId: session.customerId,
      topic: 'device_approvals',
      kind: status === 'approved' ? 'device_approved' : 'device_denied',
      subject: decided.id,
      data: {
        device_authorization_id: decided.id,
        hostname: decided.hostname,
        machine_id: decided.machineId,
        node_id: decided.nodeId,
        decided_by: session.actor.id,
        decided_by_kind: session.actor.kind,
      },
    });
    return { status };
  }

  /** The device's poll. Unknown codes poll as `expired`; the key travels once. */
  async poll(deviceCode: string | null | undefined, origin: RequestOrigin): Promise<DevicePoll> {
    await this.limiter.take('device_poll', origin);
    const hash = hashDeviceCode(this.deviceCode(deviceCode, pollError));
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
  async watch(lookup: DeviceLookup, origin: RequestOrigin): Promise<AsyncIterableIterator<DeviceAuthorizationView>> {
    await this.limiter.take('device_lookup', origin);
    const first = await this.lookUp(lookup);
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
            stream.push({ ...view(row), deviceCode: first.deviceCode, userCode: first.userCode });
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

  /** The scheduled purge (docs/device-flow.md): rows that can no longer change or be collected. */
  purgeExpired(): Promise<number> {
    return this.store.purgeExpired(APPROVED_RETENTION_SECONDS);
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

  /** A normalized code, or the documented error when absent; overlong input is a 400. */
  private deviceCode(deviceCode: string | null | undefined, absent: () => DomainError): string {
    return normalizeDeviceCode(bounded('device_code', given(deviceCode), absent));
  }

  /**
   * The approval side's lookup: by user code when given, else by device code. A user code that
   * cannot be one (wrong length or letters) is unknown without a query.
   */
  private async lookUp(lookup: DeviceLookup): Promise<DeviceAuthorizationView | undefined> {
    const userCode = given(lookup.userCode);
    if (userCode) {
      const normalized = normalizeUserCode(bounded('user_code', userCode, noCode));
      if (!USER_CODE_PATTERN.test(normalized)) return undefined;
      const hash = hashUserCode(normalized);
      const row = await this.store.findByUserCodeHash(hash);
      if (!row?.userCodeHash || !sameCodeHash(row.userCodeHash, hash)) return undefined;
      return { ...view(row), userCode: formatUserCode(normalized) };
    }
    const code = this.deviceCode(lookup.deviceCode, noCode);
    const hash = hashDeviceCode(code);
    const row = await this.store.findByHash(hash);
    return row && sameCodeHash(row.codeHash, hash) ? { ...view(row), deviceCode: code } : undefined;
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

/** Codes longer than any real one are refused as malformed before anything is hashed. */
function bounded(name: string, code: string | undefined, absent: () => DomainError): string {
  if (!code) throw absent();
  if (code.length > MAX_DEVICE_CODE_LENGTH) throw badRequest('invalid_request', `${name} must be at most ${MAX_DEVICE_CODE_LENGTH} characters`);
  return code;
}

/** What any holder of a code may see; the codes themselves are added by the lookup that found it. */
const view = (row: DeviceAuthorizationRow): DeviceAuthorizationView => ({
  id: row.id,
  deviceCode: null,
  userCode: null,
  hostname: row.hostname,
  machineId: row.machineId,
  nodeId: row.nodeId,
  status: row.status,
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
});
