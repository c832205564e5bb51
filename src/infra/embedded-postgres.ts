import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createServer } from 'node:net';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { CycleQueue } from './pglite-queue.js';

/**
 * The embedded default: PGlite (PostgreSQL compiled to WASM) on a data directory, served over
 * the PostgreSQL wire protocol so Prisma's pg adapter, raw pg queries and the admin CLI all speak
 * to it as to any PostgreSQL. PGlite checks no password, so the door is a Unix domain socket
 * inside DATA_DIR: the directory is 0700 and the socket 0600, and only the service's own user
 * can connect (a loopback port let any local process in). Only one process may open the
 * directory, so the owner records its pid in `postgres.owner.json` (0600); other processes of
 * that user connect to the socket.
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

interface OwnerRecord {
  pid: number;
}

const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner.json');
// The name pg and libpq derive from a socket directory and the default port 5432.
const socketFile = (dataDir: string) => join(dataDir, '.s.PGSQL.5432');
// sun_path holds 108 bytes with its terminating NUL on Linux (104 on macOS); a longer path fails
// at bind with a bare EINVAL, so it is refused before with a sentence that says what to change.
const SOCKET_PATH_MAX_BYTES = 103;

export function runningEmbeddedPostgresUrl(dataDir: string): string | undefined {
  let owner: OwnerRecord;
  try {
    owner = JSON.parse(readFileSync(ownerFile(dataDir), 'utf8')) as OwnerRecord;
  } catch {
    return undefined;
  }
  if (!isAlive(owner.pid)) return undefined;
  return connectionUrl(dataDir);
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const socketPath = socketFile(dataDir);
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX_BYTES) {
    throw new Error(
      `DATA_DIR ${dataDir} is too long for the embedded database's socket ${socketPath} ` +
        `(${Buffer.byteLength(socketPath)} bytes, at most ${SOCKET_PATH_MAX_BYTES}): choose a shorter DATA_DIR or set DATABASE_URL`,
    );
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const running = runningEmbeddedPostgresUrl(dataDir);
  if (running) {
    throw new Error(`the embedded database in ${dataDir} is already open by another process (${running})`);
  }
  const pglite = await PGlite.create(join(dataDir, 'postgres'));
  // One backend serves every socket connection, so this session setting holds for all of them.
  await pglite.exec(`SET app.notification_outbox = 'on'`);
  const queue = new CycleQueue(pglite, OUTBOX_POLLER);
  const server = await serveOverSocket(pglite, queue, socketPath);
  writeFileSync(ownerFile(dataDir), JSON.stringify({ pid: process.pid } satisfies OwnerRecord), { mode: 0o600 });
  chmodSync(ownerFile(dataDir), 0o600);
  return {
    url: connectionUrl(dataDir),
    pglite,
    activity: () => queue.activity,
    async close() {
      rmSync(ownerFile(dataDir), { force: true });
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
