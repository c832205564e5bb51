import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createServer } from 'node:net';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { CycleQueue } from './pglite-queue.js';

/**
 * The embedded default: PGlite (PostgreSQL compiled to WASM) on a data directory, served over
 * the PostgreSQL wire protocol on loopback so Prisma's pg adapter, raw pg queries and the admin
 * CLI all speak to it as to any PostgreSQL. Only one process may open the directory, so the
 * owner records its pid and port in `server.json`; other processes connect to that port.
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
  port: number;
}

const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner.json');

export function runningEmbeddedPostgresUrl(dataDir: string): string | undefined {
  let owner: OwnerRecord;
  try {
    owner = JSON.parse(readFileSync(ownerFile(dataDir), 'utf8')) as OwnerRecord;
  } catch {
    return undefined;
  }
  if (!isAlive(owner.pid)) return undefined;
  return connectionUrl(owner.port);
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const running = runningEmbeddedPostgresUrl(dataDir);
  if (running) {
    throw new Error(`the embedded database in ${dataDir} is already open by another process (${running})`);
  }
  const pglite = await PGlite.create(join(dataDir, 'postgres'));
  // One backend serves every socket connection, so this session setting holds for all of them.
  await pglite.exec(`SET app.notification_outbox = 'on'`);
  const queue = new CycleQueue(pglite, OUTBOX_POLLER);
  const server = await serveOverSocket(pglite, queue);
  const port = server.port;
  writeFileSync(ownerFile(dataDir), JSON.stringify({ pid: process.pid, port } satisfies OwnerRecord));
  return {
    url: connectionUrl(port),
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
async function serveOverSocket(pglite: PGlite, queue: CycleQueue): Promise<{ port: number; stop(): Promise<void> }> {
  const handlers = new Set<PGLiteSocketHandler>();
  const server = createServer((socket) => {
    const handler = new PGLiteSocketHandler({ db: pglite, closeOnDetach: true, queryQueue: queue as never } as never);
    handlers.add(handler);
    handler.addEventListener('close', () => handlers.delete(handler));
    handler.attach(socket).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    async stop() {
      for (const handler of handlers) await handler.detach(true);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function connectionUrl(port: number): string {
  return `postgresql://postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
