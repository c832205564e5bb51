import type pg from 'pg';

/** One request's counts in the current window; `clientHits` is null when no client bucket was counted. */
export interface WindowCounts {
  addressHits: number;
  clientHits: number | null;
  secondsLeft: number;
}

// One bucket's fixed-window upsert: a row of a past window starts over at 1.
const bump = (alias: string) => `
  ON CONFLICT (bucket) DO UPDATE
     SET hits = CASE WHEN ${alias}.window_start = excluded.window_start THEN ${alias}.hits + 1 ELSE 1 END,
         window_start = excluded.window_start`;

/** Where the counters live: PostgreSQL when processes share a server, this process's memory in embedded mode. */
export interface RateLimitCounters {
  count(windowSeconds: number, addressBucket: string, addressLimit: number, clientBucket: string | null): Promise<WindowCounts>;
  purge(windowSeconds: number): Promise<number>;
}

/**
 * Embedded mode (PGlite) serves exactly one process (a second one on the same data directory is
 * refused), so counting in memory is exact there, and spares the single-threaded in-process
 * database a statement per token request. Same windows and rules as the PostgreSQL counters.
 */
export class InProcessRateLimitCounters implements RateLimitCounters {
  private readonly buckets = new Map<string, { windowStart: number; hits: number }>();

  async count(windowSeconds: number, addressBucket: string, addressLimit: number, clientBucket: string | null): Promise<WindowCounts> {
    const windowMs = windowSeconds * 1000;
    const windowStart = Math.floor(Date.now() / windowMs) * windowMs;
    const bump = (bucket: string) => {
      const entry = this.buckets.get(bucket);
      const hits = entry?.windowStart === windowStart ? entry.hits + 1 : 1;
      this.buckets.set(bucket, { windowStart, hits });
      return hits;
    };
    const addressHits = bump(addressBucket);
    const clientHits = clientBucket !== null && (addressLimit === 0 || addressHits <= addressLimit) ? bump(clientBucket) : null;
    return { addressHits, clientHits, secondsLeft: (windowStart + windowMs - Date.now()) / 1000 };
  }

  async purge(windowSeconds: number): Promise<number> {
    const current = Math.floor(Date.now() / (windowSeconds * 1000)) * windowSeconds * 1000;
    let purged = 0;
    for (const [bucket, entry] of this.buckets) {
      if (entry.windowStart < current && this.buckets.delete(bucket)) purged++;
    }
    return purged;
  }
}

/**
 * The counters of src/infra/rate-limits.ts in PostgreSQL, so every server process sharing the
 * database counts against the same limits. The table is UNLOGGED: a counter costs no WAL write
 * per request, and losing counts in a crash only resets the current window. A statement on every
 * token request is hot: it goes through the raw pool as a named (prepared once per connection)
 * statement, not through Prisma.
 */
export class RateLimitStore implements RateLimitCounters {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Counts one request against its address bucket and, when `clientBucket` is given and the
   * address is within `addressLimit` (0: unlimited), against its client bucket: an address already
   * refused cannot fill the table with rows for made-up client ids. One statement, one round trip.
   */
  async count(windowSeconds: number, addressBucket: string, addressLimit: number, clientBucket: string | null): Promise<WindowCounts> {
    const { rows } = await this.pool.query<WindowCounts>({
      name: 'rate_limit_count',
      text: `/* rate_limit.count */
       WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now())::float8 / $1::float8) * $1::float8) AS start),
       a AS (
         INSERT INTO rate_limit_counters AS c (bucket, window_start, hits)
         SELECT $2::text, w.start, 1 FROM w ${bump('c')}
         RETURNING hits, window_start),
       k AS (
         INSERT INTO rate_limit_counters AS c (bucket, window_start, hits)
         SELECT $4::text, a.window_start, 1 FROM a WHERE $4::text IS NOT NULL AND ($3::int = 0 OR a.hits <= $3::int) ${bump('c')}
         RETURNING hits)
       SELECT a.hits AS "addressHits", (SELECT hits FROM k) AS "clientHits",
              extract(epoch FROM a.window_start + make_interval(secs => $1::float8) - now())::float8 AS "secondsLeft"
         FROM a`,
      values: [windowSeconds, addressBucket, addressLimit, clientBucket],
    });
    return rows[0];
  }

  /** Deletes the rows of windows that have ended. */
  async purge(windowSeconds: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `/* rate_limit.purge */ DELETE FROM rate_limit_counters WHERE window_start <= now() - make_interval(secs => $1::double precision)`,
      [windowSeconds],
    );
    return rowCount ?? 0;
  }
}
