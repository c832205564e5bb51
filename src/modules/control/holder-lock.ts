import { randomInt } from 'node:crypto';
import pg from 'pg';
import { newId } from '../../infra/ids.js';
import { LockSpace } from '../../infra/jobs.js';

/** The first key of these pg_advisory_lock(int, int) locks. */
const HOLDER_LOCK_SPACE = LockSpace.controlHolders;

/** A channel's session names the process holding it: `<holder key>.<channel id>`. */
export const heldSession = (holderKey: number) => `${holderKey}.${newId('chan')}`;

/**
 * The keys of the processes alive now, as text (compared with a session's prefix). Advisory locks
 * belong to one database, and a PostgreSQL server may hold several databases' locks.
 */
export const LIVE_HOLDER_KEYS_SQL = `SELECT objid::text FROM pg_locks
  WHERE locktype = 'advisory' AND classid = ${HOLDER_LOCK_SPACE} AND objsubid = 2 AND granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * This process as a holder of control channels: a random key under a session-level advisory lock,
 * on a connection of its own. PostgreSQL drops the lock with the connection (a clean stop, a
 * crash, SIGKILL), so any process can tell from pg_locks which holders are still alive, with no
 * clocks or leases. The connection asks PostgreSQL to probe it, so a vanished host is noticed
 * within about a minute rather than after the operating system's default of two hours. (Embedded
 * PGlite runs inside the one server process: its locks end with it.)
 */
export class HolderLock {
  private client: pg.Client | undefined;
  private released = false;
  /** The key of the lock held now; undefined once it is lost, until `renew` takes another. */
  key: number | undefined;

  constructor(
    private readonly url: string,
    /** The lock is gone while this process lives: its channels can no longer be vouched for. */
    private readonly onLost: (error: Error) => void,
  ) {}

  /** Takes a lock when none is held; otherwise checks that the connection holding it still answers. */
  async renew(): Promise<void> {
    if (this.client) {
      try {
        await this.client.query('SELECT 1');
        return;
      } catch (error) {
        this.lost(this.client, error as Error);
      }
    }
    if (this.released) return;
    const client = new pg.Client({ connectionString: this.url, fallback_application_name: 'control-holder', keepAlive: true, query_timeout: 10_000 });
    client.on('error', (error) => this.lost(client, error));
    try {
      await client.connect();
      await client.query('SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3');
      const key = await takeFreeKey(client);
      if (this.released) throw new Error('released while the lock was being taken');
      this.client = client;
      this.key = key;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** For good: a `renew` still under way lets go of what it takes. */
  async release(): Promise<void> {
    this.released = true;
    const client = this.client;
    this.client = undefined;
    this.key = undefined;
    await client?.end().catch(() => undefined);
  }

  private lost(client: pg.Client, error: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.key = undefined;
    void client.end().catch(() => undefined);
    this.onLost(error);
  }
}

/** Draws keys until one is free: another live process may have drawn the same. */
async function takeFreeKey(client: pg.Client): Promise<number> {
  for (;;) {
    const key = randomInt(1, 2 ** 31);
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [HOLDER_LOCK_SPACE, key]);
    if (rows[0]!.ok) return key;
  }
}
