// The device flow from the device's side (api-spec.md 3, docs/device-flow.md): ask to join,
// show the approval URL, poll until an operator decides, and keep the access key.

import { Backoff, retryAfterMs, sleep } from './backoff.js';
import { type Fetch, TransportError, errorText, joinUrl, request } from './http.js';
import type { Logger } from './logring.js';

export const DEVICE_START_PATH = '/rest/oauth2/device/1.0';
export const DEVICE_POLL_PATH = '/rest/oauth2/device/poll/1.0';

/** RFC 8628 3.5: each slow_down adds 5 s to the interval. */
const SLOW_DOWN_STEP_MS = 5_000;
/** A poll_interval of 0 still waits this long between polls. */
const MIN_POLL_MS = 200;

export interface DeviceStart {
  device_code: string;
  /** `XXXX-XXXX`, shown to the operator on the approval page too; absent from older services. */
  user_code?: string;
  auth_url: string;
  poll_interval: number;
  expires_in: number;
}

export interface EnrollOptions {
  baseUrl: string;
  hostname: string;
  machineId: string;
  logger: Logger;
  /** Called once with the approval URL, before polling starts. */
  onAuthUrl?(start: DeviceStart): void;
  signal?: AbortSignal;
  fetch?: Fetch;
  /** Added to the interval at each slow_down; default 5000 (RFC 8628 3.5). */
  slowDownStepMs?: number;
}

export interface Enrolled {
  status: 'approved';
  accessKey: string;
  nodeId?: string;
}

export type EnrollFailure = 'denied' | 'expired' | 'key_taken' | 'refused' | 'aborted';

export class EnrollError extends Error {
  constructor(
    readonly status: EnrollFailure,
    message: string,
  ) {
    super(message);
  }
}

export async function enroll(options: EnrollOptions): Promise<Enrolled> {
  const { logger, signal } = options;
  const start = await startAuthorization(options);
  logger.info('enroll.started', { auth_url_host: new URL(start.auth_url).host, poll_interval: start.poll_interval, expires_in: start.expires_in });
  options.onAuthUrl?.(start);

  let intervalMs = Math.max(MIN_POLL_MS, start.poll_interval * 1000);
  // The service decides expiry; the local deadline only guards against a service that never answers.
  const giveUpAt = Date.now() + start.expires_in * 1000 + Math.max(30_000, 2 * intervalMs);
  const backoff = new Backoff({ initialMs: intervalMs, maxMs: 30_000 });
  let waitMs = intervalMs;
  for (;;) {
    await sleep(waitMs + 50, signal); // a little over the interval, so timer jitter never polls early
    if (signal?.aborted) throw new EnrollError('aborted', 'enrolment was interrupted');
    if (Date.now() > giveUpAt) throw new EnrollError('expired', 'the authorization expired before an operator approved it');
    let res;
    try {
      res = await request(joinUrl(options.baseUrl, DEVICE_POLL_PATH), {
        json: { device_code: start.device_code },
        timeoutMs: 15_000,
        signal,
        fetch: options.fetch,
      });
    } catch (error) {
      waitMs = Math.max(intervalMs, backoff.next());
      logger.warn('enroll.poll_unreachable', { error: (error as Error).message, retry_in_ms: waitMs });
      continue;
    }
    const hinted = retryAfterMs(res.headers.get('retry-after'));
    if (res.status === 429 || res.status >= 500) {
      waitMs = Math.max(intervalMs, hinted ?? backoff.next());
      logger.warn('enroll.poll_failed', { status: res.status, error: errorText(res), retry_in_ms: waitMs });
      continue;
    }
    if (res.status !== 200) throw new EnrollError('refused', `the service refused the poll (${errorText(res)})`);
    backoff.reset();
    const body = (res.body ?? {}) as { status?: unknown; access_key?: unknown; node_id?: unknown; slow_down?: unknown };
    if (body.slow_down === true) {
      intervalMs += options.slowDownStepMs ?? SLOW_DOWN_STEP_MS;
      logger.warn('enroll.slow_down', { interval_ms: intervalMs });
    }
    waitMs = Math.max(intervalMs, hinted ?? 0);
    switch (body.status) {
      case 'pending':
        logger.debug('enroll.pending');
        continue;
      case 'approved':
        if (typeof body.access_key !== 'string' || !body.access_key) {
          throw new EnrollError('key_taken', 'approved, but the access key was already collected by another poll of this code; start again');
        }
        logger.info('enroll.approved', { node_id: body.node_id ?? null });
        return { status: 'approved', accessKey: body.access_key, ...(typeof body.node_id === 'string' ? { nodeId: body.node_id } : {}) };
      case 'denied':
        throw new EnrollError('denied', 'an operator denied this device');
      case 'expired':
        throw new EnrollError('expired', 'the authorization expired before an operator approved it');
      default:
        logger.warn('enroll.unknown_status', { status: body.status });
    }
  }
}

async function startAuthorization(options: EnrollOptions): Promise<DeviceStart> {
  const backoff = new Backoff({ initialMs: 1_000, maxMs: 10_000 });
  for (let attempt = 1; ; attempt++) {
    let res;
    try {
      res = await request(joinUrl(options.baseUrl, DEVICE_START_PATH), {
        json: { hostname: options.hostname, machine_id: options.machineId },
        timeoutMs: 15_000,
        signal: options.signal,
        fetch: options.fetch,
      });
    } catch (error) {
      if (attempt >= 5 || options.signal?.aborted) throw error;
      options.logger.warn('enroll.start_unreachable', { error: (error as TransportError).message, attempt });
      await sleep(backoff.next(), options.signal);
      continue;
    }
    if (res.status >= 500 && attempt < 5) {
      await sleep(retryAfterMs(res.headers.get('retry-after')) ?? backoff.next(), options.signal);
      continue;
    }
    const body = res.body as Partial<DeviceStart> | undefined;
    if (res.status !== 200 && res.status !== 201) throw new EnrollError('refused', `the service refused to start the device flow (${errorText(res)})`);
    if (typeof body?.device_code !== 'string' || typeof body.auth_url !== 'string') {
      throw new EnrollError('refused', 'the service answered the device start without device_code/auth_url');
    }
    return {
      device_code: body.device_code,
      ...(typeof body.user_code === 'string' && { user_code: body.user_code }),
      auth_url: body.auth_url,
      poll_interval: Number(body.poll_interval) >= 0 ? Number(body.poll_interval) : 5,
      expires_in: Number(body.expires_in) > 0 ? Number(body.expires_in) : 600,
    };
  }
}
