import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { StartError } from './start-error.js';

/**
 * The embedded engines admit one process per directory (PGlite corrupts, chDB refuses with
 * "Failed to create connection" after printing its own lines), so the process that opens one
 * records its pid beside it, in `<dir>.owner.json` (0600): another process finds it before it
 * opens anything, and says who holds the directory.
 */
const ownerFile = (dir: string) => `${dir}.owner.json`;

/** The live process that has `dir` open, if one has. */
export function liveOwner(dir: string): number | undefined {
  let pid: unknown;
  try {
    pid = (JSON.parse(readFileSync(ownerFile(dir), 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return undefined;
  }
  return typeof pid === 'number' && isAlive(pid) ? pid : undefined;
}

/**
 * Records this process as the owner of `dir`, `what` naming it in the refusal when a live process
 * already is. Returns the release, for when the directory is closed.
 */
export function claimDirectory(dir: string, what: string): () => void {
  const owner = liveOwner(dir);
  if (owner !== undefined) {
    throw new StartError(
      `DATA_DIR ${dirname(dir)} is in use: process ${owner} (another server) has its ${what} (${basename(dir)}/) open; stop it, or give this one another DATA_DIR`,
    );
  }
  writeFileSync(ownerFile(dir), JSON.stringify({ pid: process.pid }), { mode: 0o600 });
  chmodSync(ownerFile(dir), 0o600);
  return () => rmSync(ownerFile(dir), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
