// The state directory: what survives a restart of the collector. Everything in it is private to
// the user running the collector (directory 0700, files 0600), since it holds the access key.
//
//   access_key   the long-lived credential `<client_id>.<client_secret>`, one line
//   state.json   base_url, machine_id, hostname, node_id, enrolled_at, collector_version
//                (set by an `update`), update_channel (set by the node's profile)

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredState {
  base_url?: string;
  machine_id?: string;
  hostname?: string;
  node_id?: string;
  enrolled_at?: string;
  /** The version an `update` installed; reported in the next `hello`. */
  collector_version?: string;
  update_channel?: string;
}

/** $PROPHET_STATE_DIR, else $XDG_STATE_HOME/prophet-collector, else ~/.local/state/prophet-collector. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PROPHET_STATE_DIR) return env.PROPHET_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'prophet-collector');
  return join(homedir(), '.local', 'state', 'prophet-collector');
}

export class StateDir {
  constructor(readonly dir: string) {}

  get accessKeyPath(): string {
    return join(this.dir, 'access_key');
  }

  get statePath(): string {
    return join(this.dir, 'state.json');
  }

  readAccessKey(): string | undefined {
    return readOptional(this.accessKeyPath)?.trim() || undefined;
  }

  writeAccessKey(key: string): void {
    this.writePrivate(this.accessKeyPath, key + '\n');
  }

  read(): StoredState {
    const text = readOptional(this.statePath);
    if (!text) return {};
    try {
      const parsed = JSON.parse(text) as unknown;
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as StoredState) : {};
    } catch {
      return {};
    }
  }

  /** Merges `patch` into state.json (undefined values leave a field as it is). */
  update(patch: StoredState): StoredState {
    const next = { ...this.read() };
    for (const [key, value] of Object.entries(patch)) if (value !== undefined) (next as Record<string, unknown>)[key] = value;
    this.writePrivate(this.statePath, JSON.stringify(next, null, 2) + '\n');
    return next;
  }

  /** Written whole to a temporary file and renamed, so a crash never leaves half a key. */
  private writePrivate(path: string, content: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, content, { mode: 0o600 });
    chmodSync(tmp, 0o600); // the umask cannot widen it, but an existing tmp file kept its mode
    renameSync(tmp, path);
  }
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
