/**
 * How many anonymous entries one client id may leave per minute in this process, whatever the
 * token endpoint's rate limits say (they may be set to 0, unlimited): a flood of refused token
 * requests naming a real client shows in its first entries, and cannot grow the table beyond
 * ANONYMOUS_PER_CLIENT_PER_MINUTE × clients × retention.
 */
export const ANONYMOUS_PER_CLIENT_PER_MINUTE = 10;
/** Client ids tracked at once; past that the counts start over (as if a new minute began). */
const MAX_TRACKED = 10_000;
const WINDOW_MS = 60_000;

export class AnonymousAllowance {
  private windowStart = 0;
  private readonly counts = new Map<string, number>();

  /** Whether one more anonymous entry naming `clientId` may be recorded now. */
  take(clientId: string, now = Date.now()): boolean {
    if (now - this.windowStart >= WINDOW_MS || this.counts.size >= MAX_TRACKED) {
      this.windowStart = now;
      this.counts.clear();
    }
    const count = this.counts.get(clientId) ?? 0;
    if (count >= ANONYMOUS_PER_CLIENT_PER_MINUTE) return false;
    this.counts.set(clientId, count + 1);
    return true;
  }
}
