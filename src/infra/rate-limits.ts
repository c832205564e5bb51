import { DomainError } from '../errors.js';
import { plausibleId } from './ids.js';
import type { RateLimitCounters } from './rate-limits.store.js';

/** The anonymous doors that are counted (README, Configuration; docs/device-flow.md, Rate limits). */
export type RateLimitedDoor = 'token' | 'device_start' | 'device_lookup' | 'device_poll' | 'sign_in';

export interface DoorLimits {
  /** Requests per window from one address (an IPv6 /64 counts as one); 0: unlimited. */
  perAddress: number;
  /** Requests per window naming one client_id (token endpoint only); 0: unlimited. */
  perClient: number;
}

export interface RateLimitSettings {
  windowSeconds: number;
  doors: Record<RateLimitedDoor, DoorLimits>;
}

/** Where a request came from: the socket's peer (src/infra/client-address.ts). */
export interface RequestOrigin {
  address: string;
}

const MAX_SHUT_BUCKETS = 10_000;
const secondsUntil = (until: number) => Math.max(1, Math.ceil((until - Date.now()) / 1000));

const WHAT: Record<RateLimitedDoor, string> = {
  token: 'token requests',
  device_start: 'device authorization starts',
  device_lookup: 'device authorization lookups',
  device_poll: 'device polls',
  sign_in: 'sign-in attempts',
};

/** A 429 in the documented `{error, code, message}` shape, with the wait in `Retry-After`. */
export const rateLimited = (door: RateLimitedDoor, by: 'address' | 'client_id', retryAfterSeconds: number) =>
  new DomainError(429, 'rate_limited', `Too many ${WHAT[door]} from this ${by}; retry in ${retryAfterSeconds} s`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/**
 * Fixed-window limits on the endpoints anyone can call, counted in PostgreSQL so that every server
 * process shares them (an in-process counter would allow N times the limit with N processes); in
 * embedded mode, which is one process, in memory. A request over a limit is refused before any
 * work is done. Once a bucket is over, this process refuses it until its window ends without
 * counting again (a count never falls within a window), so hammering a shut door costs no SQL.
 */
export class RateLimiter {
  /** Buckets known to be over their limit, with the end of their window (ms). */
  private readonly shut = new Map<string, { until: number; by: 'address' | 'client_id' }>();

  constructor(
    private readonly counters: RateLimitCounters,
    readonly settings: RateLimitSettings,
  ) {}

  /** Counts one request; throws 429 `rate_limited` when its address or its client_id is over the limit. */
  async take(door: RateLimitedDoor, origin: RequestOrigin, clientId?: string | null): Promise<void> {
    const { perAddress, perClient } = this.settings.doors[door];
    if (perAddress === 0 && perClient === 0) return;
    // Only ids that could name a client get a bucket; anything else is refused by the door itself.
    const client = perClient > 0 && typeof clientId === 'string' && plausibleId(clientId) ? `${door}:c:${clientId}` : null;
    const address = `${door}:a:${origin.address}`;
    for (const bucket of [address, client]) {
      const known = bucket === null ? undefined : this.shut.get(bucket);
      if (known && known.until > Date.now()) throw rateLimited(door, known.by, secondsUntil(known.until));
    }
    const counts = await this.counters.count(this.settings.windowSeconds, address, perAddress, client);
    const until = Date.now() + counts.secondsLeft * 1000;
    if (perAddress > 0 && counts.addressHits > perAddress) throw this.shutOut(door, address, 'address', until);
    if (client && counts.clientHits !== null && counts.clientHits > perClient) throw this.shutOut(door, client, 'client_id', until);
  }

  private shutOut(door: RateLimitedDoor, bucket: string, by: 'address' | 'client_id', until: number): DomainError {
    // Bounded: under a flood of distinct callers, forgetting only means asking the database again.
    if (this.shut.size >= MAX_SHUT_BUCKETS) this.shut.clear();
    this.shut.set(bucket, { until, by });
    return rateLimited(door, by, secondsUntil(until));
  }

  /** Drops the counters of ended windows, and this process's memory of shut ones (the scheduled purge). */
  purge(): Promise<number> {
    const now = Date.now();
    for (const [bucket, { until }] of this.shut) if (until <= now) this.shut.delete(bucket);
    return this.counters.purge(this.settings.windowSeconds);
  }
}
