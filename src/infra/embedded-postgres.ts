import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createServer } from 'node:net';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { claimDirectory, liveOwner } from './directory-owner.js';
import { CycleQueue } from './pglite-queue.js';
import { StartError } from './start-error.js';

/**
 * The embedded default: PGlite (PostgreSQL compiled to WASM) on a data directory, served over
 * the PostgreSQL wire protocol so Prisma's pg adapter, raw pg queries and the admin CLI all speak
 * to it as to any PostgreSQL. PGlite checks no password, so the door is a Unix domain socket
 * inside DATA_DIR: the directory is 0700 and the socket 0600, and only the service's own user
 * can connect (a loopback port let any local process in). Only one process may open the
 * directory, so the owner records its pid in `postgres.owner.json` (directory-owner.ts); other
 * processes of that user connect to the socket.
 */
export interface EmbeddedPostgres {
  url: string;
  pglite: PGlite;
  /**
   * Statements run since start by every connection but the notification outbox's poller (its
   * `application_name` is OUTBOX_POLLER): while it stands still, nobody can have notified.
   */
  activity(): number;
  close(): Promise<void>;
}

/** `application_name` of the connection that polls the notification outbox (database.ts). */
export const OUTBOX_POLLER = 'notification-outbox-poller';

const pgliteDir = (dataDir: string) => join(dataDir, 'postgres');
// The name pg and libpq derive from a socket directory and the default port 5432.
const socketFile = (dataDir: string) => join(dataDir, '.s.PGSQL.5432');
// sun_path holds 108 bytes with its terminating NUL on Linux (104 on macOS); a longer path fails
// at bind with a bare EINVAL, so it is refused before with a sentence that says what to change.
const SOCKET_PATH_MAX_BYTES = 103;

export function runningEmbeddedPostgresUrl(dataDir: string): string | undefined {
  return liveOwner(pgliteDir(dataDir)) === undefined ? undefined : connectionUrl(dataDir);
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const socketPath = socketFile(dataDir);
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX_BYTES) {
    throw new StartError(
      `DATA_DIR ${dataDir} is too long for the embedded database's socket ${socketPath} ` +
        `(${Buffer.byteLength(socketPath)} bytes, at most ${SOCKET_PATH_MAX_BYTES}): choose a shorter DATA_DIR or set DATABASE_URL`,
    );
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  // Claimed before PGlite opens the directory: a second server stops here, with nothing opened,
  // and an admin CLI started meanwhile fails to connect instead of opening the directory too.
  const release = claimDirectory(pgliteDir(dataDir), 'embedded PostgreSQL');
  let pglite: PGlite | undefined;
  let queue: CycleQueue;
  let server: { stop(): Promise<void> };
  try {
    pglite = await PGlite.create(pgliteDir(dataDir));
    // One backend serves every socket connection, so this session setting holds for all of them.
    await pglite.exec(`SET app.notification_outbox = 'on'`);
    queue = new CycleQueue(pglite, OUTBOX_POLLER);
    server = await serveOverSocket(pglite, queue, socketPath);
  } catch (error) {
    await pglite?.close();
    release();
    throw error;
  }
  return {
    url: connectionUrl(dataDir),
    pglite,
    activity: () => queue.activity,
    async close() {
      release();
      await server.stop();
      await pglite.close();
    },
  };
}

/**
 * pglite-socket's connection handler over our own queue (see CycleQueue): many connections — the
 * server's pools, the admin CLI — share the one backend without their statements interleaving.
 */
async function serveOverSocket(pglite: PGlite, queue: CycleQueue, socketPath: string): Promise<{ stop(): Promise<void> }> {
  const handlers = new Set<PGLiteSocketHandler>();
  const server = createServer((socket) => {
    const handler = new PGLiteSocketHandler({ db: pglite, closeOnDetach: true, queryQueue: queue as never } as never);
    handlers.add(handler);
    handler.addEventListener('close', () => handlers.delete(handler));
    handler.attach(socket).catch(() => socket.destroy());
  });
  // A socket left by a process that died is in the way; no live owner holds it (checked above).
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  return {
    async stop() {
      for (const handler of handlers) await handler.detach(true);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** pg takes a directory as `host` for a Unix socket and connects to `<host>/.s.PGSQL.5432`. */
function connectionUrl(dataDir: string): string {
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dataDir)}`;
}
