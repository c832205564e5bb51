import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { type EmbeddedPostgres, OUTBOX_POLLER, runningEmbeddedPostgresUrl, startEmbeddedPostgres } from './embedded-postgres.js';
import { applyMigrations } from './migrate.js';
import type { Logger } from './logger.js';

export type Prisma = PrismaClient<'query'>;

/**
 * PostgreSQL as the rest of the code sees it, whichever server is behind it: Prisma for the
 * model, a raw pool for the few hot or set-based statements, and LISTEN/NOTIFY so that several
 * processes sharing one database hear each other's changes.
 */
export interface Database {
  prisma: PrismaClient<'query'>;
  pool: pg.Pool;
  /** Prisma's own pool, handed to its adapter so that /metrics can show its use. */
  prismaPool: pg.Pool;
  /** Statements Prisma has sent since start, and the text of the latest 500. */
  stats: { queries: number; recent: string[] };
  url: string;
  notify(channel: string, payload: string): Promise<void>;
  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  logger: Logger;
  /** The server owns the embedded directory; the admin CLI only joins a running server. */
  role: 'server' | 'client';
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let url = options.databaseUrl;
  if (!url && options.role === 'client') url = runningEmbeddedPostgresUrl(options.dataDir);
  if (!url) {
    embedded = await startEmbeddedPostgres(options.dataDir);
    url = embedded.url;
  }
  // One connection to PGlite: it is a single backend, and one socket keeps statements unmixed.
  const poolSize = embedded ? 1 : 10;
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', (error) => options.logger.warn('postgres.pool_error', { error }));
  await applyMigrations(pool, options.logger);
  const prismaPool = new pg.Pool({ connectionString: url, max: poolSize });
  const prisma = new PrismaClient({
    adapter: new PrismaPg(prismaPool, { disposeExternalPool: true }),
    log: [{ emit: 'event', level: 'query' }],
  });
  const stats = { queries: 0, recent: [] as string[] };
  // Counted (and the latest kept) so that tests can prove a list resolves in a constant number
  // of statements, whatever else runs in the background.
  prisma.$on('query', (e) => {
    stats.queries++;
    stats.recent.push(e.query);
    if (stats.recent.length > 500) stats.recent.splice(0, stats.recent.length - 500);
  });
  const listener = embedded ? outboxListener(url, embedded.activity, options.logger) : await clientListener(url, options.logger);

  return {
    prisma,
    pool,
    prismaPool,
    url,
    stats,
    async notify(channel, payload) {
      await pool.query('SELECT app_notify($1, $2)', [channel, payload]);
    },
    listen: listener.listen,
    async close() {
      await listener.close();
      await prisma.$disconnect();
      await pool.end();
      await embedded?.close();
    },
  };
}

interface Listener {
  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Embedded mode: every process's notifications land in the `_notifications` outbox (see the
 * foundation migration), which the owning server polls on a connection of its own. A poll runs
 * only when another connection has run a statement since the previous one began (`activity`):
 * polling an idle PGlite 20 times a second cost the event loop 10–45 ms a second, in WASM on the
 * main thread, beside every request. Rows older than a minute are pruned.
 */
export function outboxListener(url: string, activity: () => number, logger: Logger, intervalMs = 50): Listener {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let client: pg.Client | undefined;
  let lastId: string | undefined;
  let polledAt: number | undefined;
  let polls = 0;
  let running = false;
  const query = async <R extends pg.QueryResultRow>(sql: string, values?: unknown[]) => {
    if (!client) {
      const next = new pg.Client({ connectionString: url, application_name: OUTBOX_POLLER });
      next.on('error', () => {
        if (client === next) client = undefined;
      });
      await next.connect();
      client = next;
    }
    return client.query<R>(sql, values);
  };
  const poll = async () => {
    if (running) return;
    const seen = activity();
    if (seen === polledAt) return;
    running = true;
    try {
      if (lastId === undefined) {
        const { rows } = await query<{ id: string | null }>('SELECT max(id)::text AS id FROM _notifications');
        lastId = rows[0]!.id ?? '0';
      }
      const { rows } = await query<{ id: string; channel: string; payload: string }>(
        'SELECT id::text, channel, payload FROM _notifications WHERE id > $1 ORDER BY id LIMIT 1000',
        [lastId],
      );
      for (const row of rows) {
        lastId = row.id;
        handlers.get(row.channel)?.forEach((handler) => handler(row.payload));
      }
      // A full batch may have left rows behind: poll again at the next tick.
      if (rows.length < 1000) polledAt = seen;
      if (++polls % 1200 === 0) await query("DELETE FROM _notifications WHERE created_at < now() - interval '1 minute'");
    } catch (error) {
      logger.warn('postgres.outbox_poll_failed', { error });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void poll(), intervalMs);
  timer.unref();
  return {
    async listen(channel, handler) {
      await poll();
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      return async () => {
        set.delete(handler);
      };
    },
    async close() {
      clearInterval(timer);
      while (running) await new Promise((r) => setTimeout(r, 5));
      await client?.end().catch(() => undefined);
    },
  };
}

/** One dedicated connection carries every LISTEN of this process; it reconnects if dropped. */
async function clientListener(url: string, logger: Logger): Promise<Listener> {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let client: pg.Client | undefined;
  let closed = false;

  const connect = async () => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (n) => handlers.get(n.channel)?.forEach((h) => h(n.payload ?? '')));
    next.on('error', (error) => {
      logger.warn('postgres.listener_error', { error });
      client = undefined;
      if (!closed) setTimeout(() => void connect().catch(() => undefined), 500);
    });
    await next.connect();
    for (const channel of handlers.keys()) await next.query(`LISTEN ${quoteIdent(channel)}`);
    client = next;
  };
  await connect();

  return {
    async listen(channel, handler) {
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        await client?.query(`LISTEN ${quoteIdent(channel)}`);
      }
      set.add(handler);
      return async () => {
        set.delete(handler);
      };
    },
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
